package run

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
)

// finishSpec has one assert that passes, one that fails, one that reads an
// over-capacity cell, and an expect row.
const finishSpec = `server "qwen" {
  model = "Qwen/Qwen3.5-4B"
}

matrix "decode" {
  contexts    = ["8K", "16K"]
  concurrency = [1, 64]
}

assert "decode_8k_1" {
  condition     = decode["8K"][1].total_tps >= 300
  error_message = "single-stream decode fell below 300 tok/s"
}

assert "decode_8k_64" {
  condition     = decode["8K"][64].total_tps >= 6000
  error_message = "decode throughput at 8K x 64 fell below 6,000 tok/s"
}

assert "needs_16k_64" {
  condition = decode["16K"][64].ttft_ms < 500
}
`

// recStream records a TestStream's calls as go test text.
type recStream struct{ b strings.Builder }

func (r *recStream) Run(test string)          { fmt.Fprintf(&r.b, "=== RUN   %s\n", test) }
func (r *recStream) Output(test, line string) { fmt.Fprintf(&r.b, "    %s\n", line) }
func (r *recStream) End(test string, o vocab.Outcome, _ time.Duration) {
	fmt.Fprintf(&r.b, "--- %s: %s\n", strings.ToUpper(o.String()), test)
}
func (r *recStream) Log(line string)                         { fmt.Fprintf(&r.b, "%s\n", line) }
func (r *recStream) Progress(report.Progress)                {}
func (r *recStream) Finish(o vocab.Outcome, _ time.Duration) {}

func finishResults() *result.Results {
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	return &result.Results{
		Schema: result.Schema, Spec: "specs/finish.hcl",
		Server:  result.Server{Name: "qwen", Model: "Qwen/Qwen3.5-4B", Simulated: true},
		Measure: result.Measure{Duration: "2s", DurationS: 2, MaxOutput: 256},
		Started: start, Finished: start.Add(10 * time.Second),
		Decode: []result.DecodeCell{
			{Matrix: "decode", Context: 8192, Concurrency: 1, Status: vocab.StatusValid, TotalTPS: 408.2, TTFTMs: 78, MeasuredS: 2},
			{Matrix: "decode", Context: 8192, Concurrency: 64, Status: vocab.StatusValid, TotalTPS: 5421.3, TTFTMs: 1027, MeasuredS: 2},
			{Matrix: "decode", Context: 16384, Concurrency: 1, Status: vocab.StatusValid, TotalTPS: 375.6, TTFTMs: 102, MeasuredS: 2},
			{Matrix: "decode", Context: 16384, Concurrency: 64, Status: vocab.StatusError, Reason: "HTTP 500 from /v1/completions"}, // an assert reading it errs (exit 3)
		},
	}
}

func loadFinishSpec(t *testing.T) *spec.Spec {
	t.Helper()
	sp, diags := spec.LoadSource("specs/finish.hcl", []byte(finishSpec), spec.LoadOptions{})
	if diags.HasErrors() {
		t.Fatalf("spec: %v", diags)
	}
	return sp
}

func TestFinishServer(t *testing.T) {
	tests := []struct {
		name        string
		env         map[string]string
		json        bool
		keep        func(string) bool
		wantOutcome vocab.Outcome
		wantTests   []string
		wantStdout  bool // annotations on stdout
		wantStderr  bool // annotations on stderr
		wantSummary bool
	}{
		{name: "plain", wantOutcome: vocab.Error,
			wantTests: []string{"qwen/assert/decode_8k_1", "qwen/assert/decode_8k_64", "qwen/assert/needs_16k_64"}},
		{name: "github actions", env: map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": "summary.md"},
			wantOutcome: vocab.Error, wantStdout: true, wantSummary: true,
			wantTests: []string{"qwen/assert/decode_8k_1", "qwen/assert/decode_8k_64", "qwen/assert/needs_16k_64"}},
		{name: "github actions under -json", env: map[string]string{"GITHUB_ACTIONS": "true"}, json: true,
			wantOutcome: vocab.Error, wantStderr: true,
			wantTests: []string{"qwen/assert/decode_8k_1", "qwen/assert/decode_8k_64", "qwen/assert/needs_16k_64"}},
		{name: "-run keeps one assertion", keep: func(s string) bool { return strings.Contains(s, "8k_1") },
			wantOutcome: vocab.Pass, wantTests: []string{"qwen/assert/decode_8k_1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			sp := loadFinishSpec(t)
			res := finishResults()
			var stream recStream
			var stdout, stderr bytes.Buffer
			env := map[string]string{}
			for k, v := range tt.env {
				if k == "GITHUB_STEP_SUMMARY" {
					v = filepath.Join(dir, v)
				}
				env[k] = v
			}
			out := filepath.Join(dir, "out")
			if err := judgeRun(judgeConfig{Spec: sp, Server: sp.Servers[0], Results: res, OutDir: out, Stream: &stream, Keep: tt.keep}); err != nil {
				t.Fatal(err)
			}
			if err := publish(publishConfig{Results: res, OutDir: out, Stream: &stream, Getenv: func(k string) string { return env[k] },
				Stdout: &stdout, Stderr: &stderr, JSON: tt.json}); err != nil {
				t.Fatal(err)
			}
			if o := res.Outcome(); o != tt.wantOutcome {
				t.Errorf("outcome %v, want %v", o, tt.wantOutcome)
			}
			var got []string
			for _, v := range res.Verdicts {
				got = append(got, v.Test)
			}
			if diff := cmp.Diff(tt.wantTests, got); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}

			// Files: results.json round-trips with the verdicts; the others exist.
			saved, err := result.Read(filepath.Join(out, "results.json"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(res.Verdicts, saved.Verdicts); diff != "" {
				t.Errorf("results.json verdicts (-want +got):\n%s", diff)
			}
			for _, name := range []string{"report.md", "report.html", "junit.xml"} {
				b, err := os.ReadFile(filepath.Join(out, name))
				if err != nil || len(b) == 0 {
					t.Errorf("%s: %v (%d bytes)", name, err, len(b))
				}
				if name == "report.md" && len(tt.wantTests) > 1 && !strings.Contains(string(b), "| qwen/assert/decode_8k_64 | FAIL |") {
					t.Errorf("report.md lacks the failed verdict")
				}
			}

			if len(tt.wantTests) == 3 {
				text := stream.b.String()
				for _, want := range []string{
					"=== RUN   qwen/assert/decode_8k_64\n    specs/finish.hcl:16: decode[\"8K\"][64].total_tps",
					"        decode throughput at 8K x 64 fell below 6,000 tok/s\n--- FAIL: qwen/assert/decode_8k_64",
					"--- PASS: qwen/assert/decode_8k_1",
					"--- ERROR: qwen/assert/needs_16k_64",
				} {
					if !strings.Contains(text, want) {
						t.Errorf("stream lacks %q:\n%s", want, text)
					}
				}
			}

			annotation := "::error file=specs/finish.hcl,line=16,title=qwen/assert/decode_8k_64::"
			if got := strings.Contains(stdout.String(), annotation); got != tt.wantStdout {
				t.Errorf("annotation on stdout = %v, want %v:\n%s", got, tt.wantStdout, stdout.String())
			}
			if got := strings.Contains(stderr.String(), annotation); got != tt.wantStderr {
				t.Errorf("annotation on stderr = %v, want %v:\n%s", got, tt.wantStderr, stderr.String())
			}
			if tt.wantStdout || tt.wantStderr {
				all := stdout.String() + stderr.String()
				if n := strings.Count(all, "::error "); n != 2 {
					t.Errorf("%d annotations, want 2 (the failure and the error):\n%s", n, all)
				}
				if strings.Contains(all, "decode_8k_1") {
					t.Error("a passing assertion was annotated")
				}
				if !strings.Contains(all, "%0Adecode throughput at 8K x 64 fell below 6,000 tok/s") {
					t.Errorf("annotation lacks the message on its own line:\n%s", all)
				}
			}
			b, err := os.ReadFile(filepath.Join(dir, "summary.md"))
			if tt.wantSummary {
				if err != nil {
					t.Fatal(err)
				}
				for _, want := range []string{"### slogate ERROR: Qwen3.5-4B on simulator", "## Sustained decode", "| qwen/assert/decode_8k_64 | FAIL |"} {
					if !strings.Contains(string(b), want) {
						t.Errorf("step summary lacks %q:\n%s", want, b)
					}
				}
			} else if err == nil {
				t.Error("step summary written without GITHUB_STEP_SUMMARY")
			}
		})
	}
}

func TestStepSummaryAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary.md")
	if err := os.WriteFile(path, []byte("earlier step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := appendStepSummary(path, report.NewModel(finishResults())); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(b), "earlier step\n### slogate PASS") {
		t.Errorf("summary did not append:\n%s", b)
	}
}

func TestWriteJUnitFile(t *testing.T) {
	dir := t.TempDir()
	a, b := finishResults(), finishResults()
	b.Spec, b.Server.Name = "specs/other.hcl", "glm"
	path := filepath.Join(dir, "junit.xml")
	if err := writeJUnitFile(path, []*result.Results{a, b}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Name string `xml:"name,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Suites) != 2 || doc.Suites[0].Name != "specs/finish.hcl" || doc.Suites[1].Name != "specs/other.hcl" {
		t.Errorf("suites = %+v", doc.Suites)
	}
	err = writeJUnitFile(filepath.Join(dir, "missing", "j.xml"), nil)
	if err == nil || !strings.Contains(err.Error(), "missing/j.xml") {
		t.Errorf("unwritable path: err = %v", err)
	}
}

// TestWriteReportsSearchChart: a rate search's chart is written beside
// report.md as search-NAME.svg, report.md links to it, and -overwrite's
// clearResults removes it with the rest.
func TestWriteReportsSearchChart(t *testing.T) {
	dir := t.TempDir()
	tc := &result.TrafficCell{Traffic: "steady", Rate: 2, Status: vocab.StatusValid, Launched: 20, Completed: 20, GoodputRPS: 2, GoodputShare: 1, TTFTMsP99: 90, MeasuredS: 10}
	res := &result.Results{Schema: result.Schema, Server: result.Server{Name: "qwen"}, Prefill: []result.PrefillCell{}, Decode: []result.DecodeCell{},
		Search: []result.Search{{Name: "capacity", Traffic: "steady", RateRange: [2]float64{1, 4}, Objective: "cell.ttft_ms_p99 <= 500",
			Rate: 2, RateLower: 1.8, RateUpper: 2.2, Found: true, Probes: []result.SearchProbe{{Rate: 2, Passed: true, Traffic: tc, Decision: result.DecisionMet, Windows: 1}}}}}
	if err := writeReports(dir, res, report.NewModel(res)); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "search-capacity.svg"))
	if err != nil || !bytes.HasPrefix(svg, []byte("<?xml")) {
		t.Fatalf("search-capacity.svg: %v\n%.200s", err, svg)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !bytes.Contains(md, []byte("](search-capacity.svg)")) {
		t.Errorf("report.md does not link search-capacity.svg:\n%s", md)
	}
	if err := clearResults(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "search-capacity.svg")); err == nil {
		t.Error("-overwrite left search-capacity.svg")
	}
}

// TestFinishComparesAssertedMetrics: `run -baseline` compares the metrics
// its own spec's asserts read although its verdicts come after the
// comparison, as a later `diff` of the two runs does from their verdicts
// (docs/method.md#comparing-runs): finishSpec's asserts read ttft_ms, a
// headline metric; this one's reads per_request_tps, which is not.
func TestFinishComparesAssertedMetrics(t *testing.T) {
	src := strings.Replace(finishSpec, "decode[\"8K\"][1].total_tps >= 300", "decode[\"8K\"][1].per_request_tps >= 300", 1)
	sp, diags := spec.LoadSource("specs/finish.hcl", []byte(src), spec.LoadOptions{})
	if diags.HasErrors() {
		t.Fatalf("spec: %v", diags)
	}
	res, base := finishResults(), finishResults()
	var stream recStream
	out := t.TempDir()
	if err := judgeRun(judgeConfig{Spec: sp, Server: sp.Servers[0], Results: res, Baseline: base,
		Policy: compare.Policy{Tolerance: 0.05}, OutDir: out, Stream: &stream}); err != nil {
		t.Fatal(err)
	}
	// Published, report.md's comparison table has its row.
	if err := publish(publishConfig{Results: res, OutDir: out, Getenv: func(string) string { return "" }}); err != nil {
		t.Fatal(err)
	}
	if md, err := os.ReadFile(filepath.Join(out, "report.md")); err != nil || !strings.Contains(string(md), "## Baseline comparison") ||
		!strings.Contains(string(md), "| decode/ctx=8K/conc=1 | per_request_tps (tok/s) |") {
		t.Errorf("report.md lacks the comparison's per_request_tps row (%v):\n%s", err, md)
	}
	if res.Comparison == nil {
		t.Fatalf("no comparison recorded:\n%s", stream.b.String())
	}
	var metrics []string
	for _, r := range res.Comparison.Rows {
		if !slices.Contains(metrics, r.Metric) {
			metrics = append(metrics, r.Metric)
		}
	}
	if !slices.Contains(metrics, "per_request_tps") {
		t.Errorf("compared %v; want per_request_tps, which the spec's assert reads", metrics)
	}
}
