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
