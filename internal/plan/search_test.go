package plan

import (
	"regexp"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/spec"
)

// TestSearchSteps: a search is kept when -run matches <server>/search/<name>
// or a kept assert reads it, and runs on the step of its context (a new
// step when no cell has that context), after the decode cells.
func TestSearchSteps(t *testing.T) {
	sp := testSpec()
	sp.Searches = []*spec.Search{
		{Name: "users_8k", Context: 8192, Lo: 1, Hi: 64},
		{Name: "users_4k", Context: 4096, Lo: 2, Hi: 16},
	}
	sp.Asserts = append(sp.Asserts, &spec.Assert{Name: "reads_4k", Searches: []string{"users_4k"}})
	srv := &spec.Server{Name: "s"}
	tests := []struct {
		name string
		keep string
		want map[int][]string // step context → its searches
	}{
		{name: "all", want: map[int][]string{4096: {"users_4k"}, 8192: {"users_8k"}}},
		{name: "by test name", keep: "search/users_8k", want: map[int][]string{8192: {"users_8k"}}},
		{name: "through an assert", keep: "assert/reads_4k", want: map[int][]string{4096: {"users_4k"}}},
		{name: "neither", keep: "assert/d8k64", want: map[int][]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var keep *regexp.Regexp
			if tt.keep != "" {
				keep = regexp.MustCompile(tt.keep)
			}
			p := New(sp, srv, keep)
			got := map[int][]string{}
			prev := 0
			for _, st := range p.Steps {
				if st.Context < prev {
					t.Errorf("steps out of order: %d after %d", st.Context, prev)
				}
				prev = st.Context
				for _, s := range st.Searches {
					got[st.Context] = append(got[st.Context], s.Name)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("searches by step %v, want %v", got, tt.want)
			}
			for ctx, names := range tt.want {
				if len(got[ctx]) != len(names) || got[ctx][0] != names[0] {
					t.Errorf("step %d searches %v, want %v", ctx, got[ctx], names)
				}
			}
			if len(p.Searches) != len(tt.want) {
				t.Errorf("plan searches %d, want %d", len(p.Searches), len(tt.want))
			}
		})
	}
}

// TestMaxProbes: the bound slogate plan prints is never below what the
// search can use (exponential probes, one past the failure, bisection).
func TestMaxProbes(t *testing.T) {
	for _, tt := range []struct{ lo, hi, want int }{
		{1, 256, 9 + 1 + 8}, // 1..256: 9 exponential, 1 past, bisection of [128, 256]: 7 (bound 8)
		{1, 16, 5 + 1 + 4},
		{3, 20, 4 + 1 + 4},
	} {
		if got := MaxProbes(tt.lo, tt.hi); got != tt.want {
			t.Errorf("MaxProbes(%d, %d) = %d, want %d", tt.lo, tt.hi, got, tt.want)
		}
	}
}

// TestRateSearchEstimate: a rate search costs its most probes, two windows
// of its traffic block each (the fewest that decide a probe), and then its check_windows at the answer,
// each a window of the block too (and its step's cold prefill request).
func TestRateSearchEstimate(t *testing.T) {
	// A window: 1 s warm-up, 5 s window and a drain of a first token and
	// max_output's 64 tokens at 10 ms.
	window := time.Second + 5*time.Second + 250*time.Millisecond + 640*time.Millisecond
	coldPrefill := time.Duration(1024.0 / estimatePrefillRate * float64(time.Second))
	tests := []struct {
		name         string
		checkWindows int
		want         time.Duration
	}{
		// [8, 40] to 5 %: lo, hi and 6 bisection steps.
		{name: "probes only", want: coldPrefill + 2*8*window},
		{name: "24 check windows", checkWindows: 24, want: coldPrefill + (2*8+24)*window},
		{name: "the most check windows", checkWindows: spec.MaxCheckWindows, want: coldPrefill + (2*8+spec.MaxCheckWindows)*window},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := &spec.Spec{
				Measure: &spec.Measure{Duration: 2 * time.Second, MaxOutput: 64, Repeat: 1},
				Traffic: []*spec.Traffic{{Label: "chat", Context: 1024, Rates: []float64{8}, Duration: 5 * time.Second, WarmUp: time.Second}},
				Searches: []*spec.Search{{Name: "capacity", Context: 1024, Traffic: "chat", RateLo: 8, RateHi: 40,
					Precision: 0.05, CheckWindows: tt.checkWindows}},
			}
			p := New(sp, &spec.Server{Name: "sim"}, regexp.MustCompile(`search/capacity`))
			if p.Estimated != tt.want || p.EstimatedMax != tt.want {
				t.Errorf("Estimated %v, EstimatedMax %v, want %v (%d probes of 2 windows + %d check windows of %v)",
					p.Estimated, p.EstimatedMax, tt.want, MaxRateProbes(sp.Searches[0]), tt.checkWindows, window)
			}
		})
	}
}
