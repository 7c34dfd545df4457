package report

import (
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestLatencyTable: report.md and report.html list each distribution of a
// cell with the run's percentiles, mean and samples; a distribution with
// no samples shows dashes; results without the statistics (the seeds) get
// no table (TestMarkdownReproducesSeeds).
func TestLatencyTable(t *testing.T) {
	c := result.DecodeCell{Matrix: "decode", Context: 2048, Concurrency: 1, Status: vocab.StatusValid, TTFTMs: 34, TTFTMsP90: 34, TTFTMsP99: 34,
		Stats: map[string]float64{"ttft_ms_count": 1, "ttft_ms_mean": 34, "ttft_ms_p95": 34, "tpot_ms_count": 0}}
	res := &result.Results{Server: result.Server{Name: "qwen"}, Measure: result.Measure{Percentiles: []float64{50, 90, 95, 99}}, Decode: []result.DecodeCell{c}}
	var md strings.Builder
	if err := WriteMarkdown(&md, res); err != nil {
		t.Fatal(err)
	}
	html := renderHTML(t, res)
	for _, want := range []string{
		"| Cell | Metric | p50 | p90 | p95 | p99 | Mean | Samples |",
		"| decode/ctx=2K/conc=1 | ttft_ms | 34 ms | 34 ms | 34 ms | 34 ms | 34 ms | 1 |",
		"| decode/ctx=2K/conc=1 | tpot_ms | — | — | — | — | — | 0 |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md.String())
		}
	}
	if !strings.Contains(html, "<h2>Latency statistics</h2>") || !strings.Contains(html, `<td class="left">ttft_ms</td><td>34 ms</td>`) {
		t.Errorf("report.html lacks the Latency statistics table")
	}
}
