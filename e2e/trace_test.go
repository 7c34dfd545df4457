package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// traceSpec replays the four trace fixtures (testdata/traces), one
// traffic block each at the trace's times (arrivals = "trace"), on a
// simulator recording what it was sent to record, slowed by slowdown
// ("" for none).
func traceSpec(t *testing.T, port int, record, slowdown string) string {
	t.Helper()
	dir, err := filepath.Abs("../testdata/traces")
	if err != nil {
		t.Fatal(err)
	}
	args := fmt.Sprintf(`"--sim-tbt", "5ms", "--sim-ttft", "40ms", "--sim-prefill-tps", "1000000", "--sim-kv-tokens", "10000000", "--enable-prompt-tokens-details", "--sim-record", %q`, record)
	if slowdown != "" {
		args += `, "--sim-slowdown", "` + slowdown + `"`
	}
	// many is a Mooncake trace of 40 requests 25 ms apart, each opening
	// with one of 4 shared blocks: enough requests (compare.MinRequests)
	// for the paired comparison's bootstrap to bound its changes.
	var many strings.Builder
	for i := range 40 {
		fmt.Fprintf(&many, "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": 8, \"hash_ids\": [%d, %d]}\n", 25*i, 600+10*i, i%4, 100+i)
	}
	manyPath := filepath.Join(t.TempDir(), "many.jsonl")
	if err := os.WriteFile(manyPath, []byte(many.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var body strings.Builder
	for _, f := range []struct{ name, file string }{{"moon", filepath.Join(dir, "mooncake.jsonl")}, {"bailian", filepath.Join(dir, "bailian.jsonl")},
		{"azure", filepath.Join(dir, "azure.csv")}, {"burst", filepath.Join(dir, "burstgpt.csv")}, {"many", manyPath}} {
		fmt.Fprintf(&body, `
workload %[1]q {
  dataset = %[2]q
}
traffic %[1]q {
  workload = %[1]q
  arrivals = "trace"
  duration = "1s"
  warmup   = "0s"
}
`, f.name, f.file)
	}
	return writeSpecLen(t, port, 8192, args, body.String())
}

// TestTraceReplay replays a trace of each format on the simulator
// (docs/spec.md#traces): every prompt sent is exactly its line's
// input_length, in trace order, each request planned at its line's time;
// the Mooncake trace's shared hash_ids blocks are the simulator's cache
// hits (line 2 finds line 1's 1000 shared tokens cached, in whole
// 16-token blocks: 992; line 4 line 2's 1200; line 5 block 3's 512); the
// schedule's trace_schedule hash is the same on a second run, which
// pairs its requests with the first's: against a simulator 50 % slower,
// a 40-request Mooncake trace is decided regressed by the paired
// bootstrap's bounds.
func TestTraceReplay(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	port := freePort(t)
	dir := t.TempDir()
	base, record := filepath.Join(dir, "base"), filepath.Join(dir, "base.jsonl")
	start := time.Now()
	r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-sim", "-out", base, traceSpec(t, port, record, ""))
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	t.Logf("first replay: %v", time.Since(start).Round(time.Millisecond))

	var sent []int
	for _, s := range readSentChat(t, record) {
		sent = append(sent, s.PromptTokens)
	}
	want := []int{1000, 1200, 600, 1500, 700, 300, 40, 30, 70, 50, 374, 396, 879, 91, 1200, 472, 1087, 215, 803}
	for i := range 40 {
		want = append(want, 600+10*i)
	}
	if !slices.Equal(sent, want) {
		t.Errorf("prompt tokens sent %v; the traces' input lengths are %v", sent, want)
	}

	results := readResults(t, base)
	hashes := map[string]string{}
	for _, c := range results.Traffic {
		if !c.Status.Measured() || c.Schedule == nil || c.Schedule.Settings["trace_schedule"] == "" {
			t.Fatalf("cell %s: status %s, schedule %+v; want measured with a trace_schedule", c.Traffic, c.Status, c.Schedule)
		}
		hashes[c.Traffic] = c.Schedule.Hash
	}
	cached := map[int64]int64{}
	planned := map[int64]float64{}
	for _, rec := range readRequestRecords(t, base) {
		if !strings.Contains(rec.Cell, "moon") {
			continue
		}
		if rec.CachedTokens != nil {
			cached[rec.PromptTokens] = *rec.CachedTokens
		}
		if rec.PlannedMs != nil {
			planned[rec.PromptTokens] = *rec.PlannedMs
		}
	}
	wantCached := map[int64]int64{1000: 0, 1200: 992, 600: 0, 1500: 1200, 700: 512, 300: 0}
	wantPlanned := map[int64]float64{1000: 0, 1200: 100, 600: 250, 1500: 400, 700: 600, 300: 800}
	for n, c := range wantCached {
		if cached[n] != c || planned[n] != wantPlanned[n] {
			t.Errorf("mooncake request of %d tokens: %d cached, planned at %v ms; want %d, %v ms", n, cached[n], planned[n], c, wantPlanned[n])
		}
	}

	slow := filepath.Join(dir, "slow")
	start = time.Now()
	r = slogate(t, mark, 2*time.Minute, "", nil, "run", "-sim", "-v", "-out", slow, "-baseline", filepath.Join(base, "results.json"),
		traceSpec(t, port, filepath.Join(dir, "slow.jsonl"), "1.5"))
	t.Logf("second replay against the first: %v", time.Since(start).Round(time.Millisecond))
	for _, line := range strings.Split(r.Stdout, "\n") {
		if strings.Contains(line, "paired") || strings.Contains(line, "regressed") {
			t.Log(line)
		}
	}
	for _, c := range readResults(t, slow).Traffic {
		if c.Schedule == nil || c.Schedule.Hash != hashes[c.Traffic] {
			t.Errorf("cell %s: schedule hash %v on the second run, %s on the first", c.Traffic, c.Schedule, hashes[c.Traffic])
		}
	}
	// The 40-request trace's cell is decided by the paired bootstrap's
	// bounds: "ttft_ms within 5%: +X% [lo, hi] (…): regressed".
	if r.Code != 1 || !strings.Contains(r.Stdout, "regressed (ttft_ms, tbt_ms, e2e_ms); paired, 40 requests") || !regexp.MustCompile(`ttft_ms within 5%: \+[0-9.]+% \[\+[0-9.]+%, \+[0-9.]+%\] \([^)]*\): regressed`).MatchString(r.Stdout) {
		t.Errorf("against the baseline: exit %d; want 1, the 40-request trace paired and regressed on its bounds\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}
