package spec

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
)

// TestPercentiles: measure.percentiles as written, and the one diagnostic
// of each mistake, at its element's line (docs/spec.md#measure).
func TestPercentiles(t *testing.T) {
	sp, diags := LoadSource("p.hcl", []byte("server \"q\" { model = \"m\" }\nmeasure { percentiles = [50, 95, 99.9] }\n"), LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if d := cmp.Diff([]float64{50, 95, 99.9}, sp.Measure.Percentiles); d != "" {
		t.Errorf("percentiles (-want +got):\n%s", d)
	}
	tests := []struct {
		name, body string
		line       int
		want       []string
	}{
		{name: "out of range", body: "measure {\npercentiles = [50,\n100]\n}", line: 4, want: []string{"Invalid percentile", "more than 0 and less than 100; got 100"}},
		{name: "zero", body: "measure {\npercentiles = [\n0]\n}", line: 4, want: []string{"Invalid percentile", "got 0"}},
		{name: "duplicate", body: "measure {\npercentiles = [99.9,\n99.9]\n}", line: 4, want: []string{"Duplicate percentile", "percentile 99.9 appears twice"}},
		{name: "not a number", body: "measure {\npercentiles = [\n\"p99\"]\n}", line: 4, want: []string{"Invalid percentile", "A percentile is a number between 0 and 100"}},
		{name: "not a list", body: "measure {\npercentiles = 99\n}", line: 3, want: []string{"a list of numbers is required"}},
		{name: "empty", body: "measure {\npercentiles = []\n}", line: 3, want: []string{"Empty list", "at least one value"}},
		{name: "a percentile not listed", line: 8,
			body: "measure { percentiles = [50, 99] }\nmatrix \"decode\" {\ncontexts = [\"1K\"]\nconcurrency = [1]\n}\nassert \"a\" {\ncondition = decode[\"1K\"][1].ttft_ms_p95 < 1\n}",
			want: []string{"Unmeasured percentile", "ttft_ms_p95 is the 95 percentile of ttft_ms", "measure.percentiles is [50, 99]; add 95 to it"}},
		{name: "the unit left out", line: 7,
			body: "matrix \"decode\" {\ncontexts = [\"1K\"]\nconcurrency = [1]\n}\nassert \"a\" {\ncondition = decode[\"1K\"][1].ttft_p99 < 1\n}",
			want: []string{"Unknown metric", `Did you mean "ttft_ms_p99"?`}},
		{name: "a turn's TTFT misspelt", line: 7,
			body: "traffic \"t\" {\ncontext = \"1K\"\nrate = [1]\n}\nassert \"a\" {\ncondition = t[\"1K\"][1].ttft_ms_trun3 < 1\n}",
			want: []string{"Unknown metric", "ttft_ms_turn1 … ttft_ms_turn8 (the TTFT of each conversation turn)", `Did you mean "ttft_ms_turn3"?`}},
		{name: "a turn beyond the eighth", line: 7,
			body: "traffic \"t\" {\ncontext = \"1K\"\nrate = [1]\n}\nassert \"a\" {\ncondition = t[\"1K\"][1].ttft_ms_turn9 < 1\n}",
			want: []string{"Unknown metric", `turns 1 to 8 (ttft_ms_turn1 … ttft_ms_turn8); "ttft_ms_turn9" is beyond them`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := LoadSource("p.hcl", []byte("server \"q\" { model = \"m\" }\n"+tt.body+"\n"), LoadOptions{})
			errs := diags.Errs()
			if len(errs) != 1 {
				t.Fatalf("want one diagnostic, got %v", diags)
			}
			d := errs[0].(*hcl.Diagnostic)
			got := d.Summary + ": " + d.Detail
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("diagnostic %q lacks %q", got, w)
				}
			}
			if d.Subject == nil || d.Subject.Filename != "p.hcl" || d.Subject.Start.Line != tt.line {
				t.Errorf("subject %v, want p.hcl line %d", d.Subject, tt.line)
			}
		})
	}
}
