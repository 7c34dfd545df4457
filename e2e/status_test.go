package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	res "github.com/slogate/slogate/result"
)

// Statuses before and after the run (docs/method.md#over-capacity,
// docs/method.md#plan-statuses, docs/method.md#statuses).

// dp2 is a simulator with two data-parallel engines of 100,000 tokens each
// (200,000 in all).
const dp2 = `"-dp", "2", "--sim-kv-tokens", "100000", "--sim-tbt", "5ms", "--sim-ttft", "20ms", "--sim-prefill-tps", "1000000"`

// TestOverCapacityPerEngine: under data parallelism a request lives in one
// engine's pool. 8K × 23 needs 23 × 8,448 = 194,304 tokens, within the
// 200,000 of both engines, but the busiest engine holds ⌈23 ÷ 2⌉ = 12
// requests: 101,376 tokens > its 100,000, so it is over capacity; 8K × 20
// (10 per engine, 84,480 tokens) fits and is measured.
func TestOverCapacityPerEngine(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	o := runFault(t, mark, 2*time.Minute, "-sim", faultSpec(t, freePort(t), "", dp2, `
measure {
  duration   = "1s"
  max_output = 256
}
matrix "decode" {
  contexts    = ["8K"]
  concurrency = [20, 23]
}
`))
	if o.r.Code != 0 || o.results == nil {
		t.Fatalf("want exit 0\n%s", o.dump())
	}
	if s := o.results.Server; s.KVCacheTokens != 200000 || s.KVCacheEngines != 2 {
		t.Errorf("server: kv_cache_tokens %d over %d engines, want 200000 over 2", s.KVCacheTokens, s.KVCacheEngines)
	}
	cells := decodeCells(t, o, 2)
	const want = "⌈23 ÷ 2⌉ = 12 per engine × (8192 + 256) = 101376 tokens > one engine's KV cache 100000 tokens (200000 over 2 engines)"
	if c := cells["ctx=8K/conc=23"]; c.Status != res.StatusOverCapacity || c.Reason != want {
		t.Errorf("8K × 23: status %s (%s), want over_capacity: %s", c.Status, c.Reason, want)
	}
	if c := cells["ctx=8K/conc=20"]; c.Status != res.StatusValid || c.TotalTPS <= 0 {
		t.Errorf("8K × 20: status %s (%s), total_tps %.1f; want valid and measured (10 per engine fit)", c.Status, c.Reason, c.TotalTPS)
	}
}

// TestPlanShowsStatuses: `slogate plan` marks, before any server starts,
// the cells the spec's kv_cache_tokens puts over capacity (with the
// arithmetic) and those above max_num_seqs (will queue), in text and JSON;
// validate warns about the concurrency above max_num_seqs.
func TestPlanShowsStatuses(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	path := filepath.Join(t.TempDir(), "plan.hcl")
	os.WriteFile(path, []byte(`
server "q" {
  model           = "Qwen/Qwen3.5-4B"
  kv_cache_tokens = "512K"
  max_num_seqs    = 32
}
measure {
  duration   = "1s"
  max_output = 256
}
matrix "decode" {
  contexts    = ["8K"]
  concurrency = [16, 48, 128]
}
`), 0o644)
	const over = "128 × (8192 + 256) = 1081344 tokens > KV cache 524288 tokens (from the spec's kv_cache_tokens)"
	const queue = "48 requests > max_num_seqs 32: 16 will wait"
	text := slogate(t, mark, time.Minute, "", nil, "plan", path)
	if text.Code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", text.Code, text.Stdout, text.Stderr)
	}
	for _, line := range []string{
		"    q/decode/ctx=8K/conc=16\n",
		"    q/decode/ctx=8K/conc=48  will queue: " + queue + "\n",
		"    q/decode/ctx=8K/conc=128  over capacity, will not run: " + over + "\n",
	} {
		if !strings.Contains(text.Stdout, line) {
			t.Errorf("plan text lacks %q:\n%s", line, text.Stdout)
		}
	}
	if !strings.Contains(text.Stderr, "Warning: Concurrency above max_num_seqs") || !strings.Contains(text.Stderr, `Matrix "decode" runs 48, 128 streams`) {
		t.Errorf("plan stderr lacks the max_num_seqs warning:\n%s", text.Stderr)
	}
	js := slogate(t, mark, time.Minute, "", nil, "plan", "-format", "json", path)
	var doc struct {
		Servers []struct {
			Cells []struct {
				res.CellRef
				Status res.Status `json:"status"`
				Reason string     `json:"reason"`
			} `json:"cells"`
			EstimatedS int64 `json:"estimated_s"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(js.Stdout), &doc); err != nil || len(doc.Servers) != 1 {
		t.Fatalf("plan -format json: %v\n%s", err, js.Stdout)
	}
	got := map[int][2]string{}
	for _, c := range doc.Servers[0].Cells {
		if c.Phase == res.PhaseDecode {
			got[c.Concurrency] = [2]string{string(c.Status), c.Reason}
		}
	}
	want := map[int][2]string{16: {"", ""}, 48: {"queued", queue}, 128: {"over_capacity", over}}
	for conc, w := range want {
		if got[conc] != w {
			t.Errorf("JSON cell 8K × %d: %q, want %q", conc, got[conc], w)
		}
	}
	v := slogate(t, mark, time.Minute, "", nil, "validate", path)
	if v.Code != 0 || !strings.Contains(v.Stderr, "Concurrency above max_num_seqs") || !strings.Contains(v.Stderr, "line 13") {
		t.Errorf("validate: exit %d, want 0 with a warning at line 13\n%s", v.Code, v.Stderr)
	}
}
