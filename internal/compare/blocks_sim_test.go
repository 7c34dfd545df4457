package compare

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
)

// The error rates of the interleaved comparison (Blocks) beside a stored
// baseline's (Samples), by Monte Carlo over the decision code
// (docs/method.md#interleaved). A seeded model of a throughput cell: each
// boot draws its own offset (lognormal, σ 1 %), each repeat its noise
// (lognormal, σ the row's), a boot costs 20 s to start and a repeat 10 s,
// and on a loaded machine a CPU hog starts at a time drawn uniformly in
// the middle 60 % of the design's timeline and from then on slows every
// repeat that starts after it by 30 % with 5 % more noise. The
// interleaved design boots A and B once a block in an order drawn per
// block, 2 repeats a boot; the stored baseline is one boot of A with 5
// repeats, then one boot of B with 5 (the hog's timeline covers both, as
// when a baseline is measured shortly before on the same busy runner).
// 2,000 cells a row by default; SLOGATE_BLOCKS_SIM=N runs N and prints
// the table the docs quote:
//
//	SLOGATE_BLOCKS_SIM=20000 go test -run TestBlocksSimulation -v ./internal/compare

// simDesign is one way of measuring a cell on both builds.
type simDesign struct {
	name string
	// interleaved: Min and Max blocks, repeats a boot; else a stored
	// baseline of repeats a side.
	interleaved bool
	min, max    int
	repeats     int
}

// simCost is what a design spent on one cell.
type simCost struct {
	boots   int
	serverS float64
	blocks  int
}

const (
	simStartS = 20.0 // a boot's start-up
	simRepS   = 10.0 // a repeat's window
	simBootSD = 0.01 // a boot's offset
	simHog    = 0.7  // what the hog leaves of the throughput
	simHogSD  = 0.03 // the noise it adds
)

// simMachine is the machine state of one simulated cell: when the hog
// starts (+Inf: never).
type simMachine struct {
	hogAt float64
	noise float64
	r     *rand.Rand
}

// repeat is one repeat's value of a build of true value v, started at
// time at in a boot of offset off.
func (m simMachine) repeat(v, off, at float64) float64 {
	x := v * off * math.Exp(m.noise*m.r.NormFloat64())
	if at >= m.hogAt {
		x *= simHog * math.Exp(simHogSD*m.r.NormFloat64())
	}
	return x
}

// boot measures one boot of n repeats from time *at, the median of its
// repeats as the boot's value.
func (m simMachine) boot(v float64, n int, at *float64) (median float64, samples []float64) {
	off := math.Exp(simBootSD * m.r.NormFloat64())
	*at += simStartS
	for range n {
		samples = append(samples, m.repeat(v, off, *at))
		*at += simRepS
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	if n%2 == 1 {
		return s[n/2], samples
	}
	return (s[n/2-1] + s[n/2]) / 2, samples
}

// simCell decides one cell of A (value 100) against B (100 × ratio) with
// design d on a machine whose hog starts within the design's timeline
// when hog is set.
func simCell(r *rand.Rand, d simDesign, noise, ratio float64, hog bool, tol, alpha float64) (Change, simCost) {
	m := simMachine{hogAt: math.Inf(1), noise: noise, r: r}
	if hog {
		var total float64
		if d.interleaved {
			total = float64(2*d.min) * (simStartS + float64(d.repeats)*simRepS)
		} else {
			total = 2 * (simStartS + float64(d.repeats)*simRepS)
		}
		m.hogAt = total * (0.2 + 0.6*r.Float64())
	}
	var at float64
	if !d.interleaved {
		_, a := m.boot(100, d.repeats, &at)
		_, b := m.boot(100*ratio, d.repeats, &at)
		_, c, ok := Samples(a, b, true, tol, alpha)
		if !ok {
			panic("a stored baseline of these repeats cannot attain α")
		}
		return c, simCost{boots: 2, serverS: at}
	}
	s := Blocks{Min: d.min, Max: d.max, Alpha: alpha, Tolerance: tol}
	var as, bs []float64
	block := func() {
		var a, b float64
		if r.IntN(2) == 0 { // the block's order, drawn
			a, _ = m.boot(100, d.repeats, &at)
			b, _ = m.boot(100*ratio, d.repeats, &at)
		} else {
			b, _ = m.boot(100*ratio, d.repeats, &at)
			a, _ = m.boot(100, d.repeats, &at)
		}
		as, bs = append(as, a), append(bs, b)
	}
	for len(as) < d.min {
		block()
	}
	t, _ := s.Decide(as, bs, true)
	if t.Change == Inconclusive && d.max > d.min {
		for len(as) < d.max {
			block()
		}
		t, _ = s.Decide(as, bs, true)
	}
	return t.Change, simCost{boots: 2 * len(as), serverS: at, blocks: len(as)}
}

// simRow is one row of the table: rates of each decision and the mean
// cost.
type simRow struct {
	regressed, within, inconclusive float64
	boots, serverS, blocks          float64
}

func simRate(cells int, seed uint64, d simDesign, noise, ratio float64, hog bool) simRow {
	r := rand.New(rand.NewPCG(seed, 39))
	var row simRow
	for range cells {
		c, cost := simCell(r, d, noise, ratio, hog, 0.05, 0.05)
		switch c {
		case Regressed:
			row.regressed++
		case Inconclusive:
			row.inconclusive++
		default:
			row.within++
		}
		row.boots += float64(cost.boots)
		row.serverS += cost.serverS
		row.blocks += float64(cost.blocks)
	}
	n := float64(cells)
	row.regressed, row.within, row.inconclusive = row.regressed/n, row.within/n, row.inconclusive/n
	row.boots, row.serverS, row.blocks = row.boots/n, row.serverS/n, row.blocks/n
	return row
}

// TestBlocksSimulation: with a CPU hog started mid-run, identical builds
// compared interleaved are called regressed in at most 5 % of cells while
// the stored baseline of the same builds calls most of them regressed; a
// build 10 % slower is caught interleaved (6 to 12 blocks) in at least
// 90 % of cells at 2 % noise; on a quiet machine the interleaved design
// catches it too and calls identical builds unchanged.
func TestBlocksSimulation(t *testing.T) {
	cells := 2000
	if v := os.Getenv("SLOGATE_BLOCKS_SIM"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("SLOGATE_BLOCKS_SIM=%q: want a number of cells", v)
		}
		cells = n
	}
	stored := simDesign{name: "stored baseline, repeat = 5", repeats: 5}
	fixed := simDesign{name: "interleaved, 6 blocks, 2 repeats a boot", interleaved: true, min: 6, max: 6, repeats: 2}
	auto := simDesign{name: "interleaved, 6 to 16 blocks, 2 repeats a boot", interleaved: true, min: 6, max: 16, repeats: 2}
	tests := []struct {
		name         string
		design       simDesign
		ratio, noise float64
		hog          bool
		maxRegressed float64 // the most regressed calls allowed; 0: no check
		minRegressed float64 // the fewest; 0: no check
		minWithin    float64
	}{
		{name: "identical, hog, stored", design: stored, ratio: 1, noise: 0.02, hog: true, minRegressed: 0.3},
		{name: "identical, hog, interleaved fixed", design: fixed, ratio: 1, noise: 0.02, hog: true, maxRegressed: 0.05},
		{name: "identical, hog, interleaved auto", design: auto, ratio: 1, noise: 0.02, hog: true, maxRegressed: 0.05, minWithin: 0.8},
		{name: "10% slower, hog, stored", design: stored, ratio: 0.9, noise: 0.02, hog: true},
		{name: "10% slower, hog, interleaved fixed", design: fixed, ratio: 0.9, noise: 0.02, hog: true},
		{name: "10% slower, hog, interleaved auto", design: auto, ratio: 0.9, noise: 0.02, hog: true, minRegressed: 0.9},
		{name: "identical, quiet, stored", design: stored, ratio: 1, noise: 0.02, maxRegressed: 0.05},
		{name: "identical, quiet, interleaved auto", design: auto, ratio: 1, noise: 0.02, maxRegressed: 0.05, minWithin: 0.9},
		{name: "10% slower, quiet, interleaved auto", design: auto, ratio: 0.9, noise: 0.02, minRegressed: 0.9},
		{name: "edge -5%, hog, interleaved auto", design: auto, ratio: 0.95, noise: 0.02, hog: true, maxRegressed: 0.06},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			row := simRate(cells, uint64(i+1), tc.design, tc.noise, tc.ratio, tc.hog)
			t.Logf("| %s | %s | %.0f%% | %.1f%% | %.1f%% | %.1f%% | %.1f | %.0f s |", tc.name, tc.design.name, tc.noise*100,
				row.regressed*100, row.within*100, row.inconclusive*100, row.boots, row.serverS)
			if tc.maxRegressed > 0 && row.regressed > tc.maxRegressed {
				t.Errorf("regressed in %.1f%% of cells, want ≤ %.0f%%", row.regressed*100, tc.maxRegressed*100)
			}
			if tc.minRegressed > 0 && row.regressed < tc.minRegressed {
				t.Errorf("regressed in %.1f%% of cells, want ≥ %.0f%%", row.regressed*100, tc.minRegressed*100)
			}
			if tc.minWithin > 0 && row.within < tc.minWithin {
				t.Errorf("within tolerance in %.1f%% of cells, want ≥ %.0f%%", row.within*100, tc.minWithin*100)
			}
		})
	}
}
