package spec

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestUnitHints: a threshold in the wrong unit gets the number to write
// (an error for a duration string, a warning for a latency ceiling too
// small to be milliseconds); a plausible threshold gets nothing. A
// reference to a cell whose context and concurrency are both unmeasured
// names both in one diagnostic (docs/spec.md#static-checks).
func TestUnitHints(t *testing.T) {
	const head = "server \"q\" { model = \"m\" }\nmatrix \"decode\" {\ncontexts = [\"4K\"]\nconcurrency = [1]\n}\n"
	tests := []struct {
		name      string
		condition string
		severity  hcl.DiagnosticSeverity // of the one diagnostic; 0: none
		want      []string               // summary, then phrases of the detail
	}{
		{name: "duration string on a millisecond metric", condition: `decode["4K"][1].ttft_ms_p99 <= "3s"`, severity: hcl.DiagError,
			want: []string{"Invalid operand", `ttft_ms_p99 is a number of milliseconds, compared here with the string "3s": write 3000 (3s in milliseconds).`}},
		{name: "fractional duration", condition: `decode["4K"][1].tbt_ms < "1.5ms"`, severity: hcl.DiagError,
			want: []string{"Invalid operand", `write 1.5 (1.5ms in milliseconds)`}},
		{name: "string that is no duration is left to the static check", condition: `decode["4K"][1].ttft_ms <= "fast"`},
		{name: "duration string on a throughput is left to the static check", condition: `decode["4K"][1].total_tps >= "3s"`},
		{name: "TTFT ceiling meant in seconds", condition: `decode["4K"][1].ttft_ms_p99 <= 3.0`, severity: hcl.DiagWarning,
			want: []string{"Ceiling of 3 ms?", "ttft_ms_p99 is in milliseconds: a ceiling of 3 ms is faster than any server answers (under 10 ms). If 3 seconds is meant, write 3000."}},
		{name: "reversed comparison", condition: `0.5 >= decode["4K"][1].ttft_ms_mean`, severity: hcl.DiagWarning,
			want: []string{"Ceiling of 0.5 ms?", "If 0.5 seconds is meant, write 500."}},
		{name: "TBT of a few milliseconds is real", condition: `decode["4K"][1].tbt_ms <= 5`},
		{name: "TBT under a millisecond", condition: `decode["4K"][1].tbt_ms <= 0.04`, severity: hcl.DiagWarning,
			want: []string{"Ceiling of 0.04 ms?", "(under 1 ms)", "write 40."}},
		{name: "lower bound", condition: `decode["4K"][1].ttft_ms > 0`},
		{name: "TTFT ceiling of 10 ms", condition: `decode["4K"][1].ttft_ms <= 10`},
		{name: "sample count", condition: `decode["4K"][1].ttft_ms_count >= 3`},
		{name: "both coordinates unmeasured", condition: `decode["8K"][32].total_tps >= 1`, severity: hcl.DiagError,
			want: []string{"Reference to an unmeasured cell", `Matrix "decode" measures neither context 8K nor concurrency 32: its contexts are 4K, its concurrency levels 1.`}},
		{name: "context unmeasured alone", condition: `decode["8K"][1].total_tps >= 1`, severity: hcl.DiagError,
			want: []string{"Reference to an unmeasured context", "does not measure context 8K"}},
		{name: "concurrency unmeasured alone", condition: `decode["4K"][32].total_tps >= 1`, severity: hcl.DiagError,
			want: []string{"Reference to an unmeasured concurrency", "does not measure concurrency 32"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := head + "assert \"a\" {\ncondition = " + tt.condition + "\n}\n"
			_, diags := LoadSource("u.hcl", []byte(src), LoadOptions{})
			if tt.severity == 0 {
				if len(diags) > 0 {
					t.Fatalf("want no diagnostic, got %v", diags)
				}
				return
			}
			if len(diags) != 1 {
				t.Fatalf("want one diagnostic, got %d: %v", len(diags), diags)
			}
			d := diags[0]
			if d.Severity != tt.severity || d.Summary != tt.want[0] {
				t.Errorf("got %v %q, want %v %q", d.Severity, d.Summary, tt.severity, tt.want[0])
			}
			for _, phrase := range tt.want[1:] {
				if !strings.Contains(d.Detail, phrase) {
					t.Errorf("detail %q does not say %q", d.Detail, phrase)
				}
			}
			if d.Subject == nil || d.Subject.Start.Line != 7 {
				t.Errorf("subject %v, want line 7 (the condition's)", d.Subject)
			}
		})
	}
}
