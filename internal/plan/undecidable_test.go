package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/spec"
)

// undecidableSrc has rate searches whose percentiles its windows can and
// cannot decide; each line a diagnostic points at says so inline.
const undecidableSrc = `
server "q" { model = "m" }
traffic "short" {
  context  = "1K"
  rate     = [1]
  duration = "3s"
}
traffic "minute" {
  context  = "1K"
  rate     = [1]
  duration = "60s"
}
search "p99_short" {
  traffic   = "short"
  rate      = [2, 16]
  objective = cell.goodput_share >= 0.95 && cell.ttft_ms_p99 <= 500 # ERROR: Percentile the windows cannot decide
}
search "docs_example" {
  traffic   = "minute"
  rate      = [0.5, 32]
  objective = cell.goodput_share >= 0.95 && cell.ttft_ms_p99 <= 500 # WARNING: Percentile the windows cannot decide
}
search "p90_minute" {
  traffic   = "minute"
  rate      = [2, 16]
  objective = cell.ttft_ms_p90 <= 500
}
search "share_only" {
  traffic   = "short"
  rate      = [0.1, 16]
  objective = cell.goodput_share >= 0.95
}
search "more_windows" {
  traffic     = "minute"
  rate        = [2, 16]
  max_windows = 16
  objective   = cell.e2e_ms_p99 <= 9000
}
`

// TestCheckSearches: a percentile a rate search's windows hold too few
// requests to bound is an error when even the range's top cannot (no
// probe could decide it), a warning when its bottom cannot, each pointing
// at the objective's read of the metric, with the requests a window needs,
// the window that is at the rate, and the way out; a window long enough,
// more windows a probe, or an objective without a percentile, none.
func TestCheckSearches(t *testing.T) {
	sp, diags := spec.LoadSource("undecidable.hcl", []byte(undecidableSrc), spec.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got := CheckSearches(sp)
	lines := strings.Split(undecidableSrc, "\n")
	want := map[int]string{}
	for i, l := range lines {
		for _, sev := range []string{"ERROR", "WARNING"} {
			if _, after, ok := strings.Cut(l, "# "+sev+": "); ok {
				want[i+1] = sev + ": " + after
			}
		}
	}
	seen := map[int]string{}
	for _, d := range got {
		sev := "ERROR"
		if d.Severity == hcl.DiagWarning {
			sev = "WARNING"
		}
		if d.Subject == nil {
			t.Fatalf("diagnostic without a subject: %s", d.Detail)
		}
		seen[d.Subject.Start.Line] = sev + ": " + d.Summary
		if src := undecidableSrc[d.Subject.Start.Byte:d.Subject.End.Byte]; !strings.HasPrefix(src, "cell.") || !strings.HasSuffix(src, "_p99") {
			t.Errorf("line %d: subject %q, want the objective's read of the percentile", d.Subject.Start.Line, src)
		}
	}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("diagnostics at %v, want %v", seen, want)
	}
	details := map[string]string{}
	for _, d := range got {
		details[fmt.Sprint(d.Subject.Start.Line)] = d.Detail
	}
	for _, tt := range []struct {
		name string
		line int
		want []string
	}{
		{name: "no probe can decide it", line: 16, want: []string{
			// 9 probes × 4 windows, 2 bounded metrics: α = 0.05 ÷ 72; ln α ÷ ln 0.99 = 723.1;
			// ⌈724 ÷ 4⌉ = 181 a window, 181 ÷ 16 = 11.3 s.
			"ttft_ms_p99 needs ≥ 181 requests a window: at 16 req/s (the top of the range) that is ≥ 11.4s; lengthen the window or use ttft_ms_p90.",
			"need 724 requests a probe, and a probe pools at most max_windows = 4 windows of 3s",
			"No probe of the search can decide it"}},
		{name: "the docs' example at its bottom", line: 21, want: []string{
			// 10 probes × 4 windows: α = 0.05 ÷ 80; ln α ÷ ln 0.99 = 734.1; ⌈735 ÷ 4⌉ = 184
			// a window, 368 s at 0.5 req/s; 184 ÷ 60 s = 3.07 req/s.
			"ttft_ms_p99 needs ≥ 184 requests a window: at 0.5 req/s (the bottom of the range) that is ≥ 368s; lengthen the window or use ttft_ms_p90.",
			"Probes below 3.07 req/s cannot decide it and go by their point estimates."}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := details[fmt.Sprint(tt.line)]
			for _, w := range tt.want {
				if !strings.Contains(d, w) {
					t.Errorf("line %d says %q, want it to contain %q", tt.line, d, w)
				}
			}
		})
	}
}

// TestCheckTrafficReads: an assert reading a percentile of an open-loop
// traffic cell whose window at its rate holds fewer requests than the
// percentile needs (a p99 at 0.05: 299) is warned of at the read, once per
// cell it reads, with the requests it needs, what the window holds and
// the window that would do; a window long enough (10 req/s for 30 s:
// 300), a median and a closed loop are not, nor a read through a for
// expression (its metric is an attribute of a local: the run still makes
// it inconclusive) (docs/method.md#undecidable-percentiles).
func TestCheckTrafficReads(t *testing.T) {
	src := `
server "q" { model = "m" }
traffic "steady" {
  context  = "1K"
  rate     = [4, 10]
  duration = "30s"
}
traffic "replay" {
  context  = "1K"
  rate     = [2]
  duration = "200s"
}
traffic "closed" {
  context     = "1K"
  concurrency = [8]
  duration    = "10s"
}
assert "tail" {
  condition = steady["1K"][4].ttft_ms_p99 <= 500 && steady["1K"][10].ttft_ms_p99 <= 500
}
assert "median" {
  condition = steady["1K"][4].ttft_ms <= 200
}
assert "long_window" {
  condition = replay["1K"][2].e2e_ms_p99 <= 9000
}
assert "closed_loop" {
  condition = closed["1K"][8].ttft_ms_p99 <= 500
}
assert "every_rate" {
  condition = alltrue([for k, c in steady["1K"] : c.tbt_ms_p99 <= 50])
}
`
	sp, diags := spec.LoadSource("traffic.hcl", []byte(src), spec.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var got []string
	for _, d := range CheckTrafficReads(sp) {
		if d.Severity != hcl.DiagWarning || d.Summary != "Percentile the window cannot decide" {
			t.Errorf("severity %d %q; want a warning", d.Severity, d.Summary)
		}
		got = append(got, fmt.Sprintf("line %d: %s", d.Subject.Start.Line, d.Detail))
	}
	want := []string{
		`line 19: ttft_ms_p99 of traffic "steady" at 4 req/s needs ≥ 299 requests a window, and its 30s window holds about 120: the assert will be inconclusive, neither passed nor failed; lengthen the window to ≥ 74.8s or read ttft_ms_p90. A percentile's distribution-free bounds at one-sided 0.05 exist only from that many requests on (docs/method.md#undecidable-percentiles).`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("diagnostics\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
