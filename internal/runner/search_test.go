package runner

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSearchConcurrency drives the search with a fake measurer: pass says
// whether concurrency c meets the objective, capacity (when > 0) makes
// every c above it over capacity. It checks the probes in the order made,
// the answer, its confirmation and monotonicity.
func TestSearchConcurrency(t *testing.T) {
	tests := []struct {
		name     string
		lo, hi   int
		pass     func(c int) bool
		capacity int
		want     searchAnswer
		probes   []int
	}{
		{name: "monotone: exponential, one probe past the failure, bisection to answer+1",
			lo: 1, hi: 256, pass: func(c int) bool { return c <= 23 },
			want:   searchAnswer{answer: 23, found: true, monotone: true, confirmedBy: 24},
			probes: []int{1, 2, 4, 8, 16, 32, 64, 24, 20, 22, 23}},
		{name: "all pass: the answer is hi, nothing confirms above it",
			lo: 1, hi: 100, pass: func(int) bool { return true },
			want:   searchAnswer{answer: 100, found: true, monotone: true},
			probes: []int{1, 2, 4, 8, 16, 32, 64, 100}},
		{name: "none pass: not found, concurrency 0, lo confirms",
			lo: 4, hi: 64, pass: func(int) bool { return false },
			want:   searchAnswer{answer: 0, found: false, monotone: true, confirmedBy: 4},
			probes: []int{4, 8}},
		{name: "non-monotone: a pass past the first failure is reported",
			lo: 1, hi: 64, pass: func(c int) bool { return c != 8 && c < 40 },
			want:   searchAnswer{answer: 7, found: true, monotone: false, confirmedBy: 8},
			probes: []int{1, 2, 4, 8, 16, 6, 7}},
		{name: "hi caps the exponential phase",
			lo: 3, hi: 20, pass: func(c int) bool { return c <= 18 },
			want:   searchAnswer{answer: 18, found: true, monotone: true, confirmedBy: 19},
			probes: []int{3, 6, 12, 20, 16, 18, 19}},
		{name: "failure at hi: no probe past it",
			lo: 1, hi: 8, pass: func(c int) bool { return c <= 5 },
			want:   searchAnswer{answer: 5, found: true, monotone: true, confirmedBy: 6},
			probes: []int{1, 2, 4, 8, 6, 5}},
		{name: "over capacity fails the objective and is not probed past",
			lo: 1, hi: 256, capacity: 40, pass: func(int) bool { return true },
			want:   searchAnswer{answer: 40, found: true, monotone: true, confirmedBy: 41},
			probes: []int{1, 2, 4, 8, 16, 32, 64, 48, 40, 44, 42, 41}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var probes []int
			got, err := searchConcurrency(tt.lo, tt.hi, func(c int) (probeVerdict, error) {
				probes = append(probes, c)
				if tt.capacity > 0 && c > tt.capacity {
					return probeVerdict{overCapacity: true}, nil
				}
				return probeVerdict{passed: tt.pass(c)}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(searchAnswer{})); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.probes, probes); diff != "" {
				t.Errorf("probes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSearchConcurrencyStops: a probe's error ends the search at once.
func TestSearchConcurrencyStops(t *testing.T) {
	boom := errors.New("boom")
	var probes []int
	_, err := searchConcurrency(1, 64, func(c int) (probeVerdict, error) {
		probes = append(probes, c)
		if c == 4 {
			return probeVerdict{}, boom
		}
		return probeVerdict{passed: true}, nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if diff := cmp.Diff([]int{1, 2, 4}, probes); diff != "" {
		t.Errorf("probes (-want +got):\n%s", diff)
	}
}
