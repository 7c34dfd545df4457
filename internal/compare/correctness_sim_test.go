package compare

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/slogate/slogate/internal/result"
)

// The error rates of the correctness decisions by Monte Carlo over the
// decision code itself (docs/method.md#correctness): simulated pairs of
// runs go through CompareGreedy and ComparePaired, and the share of rows
// each outcome takes is checked. By default a few hundred rows a case,
// with bounds wide enough for that noise; SLOGATE_SIM_ERRORS=1 runs 20,000
// rows a case with the bounds, and prints the rates the docs quote:
//
//	SLOGATE_SIM_ERRORS=1 go test -run TestCorrectnessErrorRates -v ./internal/compare

// simRows is the rows a case and whether they are the long version's.
func simRows() (int, bool) {
	if os.Getenv("SLOGATE_SIM_ERRORS") == "1" {
		return 20000, true
	}
	return 400, false // the greedy cases take a quarter of these
}

// simOutput is a greedy output of n tokens, each with a top-5 whose first
// entry is the token, the runner-up 0.5 to 3 nats below.
func simOutput(r *rand.Rand, line, n int) result.CorrectnessOutput {
	o := result.CorrectnessOutput{Block: "sim", Line: line}
	for i := range n {
		id := r.IntN(1000)
		lp := -r.Float64() * 0.3
		t := result.Token{ID: id, Text: "t", Logprob: lp}
		t.Top = append(t.Top, result.TopToken{ID: id, Text: "t", Logprob: lp})
		next := lp - 0.5 - 2.5*r.Float64()
		for k := 1; k < 5; k++ {
			t.Top = append(t.Top, result.TopToken{ID: 1000 + 5*i + k, Text: "u", Logprob: next})
			next -= 0.5
		}
		o.Tokens = append(o.Tokens, t)
	}
	return o
}

// diverge returns a copy of o that diverges at a random position: at a
// near tie (o's runner-up taken, the two 0.01 to 0.09 apart on both
// sides) or a mismatch (a token outside o's top-5). The tokens after the
// divergence are new.
func diverge(r *rand.Rand, o result.CorrectnessOutput, nearTie bool) (a, b result.CorrectnessOutput) {
	a = o
	a.Tokens = append([]result.Token(nil), o.Tokens...)
	b = o
	b.Tokens = append([]result.Token(nil), o.Tokens...)
	pos := r.IntN(len(o.Tokens))
	ta := a.Tokens[pos]
	if nearTie {
		gap := 0.01 + 0.08*r.Float64()
		ta.Top = append([]result.TopToken(nil), ta.Top...)
		ta.Top[1].Logprob = ta.Logprob - gap
		a.Tokens[pos] = ta
		alt := ta.Top[1]
		tb := result.Token{ID: alt.ID, Text: alt.Text, Logprob: alt.Logprob + gap/2}
		tb.Top = []result.TopToken{{ID: alt.ID, Text: alt.Text, Logprob: tb.Logprob}, {ID: ta.ID, Text: ta.Text, Logprob: tb.Logprob - gap}}
		b.Tokens[pos] = tb
	} else {
		id := 5000 + r.IntN(1000)
		b.Tokens[pos] = result.Token{ID: id, Text: "v", Logprob: -0.2, Top: []result.TopToken{{ID: id, Text: "v", Logprob: -0.2}}}
	}
	for i := pos + 1; i < len(b.Tokens); i++ {
		b.Tokens[i].ID = 7000 + i
	}
	return a, b
}

// greedyRow simulates one comparison of the prompts of pool (one output
// each, the same in both runs unless planted): each diverges at a near tie
// with probability ties and mismatches with probability mismatches, at a
// random position; it returns the decision and the counts.
func greedyRow(r *rand.Rand, pool []result.CorrectnessOutput, ties, mismatches, maxMismatch float64) Greedy {
	as, bs := make([]result.CorrectnessOutput, 0, len(pool)), make([]result.CorrectnessOutput, 0, len(pool))
	for _, o := range pool {
		a, b := o, o
		switch u := r.Float64(); {
		case u < ties:
			a, b = diverge(r, o, true)
		case u < ties+mismatches:
			a, b = diverge(r, o, false)
		}
		as, bs = append(as, a), append(bs, b)
	}
	return CompareGreedy(as, bs, DefaultNearTieGap, maxMismatch)
}

// pairedRow simulates one paired accuracy comparison of items items: A
// right with probability pa, B with pb, independently (the most
// discordance by chance, the hardest case for the test).
func pairedRow(r *rand.Rand, items int, pa, pb float64) Paired {
	var ac, bc, worse, better int
	for range items {
		x, y := r.Float64() < pa, r.Float64() < pb
		switch {
		case x && !y:
			worse++
		case y && !x:
			better++
		}
		if x {
			ac++
		}
		if y {
			bc++
		}
	}
	return ComparePaired(items, ac, bc, worse, better, DefaultMargin, DefaultAlpha)
}

func TestCorrectnessErrorRates(t *testing.T) {
	rows, long := simRows()
	if testing.Short() && !long {
		rows = 100
	}
	r := rand.New(rand.NewPCG(30, 2026))
	pool := make([]result.CorrectnessOutput, 500)
	for i := range pool {
		pool[i] = simOutput(r, i+1, 16)
	}
	greedyRows := rows / 4
	if long {
		greedyRows = rows
	}
	// bound widens the bounds for the short version's noise: at
	// 400 rows a share's standard error is up to 2.5 points.
	bound := func(strict, loose float64) float64 {
		if long {
			return strict
		}
		return loose
	}
	t.Run("greedy: identical builds never regress", func(t *testing.T) {
		regressed := 0
		for range greedyRows {
			if g := greedyRow(r, pool, 0, 0, 0); g.Change == Regressed {
				regressed++
			}
		}
		t.Logf("identical builds, 500 prompts: regressed in %d of %d rows", regressed, greedyRows)
		if regressed != 0 {
			t.Errorf("identical builds regressed in %d rows", regressed)
		}
	})
	t.Run("greedy: near ties never count as mismatches", func(t *testing.T) {
		counted, regressed, ties := 0, 0, 0
		for range greedyRows {
			g := greedyRow(r, pool, 0.05, 0, 0)
			counted += g.Mismatches
			ties += g.NearTies
			if g.Change == Regressed {
				regressed++
			}
		}
		t.Logf("5%% near ties, 500 prompts: %d near ties, %d counted as mismatches, regressed in %d of %d rows", ties, counted, regressed, greedyRows)
		if counted != 0 || regressed != 0 || ties == 0 {
			t.Errorf("%d near ties planted: %d counted as mismatches, %d rows regressed", ties, counted, regressed)
		}
	})
	t.Run("greedy: a 2% mismatch share is caught with 500 prompts", func(t *testing.T) {
		caught := 0
		for range greedyRows {
			if g := greedyRow(r, pool, 0.05, 0.02, 0); g.Change == Regressed {
				caught++
			}
		}
		rate := float64(caught) / float64(greedyRows)
		t.Logf("2%% mismatches (and 5%% near ties), 500 prompts, max_mismatch 0: caught in %.2f%% of %d rows", 100*rate, greedyRows)
		if rate < bound(0.95, 0.9) {
			t.Errorf("caught in %.2f%% of rows, want ≥ 95%%", 100*rate)
		}
	})
	for _, base := range []float64{0.5, 0.7, 0.9} {
		n := RecommendedItems(base, DefaultAlpha)
		items := n
		if !long {
			items = n / 2 // the short version halves the cost: its power is lower, its bound too
		}
		t.Run(fmt.Sprintf("accuracy %.1f: identical builds regress at most at α", base), func(t *testing.T) {
			regressed := 0
			for range rows {
				if p := pairedRow(r, items, base, base); p.Change == Regressed {
					regressed++
				}
			}
			rate := float64(regressed) / float64(rows)
			t.Logf("accuracy %.2f both, %d items: regressed in %.2f%% of %d rows", base, items, 100*rate, rows)
			if rate > bound(0.05, 0.09) {
				t.Errorf("identical builds regressed in %.2f%% of rows, want ≤ 5%%", 100*rate)
			}
		})
		t.Run(fmt.Sprintf("accuracy %.1f: a 3-point drop is caught at the recommended items", base), func(t *testing.T) {
			caught := 0
			for range rows {
				if p := pairedRow(r, items, base, base-AccuracyDrop); p.Change == Regressed {
					caught++
				}
			}
			rate := float64(caught) / float64(rows)
			t.Logf("accuracy %.2f → %.2f, %d items (recommended %d): caught in %.2f%% of %d rows", base, base-AccuracyDrop, items, n, 100*rate, rows)
			if rate < bound(0.8, 0.45) {
				t.Errorf("a 3-point drop caught in %.2f%% of rows, want ≥ 80%%", 100*rate)
			}
		})
	}
}
