package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slogate/slogate/result"
	"github.com/slogate/slogate/spec"
)

// TestCellStatus: queued only when the server made requests wait
// (docs/method.md#statuses); the client's restart gaps give a note.
func TestCellStatus(t *testing.T) {
	none := waitEvidence{preemptions: -1, polls: 8}
	with := func(f func(*waitEvidence)) waitEvidence { ev := none; f(&ev); return ev }
	tests := []struct {
		name       string
		ev         waitEvidence
		activeAvg  float64
		want       result.Status
		wantReason string
		wantNote   string
	}{
		{name: "all streams active", ev: none, activeAvg: 63.9, want: result.StatusValid},
		{name: "restart gaps are a note, not queued", ev: none, activeAvg: 55.2, want: result.StatusValid,
			wantNote: "55.2 of 64 streams active on average: the client's restart gaps"},
		{name: "the gate found a queue", ev: with(func(e *waitEvidence) { e.gateQueued, e.gateReason = true, "gate reason" }), activeAvg: 64,
			want: result.StatusQueued, wantReason: "gate reason"},
		{name: "waiting requests during the window", ev: with(func(e *waitEvidence) { e.windowWaiting = true }), activeAvg: 64,
			want: result.StatusQueued, wantReason: "the server reported waiting requests during the window"},
		{name: "waiting requests during the steady-state hold", ev: with(func(e *waitEvidence) { e.gateWaiting = true }), activeAvg: 64,
			want: result.StatusQueued, wantReason: "the server reported waiting requests during the steady-state hold"},
		{name: "preemptions during the window", ev: with(func(e *waitEvidence) { e.preemptions = 3 }), activeAvg: 64,
			want: result.StatusQueued, wantReason: "the server preempted 3 requests during the window (vllm:num_preemptions_total)"},
		{name: "no preemptions", ev: with(func(e *waitEvidence) { e.preemptions = 0 }), activeAvg: 64, want: result.StatusValid},
		{name: "fewer running than outstanding for a sustained part", ev: with(func(e *waitEvidence) { e.shortPolls = 2 }), activeAvg: 64,
			want: result.StatusQueued, wantReason: "the server ran fewer than 64 requests while 64 were outstanding in 2 of 8 polls of the window"},
		{name: "one short poll is a request in transit", ev: with(func(e *waitEvidence) { e.shortPolls = 1 }), activeAvg: 64, want: result.StatusValid},
		{name: "waiting and preemptions are both in the reason", ev: with(func(e *waitEvidence) { e.windowWaiting, e.preemptions = true, 2 }), activeAvg: 64,
			want: result.StatusQueued, wantReason: "the server reported waiting requests during the window; the server preempted 2 requests during the window (vllm:num_preemptions_total)"},
		{name: "a stable queue at the gate says it for the window too", ev: with(func(e *waitEvidence) {
			e.gateQueued, e.gateReason, e.windowWaiting, e.shortPolls = true, "the server ran 24 of 32 requests; 8 waited", true, 8
		}), activeAvg: 24, want: result.StatusQueued, wantReason: "the server ran 24 of 32 requests; 8 waited", wantNote: "24.0 of 64"},
		{name: "short polls under a quarter of the window", ev: with(func(e *waitEvidence) { e.shortPolls, e.polls = 3, 40 }), activeAvg: 64, want: result.StatusValid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, reason, notes := cellStatus(tc.ev, tc.activeAvg, 64)
			if got != tc.want || reason != tc.wantReason {
				t.Errorf("cellStatus = %s %q, want %s %q", got, reason, tc.want, tc.wantReason)
			}
			if note := strings.Join(notes, "\n"); (tc.wantNote == "") != (note == "") || !strings.Contains(note, tc.wantNote) {
				t.Errorf("notes = %q, want %q", note, tc.wantNote)
			}
		})
	}
}

// TestDiscoverKVCapacity: the spec, then kv_cache_size_tokens × engines,
// then the log lines summed over engines, then num_gpu_blocks × block_size
// once (with a warning), else unknown (docs/method.md#kv-capacity).
func TestDiscoverKVCapacity(t *testing.T) {
	logWith := filepath.Join(t.TempDir(), "server.log")
	os.WriteFile(logWith, []byte("(EngineCore_DP0 pid=2) INFO kv_cache_utils.py:1308] GPU KV cache size: 7,000 tokens, Maximum concurrency for 1,000 tokens per request: 7.00x\n"+
		"(EngineCore_DP1 pid=3) INFO kv_cache_utils.py:1308] GPU KV cache size: 7,000 tokens, Maximum concurrency for 1,000 tokens per request: 7.00x\n"), 0o644)
	specTokens := int64(5000)
	tests := []struct {
		name        string
		fake        func() *fakeVLLM
		log         string // the launched server's log ("" = an endpoint)
		spec        *int64
		wantTokens  int64
		wantSource  string
		wantWarning string
	}{
		{name: "the spec beats everything", fake: func() *fakeVLLM { return &fakeVLLM{kvBlocks: 600, kvSizeTokens: 4800, engines: 2} }, log: logWith, spec: &specTokens,
			wantTokens: 5000, wantSource: "spec"},
		{name: "kv_cache_size_tokens × engines beats the log", fake: func() *fakeVLLM { return &fakeVLLM{kvBlocks: 600, kvSizeTokens: 4800, engines: 2} }, log: logWith,
			wantTokens: 9600, wantSource: "metrics"},
		{name: "the log, summed over engines, beats num_gpu_blocks × block_size", fake: func() *fakeVLLM { return &fakeVLLM{kvBlocks: 600, engines: 2, noKVSize: true} }, log: logWith,
			wantTokens: 14000, wantSource: "log"},
		{name: "num_gpu_blocks × block_size once, not per engine, with a warning", fake: func() *fakeVLLM { return &fakeVLLM{kvBlocks: 600, engines: 2, noKVSize: true} },
			wantTokens: 9600, wantSource: "metrics-estimate", wantWarning: "wrong for hybrid models"},
		{name: "unknown", fake: func() *fakeVLLM { return &fakeVLLM{} }, wantWarning: "KV cache capacity unknown"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.fake().start(t)
			r := &run{cfg: Config{Server: &spec.Server{Name: "q", KVCacheTokens: tc.spec}}, client: newAPIClient(s.URL, "", "qwen")}
			if tc.log != "" {
				r.serverProcess = &process{logPath: tc.log}
			}
			tokens, source, warning := r.discoverKVCapacity(context.Background())
			if tokens != tc.wantTokens || source != tc.wantSource {
				t.Errorf("discoverKVCapacity = %d %q, want %d %q", tokens, source, tc.wantTokens, tc.wantSource)
			}
			if (tc.wantWarning == "") != (warning == "") || !strings.Contains(warning, tc.wantWarning) {
				t.Errorf("warning = %q, want one containing %q", warning, tc.wantWarning)
			}
		})
	}
}
