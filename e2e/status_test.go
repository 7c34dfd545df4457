package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/vocab"
)

// Statuses before and after the run (docs/method.md#over-capacity,
// docs/method.md#plan-statuses, docs/method.md#statuses).

// dp2 is a simulator with two data-parallel engines of 100,000 tokens each
// (200,000 in all).
const dp2 = `"-dp", "2", "--sim-kv-tokens", "100000", "--sim-tbt", "5ms", "--sim-ttft", "20ms", "--sim-prefill-tps", "1000000"`

// TestOverCapacityPerEngine: under data parallelism a request lives in one
// engine's pool. 8K × 23 needs 23 × 8,448 = 194,304 tokens, within the
// 200,000 of both engines, but the busiest engine holds ⌈23 ÷ 2⌉ = 12
// requests: 101,376 tokens > its 100,000, so it is over capacity; 8K × 12
// (6 per engine, 50,688 tokens) fits and is measured. (The load balancer
// reads the engines' queues as they were at their last step, so one may
// hold a few more than ⌈C ÷ 2⌉ for a while: the measured cell leaves room
// for that.)
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
  concurrency = [12, 23]
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
	if c := cells["ctx=8K/conc=23"]; c.Status != vocab.StatusOverCapacity || c.Reason != want {
		t.Errorf("8K × 23: status %s (%s), want over_capacity: %s", c.Status, c.Reason, want)
	}
	if c := cells["ctx=8K/conc=12"]; c.Status != vocab.StatusValid || c.TotalTPS <= 0 {
		t.Errorf("8K × 12: status %s (%s), total_tps %.1f; want valid and measured (6 per engine fit)", c.Status, c.Reason, c.TotalTPS)
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
				vocab.CellRef
				Status vocab.Status `json:"status"`
				Reason string       `json:"reason"`
			} `json:"cells"`
			EstimatedS int64 `json:"estimated_s"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(js.Stdout), &doc); err != nil || len(doc.Servers) != 1 {
		t.Fatalf("plan -format json: %v\n%s", err, js.Stdout)
	}
	got := map[int][2]string{}
	for _, c := range doc.Servers[0].Cells {
		if c.Phase == vocab.PhaseDecode {
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

// qwenSpec is a spec for the simulator's Qwen profile with speculative
// decoding (as specs/demo.hcl serves it: several tokens a step, so short
// outputs finish and restart at most steps), attrs added to its server
// block, and body after it.
func qwenSpec(t *testing.T, port int, attrs, body string) string {
	t.Helper()
	src := fmt.Sprintf(`server "qwen" {
  model                  = "Qwen/Qwen3.5-4B"
  served_model_name      = "qwen"
  host                   = "127.0.0.1"
  port                   = %d
  max_model_len          = "64K"
  max_num_batched_tokens = 32768
  ready_timeout          = "20s"
  speculative {
    method                 = "dflash"
    model                  = "z-lab/Qwen3.5-4B-DFlash"
    num_speculative_tokens = 7
  }
%s
}
%s
`, port, attrs, body)
	return specFile(t, "spec.hcl", src)
}

// TestStatusShortOutputsAreValid: 128-token outputs restart every stream
// every second or so; with KV to spare and no cap on running requests the
// server makes no request wait, and every cell is valid — the running
// count's dips at the steps where requests finish are the restarts in
// transit, not a queue (docs/method.md#statuses). This was the matrix whose
// 32K × 64 cell flipped between queued and valid run to run.
func TestStatusShortOutputsAreValid(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	o := runFault(t, mark, 4*time.Minute, "-sim", qwenSpec(t, freePort(t), `  args = ["--sim-kv-tokens", "8000000"]`, `
measure {
  duration   = "2s"
  max_output = 128
}
matrix "decode" {
  contexts    = ["8K", "32K"]
  concurrency = [4, 16, 64]
}
`))
	if o.r.Code != 0 || o.results == nil {
		t.Fatalf("want exit 0\n%s", o.dump())
	}
	for name, c := range decodeCells(t, o, 6) {
		if c.Status != vocab.StatusValid {
			t.Errorf("%s: status %s (%s), want valid", name, c.Status, c.Reason)
		}
		if c.Completed == 0 {
			t.Errorf("%s: no request completed in the window: the outputs are not short enough to restart streams", name)
		}
	}
}

// TestStatusSlowStepsAreNotQueued: with slow engine steps (80 ms a token;
// speculative decoding emits a random few a step, so the streams do not
// finish in step) and 64-token outputs, some of the 32 requests finish at
// most steps, and each restart is missing from the running count until
// the step that schedules it has ended: the count is below C at most
// polls, for longer than a poll interval. Those are the requests in
// transit, not a queue: valid.
func TestStatusSlowStepsAreNotQueued(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	o := runFault(t, mark, 2*time.Minute, "-sim", qwenSpec(t, freePort(t), `  args = ["--sim-tbt", "80ms", "--sim-ttft", "20ms", "--sim-prefill-tps", "1000000"]`, `
measure {
  duration   = "3s"
  max_output = 64
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [32]
}
`))
	if o.r.Code != 0 || o.results == nil {
		t.Fatalf("want exit 0\n%s", o.dump())
	}
	c := decodeCells(t, o, 1)["ctx=1K/conc=32"]
	if c.Status != vocab.StatusValid {
		t.Errorf("1K × 32: status %s (%s), want valid", c.Status, c.Reason)
	}
	if c.Completed < 16 {
		t.Errorf("1K × 32: %d requests completed in the window, want streams restarting all the time", c.Completed)
	}
}

// TestStatusSteadyQueue: 128 streams over 64 seats with 256-token outputs.
// Requests finish and restart all the time, so the running count wobbles
// below 64 and some running requests are in their prefill, but the queue
// is steady: the gate decides it within seconds (it waited for its 2m18s
// timeout before), from what the runner recorded: the cell's wall time
// less its window. 16 streams over 8 seats are queued too, on a build with
// the waiting breakdown and on one without it.
func TestStatusSteadyQueue(t *testing.T) {
	t.Parallel()
	t.Run("128 over 64 seats, short outputs", func(t *testing.T) {
		t.Parallel()
		mark := newMark(t)
		defer noLeftovers(t, mark)
		o := runFault(t, mark, 4*time.Minute, "-sim", qwenSpec(t, freePort(t), "  max_num_seqs = 64", `
measure {
  duration   = "2s"
  max_output = 256
}
matrix "decode" {
  contexts    = ["8K"]
  concurrency = [128]
}
`))
		if o.r.Code != 0 || o.results == nil {
			t.Fatalf("want exit 0\n%s", o.dump())
		}
		c := decodeCells(t, o, 1)["ctx=8K/conc=128"]
		if c.Status != vocab.StatusQueued || !strings.HasPrefix(c.Reason, "the server ran 64 of 128 requests; ") {
			t.Errorf("8K × 128: status %s (%s), want queued: the server ran 64 of 128 requests; … waited", c.Status, c.Reason)
		}
		// The gate's timeout here is 30 s + 3 s + 128 × 8,192 ÷ 10,000 s
		// = 2m18s; a steady queue is decided after the 3 s hold.
		if gate := c.ElapsedS - c.MeasuredS; gate > 15 {
			t.Errorf("8K × 128: %.1f s before the window (elapsed %.1f s, window %.1f s), want under 15 s", gate, c.ElapsedS, c.MeasuredS)
		}
		t.Logf("8K × 128 decided %.1f s before its %.1f s window", c.ElapsedS-c.MeasuredS, c.MeasuredS)
	})
	for _, tc := range []struct{ name, args string }{
		{name: "16 over 8 seats", args: fastSim + `, "--max-num-seqs", "8"`},
		{name: "16 over 8 seats, a build without num_requests_waiting_by_reason", args: fastSim + `, "--max-num-seqs", "8", "--sim-no-waiting-by-reason"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mark := newMark(t)
			defer noLeftovers(t, mark)
			o := runFault(t, mark, 2*time.Minute, "-sim", faultSpec(t, freePort(t), "", tc.args, `
measure {
  duration   = "1s"
  max_output = 128
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [16]
}
`))
			if o.r.Code != 0 || o.results == nil {
				t.Fatalf("want exit 0\n%s", o.dump())
			}
			c := decodeCells(t, o, 1)["ctx=1K/conc=16"]
			if c.Status != vocab.StatusQueued || !strings.HasPrefix(c.Reason, "the server ran 8 of 16 requests; ") {
				t.Errorf("1K × 16: status %s (%s), want queued: the server ran 8 of 16 requests; … waited", c.Status, c.Reason)
			}
		})
	}
}
