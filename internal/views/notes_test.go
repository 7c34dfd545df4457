package views

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/warning"
)

// TestNoteLine: every note of a run has its line, the one the runner,
// the meter and the launch wrote themselves before they told notes
// (issue 28); a note of no known type falls back to Go's printing.
func TestNoteLine(t *testing.T) {
	tests := []struct {
		name string
		note event.Note
		want string
	}{
		{"run warning", warning.New(warning.KVCapacity, "kv low", "more", nil), "warning: kv low: more"},
		{"cell warning", event.Warned{Warning: warning.New(warning.KVCapacity, "kv implied", "", nil)}, "warning: kv implied"},
		{"starting", event.Starting{Env: map[string]string{"HF_TOKEN": "<redacted>"}, Argv: []string{"vllm", "serve", "m x"}},
			"starting server: env 'HF_TOKEN=<redacted>' vllm serve 'm x'"},
		{"sim no container", event.SimNoContainer{}, "-sim: the simulator runs as a process; the container block is not used"},
		{"still waiting", event.StillWaiting{Stage: "waiting for GET /health to answer 200", Waited: 61400 * time.Millisecond},
			"still waiting for GET /health to answer 200 (61s)"},
		{"prompts built", event.PromptsBuilt{Context: 8192, Prompts: 4, Tokens: 8100, Took: 1234567 * time.Microsecond, TokenizeCalls: 12, Exchanged: 3 << 20},
			"prompts at 8K: 4 of 8100 tokens built in 1.235s with 12 POST /tokenize calls (3.0 MB exchanged)"},
		{"prompts warmed", event.PromptsWarmed{Context: 1024, Streams: 8, Took: 2500 * time.Microsecond}, "prompts at 1K: warmed the prompts of streams 2–8 in 3ms"},
		{"rebooting", event.Rebooting{Boot: 2, Boots: 3}, "boot 2 of 3: restarting the server (measure.boots = 3)"},
		{"attempt log", event.AttemptLogKept{Path: "o/server.attempt1.log"}, "-resume: the resumed run's server log is kept as o/server.attempt1.log"},
		{"endpoint", event.MeasuringEndpoint{Base: "http://h:8000"}, "measuring the running server at http://h:8000 (no boot, no stop)"},
		{"ready", event.ServerReady{Startup: 12345 * time.Millisecond, LogPath: "o/server.log"}, "server ready in 12.3s (log: o/server.log)"},
		{"fact unstated", event.ServerFact{Server: "q", Fact: "kv_cache_dtype", Asked: "fp8"}, "server q: kv_cache_dtype fp8 (from the spec; the server did not say)"},
		{"speculative unstated", event.ServerFact{Server: "q", Fact: "speculative", Asked: "on"}, "server q: speculative on (from the spec; the server did not say)"},
		{"facts unknown", event.ServerFacts{Server: "q", MaxModelLen: 4096}, "server q: version unknown, max_model_len 4096, KV cache unknown"},
		{"facts", event.ServerFacts{Server: "q", Version: "0.11.0", MaxModelLen: 32768, KVTokens: 120000, KVEngines: 2,
			KVSource: "log", KVRead: engine.KVRead{Rule: engine.KVLogParts, Parts: []engine.KVPart{{Rule: engine.KVSizeLine, Tokens: 60000}, {Rule: engine.KVSizeLine, Index: 1, Tokens: 60000}}}},
			"server q: version 0.11.0, max_model_len 32768, KV cache 120000 tokens (from log: engine 0: GPU KV cache size 60,000; engine 1: GPU KV cache size 60,000), 60000 per engine over 2 data-parallel engines"},
		{"facts slots", event.ServerFacts{Server: "l", Version: "b1", MaxModelLen: 8192, KVTokens: 16384, KVSlots: 4, KVSource: "/slots"},
			"server l: version b1, max_model_len 8192, KV cache 16384 tokens (from /slots), 4096 per slot over 4 slots"},
		{"correctness starting", event.CorrectnessStarting{Server: "q", Block: "greedy", Prompts: 20, Concurrency: 4}, `q: correctness "greedy": 20 prompts, greedy, 4 at a time`},
		{"check window", event.CheckWindowDone{Search: "capacity", Rate: 5, Window: 3, Windows: 24, Values: map[string]float64{"ttft_ms_p99": 312.4, "goodput_share": 0.9612}, Elapsed: 72 * time.Second},
			"search capacity: check window 3 of 24 at 5 req/s: goodput_share 0.9612, ttft_ms_p99 312.4 (1m12s)"},
		{"replay window not measured", event.CheckWindowDone{Search: "capacity", Replay: true, Rate: 4.75, Window: 2, Windows: 24, Stop: &result.CheckStop{Rule: result.CheckWindowUnmeasured, Seed: 1, CellReason: "server down"}},
			"search capacity: replay window 2 of 24 at 4.75 req/s not measured, which ends the check: the window of seed 1 could not be measured: server down"},
		{"correctness done", event.CorrectnessDone{Server: "q", Block: "greedy", Outputs: 19, ElapsedS: 12.34, Spent: 24.68}, `q: correctness "greedy": 19 outputs in 12.3s (24.7 GPU-s)`},
		{"correctness done on a CPU", event.CorrectnessDone{Server: "l", Block: "g", Outputs: 2, ElapsedS: 3, Spent: 3, CPU: true}, `l: correctness "g": 2 outputs in 3.0s (3.0 server-s on a CPU server, no GPU)`},
		{"correctness again", event.CorrectnessRemeasured{Server: "q", Block: "g", Why: event.RemeasureSettingsChanged}, `q: -resume: correctness "g" is measured again: its settings changed since that run`},
		{"correctness again: stopped", event.CorrectnessRemeasured{Server: "q", Block: "g", Why: event.RemeasureUnfinished}, `q: -resume: correctness "g" is measured again: the run it continues was stopped while measuring it`},
		{"correctness again: outputs gone", event.CorrectnessRemeasured{Server: "q", Block: "g", Why: event.RemeasureOutputsMissing, Outputs: 1, Prompts: 2},
			`q: -resume: correctness "g" is measured again: correctness.jsonl holds 1 of its 2 outputs`},
		{"correctness again: dataset changed", event.CorrectnessRemeasured{Server: "q", Block: "g", Why: event.RemeasureDatasetChanged, Line: 7},
			`q: -resume: correctness "g" is measured again: its dataset changed since that run (line 7)`},
		{"correctness kept", event.CorrectnessKept{Server: "q", Block: "g", Outputs: 2, File: "correctness.jsonl"}, `q: -resume: correctness "g" is kept: 2 outputs in correctness.jsonl`},
		{"nothing left", event.NothingLeft{Server: "q", CellsFile: "o/cells.jsonl"}, "q: nothing left to measure: every cell of the plan is in o/cells.jsonl"},
		{"flag carried", event.FlagCarried{Flag: "run", Value: "ctx=8K/conc=(1|2)$"}, "-resume: -run 'ctx=8K/conc=(1|2)$', as the interrupted run was given"},
		{"vars carried", event.VarsCarried{Vars: []event.Var{{Name: "a", Value: "1"}, {Name: "b", Value: "x y"}}}, "-resume: -var a=1 -var b='x y', as the interrupted run was given"},
		{"window carried", event.WindowCarried{Window: 90 * time.Second}, "-resume: measuring with the interrupted run's window of 1m30s"},
		{"endpoint carried", event.EndpointCarried{Endpoint: "http://h:8000"}, "-resume: measuring the running server at http://h:8000 (-endpoint) as the interrupted run did"},
		{"sim carried", event.SimCarried{}, "-resume: launching the simulator (-sim) as the interrupted run did"},
		{"unknown", struct{ X int }{7}, fmt.Sprint(struct{ X int }{7})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NoteLine(tt.note); got != tt.want {
				t.Errorf("NoteLine(%#v)\n got %q\nwant %q", tt.note, got, tt.want)
			}
		})
	}
	var b strings.Builder
	WriteResumeNote(&b, event.SimCarried{})
	if want := "slogate: -resume: launching the simulator (-sim) as the interrupted run did\n"; b.String() != want {
		t.Errorf("WriteResumeNote = %q, want %q", b.String(), want)
	}
}
