package workload

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLengthSample draws 20,000 lengths of each kind: every draw is a
// whole count within [min, max]; a uniform reaches both ends; a normal and
// a log-normal have the asked mean and spread (with clipping far enough
// out not to matter), and a tight clip holds.
func TestLengthSample(t *testing.T) {
	tests := []struct {
		name             string
		l                Length
		mean, sd         float64 // want; sd 0: not checked
		meanTol, sdTol   float64 // relative
		hitsMin, hitsMax bool
	}{
		{name: "fixed", l: FixedLength(512), mean: 512, meanTol: 0, hitsMin: true, hitsMax: true},
		{name: "uniform inclusive", l: Length{Distribution: Uniform, Min: 100, Max: 110}, mean: 105, sd: math.Sqrt((11*11 - 1) / 12.0), meanTol: 0.01, sdTol: 0.03, hitsMin: true, hitsMax: true},
		{name: "normal", l: Length{Distribution: Normal, Mean: 1000, Stddev: 200, Min: 1, Max: 3000}, mean: 1000, sd: 200, meanTol: 0.01, sdTol: 0.03},
		{name: "normal clipped", l: Length{Distribution: Normal, Mean: 1000, Stddev: 200, Min: 900, Max: 1100}, hitsMin: true, hitsMax: true},
		{name: "lognormal", l: Length{Distribution: Lognormal, Mean: 200, Stddev: 150, Min: 1, Max: 100000}, mean: 200, sd: 150, meanTol: 0.03, sdTol: 0.1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.l.Check(); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			var xs []float64
			lo, hi := math.MaxInt, 0
			for range 20000 {
				n := tt.l.Sample(rng)
				if n < tt.l.Min || n > tt.l.Max {
					t.Fatalf("draw %d outside [%d, %d]", n, tt.l.Min, tt.l.Max)
				}
				lo, hi = min(lo, n), max(hi, n)
				xs = append(xs, float64(n))
			}
			if (lo == tt.l.Min) != tt.hitsMin || (hi == tt.l.Max) != tt.hitsMax {
				t.Errorf("draws span [%d, %d] of [%d, %d]; want the ends reached: %v, %v", lo, hi, tt.l.Min, tt.l.Max, tt.hitsMin, tt.hitsMax)
			}
			m, sd := meanStddev(xs)
			if tt.mean > 0 && math.Abs(m-tt.mean) > tt.meanTol*tt.mean {
				t.Errorf("mean %.2f, want %.2f ± %.0f %%", m, tt.mean, 100*tt.meanTol)
			}
			if tt.sd > 0 && math.Abs(sd-tt.sd) > tt.sdTol*tt.sd {
				t.Errorf("stddev %.2f, want %.2f ± %.0f %%", sd, tt.sd, 100*tt.sdTol)
			}
		})
	}
}

// TestLengthCheck: each parameter problem is named.
func TestLengthCheck(t *testing.T) {
	tests := []struct {
		name string
		l    Length
		want string
	}{
		{name: "zero count", l: FixedLength(0), want: "at least 1"},
		{name: "min above max", l: Length{Distribution: Uniform, Min: 9, Max: 3}, want: "min (9) is more than max (3)"},
		{name: "mean outside", l: Length{Distribution: Normal, Mean: 50, Stddev: 5, Min: 100, Max: 200}, want: "mean (50) is outside [min, max] = [100, 200]"},
		{name: "negative stddev", l: Length{Distribution: Lognormal, Mean: 150, Stddev: -1, Min: 100, Max: 200}, want: "stddev is a number ≥ 0"},
		{name: "unset", l: Length{}, want: "no distribution"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.l.Check(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Check() = %v, want %q", err, tt.want)
			}
		})
	}
}

// meanStddev is the mean and sample standard deviation of xs.
func meanStddev(xs []float64) (float64, float64) {
	var s, s2 float64
	for _, x := range xs {
		s += x
	}
	m := s / float64(len(xs))
	for _, x := range xs {
		s2 += (x - m) * (x - m)
	}
	return m, math.Sqrt(s2 / float64(len(xs)-1))
}

// TestLengthString: each distribution spelled as a spec writes it.
func TestLengthString(t *testing.T) {
	tests := []struct {
		name string
		l    Length
		want string
	}{
		{name: "unset", want: "unset"},
		{name: "fixed", l: FixedLength(512), want: "512"},
		{name: "uniform", l: Length{Distribution: Uniform, Min: 100, Max: 900}, want: "{ min = 100, max = 900 }"},
		{name: "normal", l: Length{Distribution: Normal, Mean: 1000, Stddev: 200.5, Min: 400, Max: 1600}, want: "{ mean = 1000, stddev = 200.5, min = 400, max = 1600 }"},
		{name: "normal, large mean", l: Length{Distribution: Normal, Mean: 2e6, Stddev: 1e-7, Min: 1, Max: 4000000}, want: "{ mean = 2e+06, stddev = 1e-07, min = 1, max = 4000000 }"},
		{name: "lognormal", l: Length{Distribution: Lognormal, Mean: 300, Stddev: 50, Min: 10, Max: 2000}, want: `{ mean = 300, stddev = 50, min = 10, max = 2000, distribution = "lognormal" }`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.l.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}
