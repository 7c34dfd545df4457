package e2e

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/vocab"
)

// TestLlamaCppTraceAndDial: the traffic of docs/spec.md#traces and
// #prefix-hit-rate on the real llama-server, one slot without its
// host-memory prompt cache (--cache-ram 0: the slot keeps its last prompt
// only, docs/llamacpp.md). The Mooncake fixture's prompts arrive at the
// server at exactly their input_length (prompt_n + cache_n, as
// llama-server counts them), and its shared hash_ids blocks are the
// server's cache hits where the slot still holds them: line 2 finds line
// 1's 1,000 shared tokens, no later line finds its blocks (a line in
// between took the slot). A workload dialling a hit rate of 0.5 measures,
// from llama-server's own cache_n, a prefix_cache_hit_rate within 5
// points of it.
func TestLlamaCppTraceAndDial(t *testing.T) {
	t.Parallel()
	server, models := llamaServer(t)
	mark := newMark(t)
	traces, err := filepath.Abs("../testdata/traces")
	if err != nil {
		t.Fatal(err)
	}
	spec := llamaSpec(t, llamaSpecOpts{Command: server, Model: llamaModel(t, models, "tiny.gguf"), Port: freePort(t), MaxModelLen: 2048, MaxNumSeqs: 1,
		Args: []string{"-t", "1", "--cache-ram", "0"}, Body: fmt.Sprintf(`
workload "moon" {
  dataset = %q
}
traffic "moon" {
  workload = "moon"
  arrivals = "trace"
  duration = "1s"
  warmup   = "0s"
}
workload "dial" {
  prompt        = "random"
  input_tokens  = 256
  output_tokens = 4
  prefix        = { hit_rate = 0.5 }
}
traffic "dial" {
  workload    = "dial"
  concurrency = [1]
  duration    = "3s"
  warmup      = "0s"
}
`, filepath.Join(traces, "mooncake.jsonl"))})
	out := filepath.Join(t.TempDir(), "out")
	r := runLlama(t, mark, "run", "-out", out, spec)
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	// The fixture's lines in order: input_length, and the tokens the slot
	// still holds of it (cache_n).
	want := []struct{ length, cached int64 }{{1000, 0}, {1200, 1000}, {600, 0}, {1500, 0}, {700, 0}, {300, 0}}
	var got []string
	i := 0
	for _, rec := range readRequestRecords(t, out) {
		if !strings.Contains(rec.Cell, "moon") {
			continue
		}
		st := rec.ServerTimings
		if st == nil || i >= len(want) {
			t.Fatalf("mooncake request %d: server timings %+v (of %d lines)", i+1, st, len(want))
		}
		got = append(got, fmt.Sprintf("%d+%d", st.PromptN, st.CacheN))
		if st.PromptN+st.CacheN != want[i].length || st.CacheN != want[i].cached {
			t.Errorf("mooncake line %d: llama-server computed %d and reused %d tokens; want %d in all, %d reused", i+1, st.PromptN, st.CacheN, want[i].length, want[i].cached)
		}
		i++
	}
	t.Logf("mooncake: llama-server's prompt_n+cache_n %v", got)
	if i != len(want) {
		t.Errorf("%d mooncake requests, want the fixture's %d", i, len(want))
	}
	res := readResults(t, out)
	for _, c := range res.Traffic {
		if c.Workload != "dial" {
			continue
		}
		hit, ok := c.Metric(metric.PrefixCacheHitRate)
		t.Logf("dial 0.5: llama-server's prefix_cache_hit_rate %.4f over %d requests (%s)", hit, c.Completed, c.Status)
		if !ok || c.Status != vocab.StatusValid || c.PrefixHitRateDial == nil || *c.PrefixHitRateDial != 0.5 || math.Abs(hit-0.5) > 0.05 {
			t.Errorf("dial 0.5: %s, measured %v (%v), dial %v; want valid, within 5 points", c.Status, hit, ok, c.PrefixHitRateDial)
		}
		return
	}
	t.Errorf("no traffic cell of the dial workload: %+v", res.Traffic)
}
