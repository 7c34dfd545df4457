package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	slores "github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// writeResults writes a results.json whose decode 8K×64 total_tps and 8K×1
// ttft_ms are the given values; everything else is fixed.
func writeResults(t *testing.T, path string, tps64, ttft1 float64) {
	t.Helper()
	r := &slores.Results{
		Spec:    "specs/demo.hcl",
		Server:  slores.Server{Name: "demo", Model: "demo/model", Version: "0.11.0", Simulated: true},
		Started: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC),
		Prefill: []slores.PrefillCell{{Context: 8192, Status: vocab.StatusValid, TPS: 40000, TTFTMs: 204.8}},
		Decode: []slores.DecodeCell{
			{Matrix: "decode", Context: 8192, Concurrency: 1, Status: vocab.StatusValid, TotalTPS: 408.2, TTFTMs: ttft1, TBTMs: 2.4},
			{Matrix: "decode", Context: 8192, Concurrency: 64, Status: vocab.StatusValid, TotalTPS: tps64, TTFTMs: 300, TBTMs: 10.5},
			{Matrix: "decode", Context: 16384, Concurrency: 64, Status: vocab.StatusOverCapacity},
		},
	}
	if err := r.Write(path); err != nil {
		t.Fatal(err)
	}
}

func TestDiff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := filepath.Join(dir, "base.json")
	writeResults(t, base, 6018.4, 50)
	tests := []struct {
		name     string
		tps64    float64
		ttft1    float64
		extra    []string
		code     int
		inStdout []string
	}{
		{name: "same numbers", tps64: 6018.4, ttft1: 50, code: 0, inStdout: []string{"0 regressed"}},
		{name: "throughput regression", tps64: 5421.3, ttft1: 50, code: 1, inStdout: []string{"-9.9% ✗", "1 regressed"}},
		{name: "latency regression", tps64: 6018.4, ttft1: 60, code: 1, inStdout: []string{"decode ttft_ms", "+20.0% ✗"}},
		{name: "latency regression within a wider tolerance", tps64: 6018.4, ttft1: 60, extra: []string{"-tolerance", "25%"}, code: 0, inStdout: []string{"tolerance 25%"}},
		{name: "improvement", tps64: 7000, ttft1: 40, code: 0, inStdout: []string{"↑", "0 regressed, 2 improved"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := filepath.Join(t.TempDir(), "results.json")
			writeResults(t, b, tc.tps64, tc.ttft1)
			r := slogate(t, newMark(t), 20*time.Second, "", nil, append([]string{"diff", base, b}, tc.extra...)...)
			if r.Code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, tc.code, r.Stdout, r.Stderr)
			}
			for _, s := range tc.inStdout {
				if !strings.Contains(r.Stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.Stdout)
				}
			}
			if !strings.Contains(r.Stdout, "over cap") {
				t.Errorf("over-capacity cell not shown:\n%s", r.Stdout)
			}
		})
	}
}

func TestDiffUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := filepath.Join(dir, "a.json")
	writeResults(t, a, 6018.4, 50)
	for _, args := range [][]string{
		{"diff", a},
		{"diff", a, filepath.Join(dir, "missing.json")},
		{"diff", "-tolerance", "5", a, a},
	} {
		r := slogate(t, newMark(t), 20*time.Second, "", nil, args...)
		if r.Code != 2 {
			t.Errorf("slogate %v: exit %d, want 2\nstderr:\n%s", args, r.Code, r.Stderr)
		}
		if !strings.Contains(r.Stderr, "slogate:") && !strings.Contains(r.Stderr, "Usage:") {
			t.Errorf("slogate %v: no explanation on stderr:\n%s", args, r.Stderr)
		}
	}
}

// TestDiffFormats: diff -format md and json say what the text says, with
// the same exit code: the verdict on top and a row per cell and metric in
// Markdown, the rows' figures in JSON; an unknown format is a usage error.
func TestDiffFormats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base, worse := filepath.Join(dir, "base.json"), filepath.Join(dir, "worse.json")
	writeResults(t, base, 6018.4, 50)
	writeResults(t, worse, 5421.3, 50)
	md := slogate(t, newMark(t), 20*time.Second, "", nil, "diff", "-format", "md", base, worse)
	if md.Code != 1 || !strings.HasPrefix(md.Stdout, "### slogate diff: FAIL (exit 1): 1 of 4 cells regressed, 2 within tolerance, 1 measured in neither run\n") ||
		!strings.Contains(md.Stdout, "| decode/ctx=8K/conc=64 | total_tps (tok/s) | 6018.4 | 5421.3 | -9.9% | — | FAIL: regressed |\n") {
		t.Errorf("-format md: exit %d, want 1 with the verdict on top and the regressed row\nstdout:\n%s\nstderr:\n%s", md.Code, md.Stdout, md.Stderr)
	}
	js := slogate(t, newMark(t), 20*time.Second, "", nil, "diff", "-format", "json", base, worse)
	var doc struct {
		Outcome  string `json:"outcome"`
		ExitCode int    `json:"exit_code"`
		Rows     []slores.ComparisonRow
	}
	if err := json.Unmarshal([]byte(js.Stdout), &doc); err != nil {
		t.Fatalf("-format json: %v\n%s", err, js.Stdout)
	}
	found := false
	for _, r := range doc.Rows {
		if r.Cell == "decode/ctx=8K/conc=64" && r.Metric == "total_tps" {
			found = *r.Baseline == 6018.4 && *r.Now == 5421.3 && r.Decision == "regressed" && r.Outcome == vocab.Fail
		}
	}
	if js.Code != 1 || doc.Outcome != "fail" || doc.ExitCode != 1 || !found {
		t.Errorf("-format json: exit %d, outcome %q, exit_code %d, the 8K×64 total_tps row found %v; want a regression, exit 1\n%s", js.Code, doc.Outcome, doc.ExitCode, found, js.Stdout)
	}
	bad := slogate(t, newMark(t), 20*time.Second, "", nil, "diff", "-format", "html", base, worse)
	if bad.Code != 2 || !strings.Contains(bad.Stderr, "html") {
		t.Errorf("-format html: exit %d, want 2 naming it\nstderr:\n%s", bad.Code, bad.Stderr)
	}
}
