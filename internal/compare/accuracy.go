package compare

import (
	"math"
	"sync"

	"github.com/aclements/go-moremath/mathx"
	moremath "github.com/aclements/go-moremath/stats"

	"github.com/slogate/slogate/internal/stats"
)

// Accuracy against a dataset's answers (docs/method.md#correctness): one
// run's with a Wilson interval (Wilson 1927), two runs' on the same items
// paired: the discordant pairs decide, by an exact McNemar-style test
// (McNemar 1947) with a non-inferiority margin, and the items a drop needs
// are sized as TensorRT-LLM sizes its accuracy tests (a one-sided test at
// α 0.05 with power 0.8 against a stated drop).

// AccuracyPower is the power the item counts aim at, as TensorRT-LLM's
// accuracy tests do (β = 0.2).
const AccuracyPower = 0.8

// AccuracyDrop is the drop of accuracy the item counts are sized to catch:
// 3 points.
const AccuracyDrop = 0.03

// Paired is the accuracy of the same items in two runs, compared.
type Paired struct {
	// Items are the items scored on both sides; ACorrect and BCorrect the
	// right answers of each.
	Items, ACorrect, BCorrect int
	// Worse are the items A answered right and B wrong; Better the
	// reverse. Only these discordant pairs carry information on the
	// change.
	Worse, Better int
	// Diff is B's accuracy minus A's, (Better − Worse) ÷ Items; Lower and
	// Upper its bounds, each at one-sided level Alpha (conditional on the
	// discordant count: a Wilson interval of Better's share of the
	// discordant pairs, scaled by their share of the items).
	Diff, Lower, Upper float64
	// PValue is the exact one-sided McNemar p-value of "no drop": the
	// probability of Better or fewer of the discordant pairs going B's way
	// when each goes either way with probability ½.
	PValue float64
	// Margin is the non-inferiority margin; Alpha the level.
	Margin, Alpha float64
	// Change is Unchanged (within tolerance: Lower above −Margin; Improved
	// when Lower is above 0), Regressed (not within tolerance, and a drop
	// shown: PValue ≤ Alpha) or Inconclusive.
	Change Change
	// Need is, when inconclusive, the items that would decide it with
	// power 0.8 were the measured rates (discordance and change) the true
	// ones; 0 when decided or when no count would (no change and no
	// margin).
	Need int
}

// ComparePaired decides the accuracy change of the same items from the
// discordant pairs (Paired): worse items A answered right and B wrong,
// better the reverse, of items scored on both sides.
func ComparePaired(items, aCorrect, bCorrect, worse, better int, margin, alpha float64) Paired {
	p := Paired{Items: items, ACorrect: aCorrect, BCorrect: bCorrect, Worse: worse, Better: better, Margin: margin, Alpha: alpha, PValue: 1}
	if items == 0 {
		p.Change = Inconclusive
		return p
	}
	n := float64(items)
	nd := worse + better
	psi := float64(nd) / n
	p.Diff = float64(better-worse) / n
	if nd > 0 {
		lo, hi := stats.Wilson(better, nd, alpha)
		p.Lower, p.Upper = psi*(2*lo-1), psi*(2*hi-1)
		p.PValue = moremath.BinomialDist{N: nd, P: 0.5}.CDF(float64(better))
	}
	switch {
	case p.Lower > -margin || nd == 0:
		p.Change = Unchanged
		if p.Lower > 0 {
			p.Change = Improved
		}
	case p.PValue <= alpha:
		p.Change = Regressed
	default:
		p.Change = Inconclusive
		p.Need = itemsToDecide(psi, p.Diff, margin, alpha)
	}
	return p
}

// itemsToDecide is the items a paired comparison at discordance psi and
// change d needs to decide with power 0.8 at level alpha: the fewer of
// those that show non-inferiority at margin (when d > −margin) and those
// that show the drop (when d < 0), by the normal approximation of the
// paired difference (standard error √((ψ − d²)/N)); 0 when neither can be
// shown.
func itemsToDecide(psi, d, margin, alpha float64) int {
	z := stats.NormalQuantile(1-alpha) + stats.NormalQuantile(AccuracyPower)
	v := max(psi-d*d, 1e-6)
	need := math.Inf(1)
	if d+margin > 0 {
		need = min(need, z*z*v/((d+margin)*(d+margin)))
	}
	if d < 0 {
		need = min(need, z*z*v/(d*d))
	}
	if math.IsInf(need, 1) || need > 1e9 {
		return 0
	}
	return int(math.Ceil(need))
}

// mcnemarCritical[alpha] caches, per discordant count nd, the largest
// count of pairs going B's way at which the exact one-sided test rejects
// "no drop" at alpha (−1: none).
var mcnemarCritical sync.Map // float64 → *criticalTable

type criticalTable struct {
	mu sync.Mutex
	c  []int
}

// critical returns the rejection threshold of the exact one-sided
// McNemar test at alpha for nd discordant pairs.
func critical(nd int, alpha float64) int {
	v, _ := mcnemarCritical.LoadOrStore(alpha, &criticalTable{})
	t := v.(*criticalTable)
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.c) <= nd {
		m := len(t.c)
		k := -1
		if m > 0 {
			k = t.c[m-1] // the threshold does not decrease with nd
		}
		d := moremath.BinomialDist{N: m, P: 0.5}
		for k+1 <= m && d.CDF(float64(k+1)) <= alpha {
			k++
		}
		t.c = append(t.c, k)
	}
	return t.c[nd]
}

// DropPower is the probability that an exact one-sided McNemar test at
// level alpha over items paired items shows a drop of accuracy from base
// to base − drop, the two runs' errors independent (the most discordance
// two runs of these accuracies can have by chance, so the least power:
// a real upgrade's errors overlap more).
func DropPower(items int, base, drop, alpha float64) float64 {
	pb := base - drop
	psi := base*(1-pb) + pb*(1-base) // P(discordant)
	if psi <= 0 || items <= 0 {
		return 0
	}
	pi := pb * (1 - base) / psi // P(B right | discordant)
	mean, sd := float64(items)*psi, math.Sqrt(float64(items)*psi*(1-psi))
	lo, hi := max(0, int(mean-9*sd)), min(items, int(mean+9*sd)+1)
	power := 0.0
	for nd := lo; nd <= hi; nd++ {
		c := critical(nd, alpha)
		if c < 0 {
			continue
		}
		pmf := math.Exp(mathx.Lchoose(items, nd) + float64(nd)*math.Log(psi) + float64(items-nd)*math.Log1p(-psi))
		power += pmf * moremath.BinomialDist{N: nd, P: pi}.CDF(float64(c))
	}
	return power
}

// ItemsFor is the fewest paired items with which an exact one-sided
// McNemar test at level alpha shows a drop of accuracy from base to base −
// drop with power at least power (DropPower); 0 beyond a million.
func ItemsFor(base, drop, alpha, power float64) int {
	lo, hi := 1, 64
	for DropPower(hi, base, drop, alpha) < power {
		lo, hi = hi, hi*2
		if hi > 1<<20 {
			return 0
		}
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if DropPower(mid, base, drop, alpha) >= power {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi
}

// RecommendedItems is the dataset size the docs recommend to catch a drop
// of AccuracyDrop from accuracy base at level alpha with power 0.8: the
// smallest hundred at which DropPower is 0.81 or more, a point above 0.8
// so that the power stays above it where the exact test's discreteness
// and a sampled count of discordant pairs wobble about it; 0 beyond a
// million.
func RecommendedItems(base, alpha float64) int {
	n := ItemsFor(base, AccuracyDrop, alpha, AccuracyPower+0.01)
	if n == 0 {
		return 0
	}
	return (n + 99) / 100 * 100
}
