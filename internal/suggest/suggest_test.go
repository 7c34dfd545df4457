package suggest

import "testing"

func TestClosest(t *testing.T) {
	names := []string{"run", "validate", "plan", "diff", "report", "codify", "sim", "version"}
	tests := []struct{ name, in, want string }{
		{"typo", "runn", "run"},
		{"transposition", "pnal", "plan"},
		{"prefix", "valid", "validate"},
		{"ambiguous prefix", "v", ""},
		{"far from all", "benchmark", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Closest(tt.in, names); got != tt.want {
				t.Errorf("Closest(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestName(t *testing.T) {
	names := []string{"ttft_ms", "ttft_ms_p90", "ttft_ms_p99", "tbt_ms_p99", "total_tps", "per_request_tps"}
	tests := []struct{ name, in, want string }{
		{"close", "ttft_ms_p98", "ttft_ms_p90"},
		{"the unit left out", "ttft_p99", "ttft_ms_p99"},
		{"a word left out of two candidates", "ms_p99", ""},
		{"far from all", "goodput", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Name(tt.in, names); got != tt.want {
				t.Errorf("Name(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
