package sim

import (
	"strings"
	"testing"
)

// TestParseSlowBand: --sim-slow-at-concurrency takes N:F or LO-HI:F, and
// the band applies to exactly those batch sizes.
func TestParseSlowBand(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    SlowBand
		slow    []int
		notSlow []int
		err     bool
	}{
		{name: "one batch size", in: "8:3", want: SlowBand{8, 8, 3}, slow: []int{8}, notSlow: []int{7, 9}},
		{name: "a band", in: "8-12:2.5", want: SlowBand{8, 12, 2.5}, slow: []int{8, 10, 12}, notSlow: []int{7, 13}},
		{name: "no factor", in: "8", err: true},
		{name: "zero factor", in: "8:0", err: true},
		{name: "empty band", in: "12-8:2", err: true},
		{name: "zero", in: "0:2", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSlowBand(tt.in)
			if tt.err {
				if err == nil || !strings.Contains(err.Error(), "want N:F or LO-HI:F") {
					t.Fatalf("parseSlowBand(%q) = %v, %v; want the usage error", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("parseSlowBand(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			for _, n := range tt.slow {
				if !got.applies(n) {
					t.Errorf("%v does not apply to %d", got, n)
				}
			}
			for _, n := range tt.notSlow {
				if got.applies(n) {
					t.Errorf("%v applies to %d", got, n)
				}
			}
		})
	}
	if (SlowBand{}).applies(1) {
		t.Error("the zero band (flag unset) applies")
	}
}
