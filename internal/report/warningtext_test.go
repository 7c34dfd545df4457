package report

import (
	"testing"

	"github.com/slogate/slogate/internal/hostenv"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/warning"
)

// TestWarningText: each code whose words are made here, worded from its
// figures and subject, the whole text the reports show (String: summary,
// ": ", detail), as the meter and the runner wrote it before they created
// these warnings wordless; a given summary kept where the figures cannot
// hold it; another code left as it is.
func TestWarningText(t *testing.T) {
	type figs = map[string]float64
	moved := func(kind hostenv.Kind, before, after, bound float64) warning.Warning {
		return warning.New(warning.EnvironmentMoved, "", "", figs{warning.FigBefore: before, warning.FigAfter: after, warning.FigBound: bound}).About(string(kind))
	}
	const movedDetail = `: other work on this machine changed what the run could use; with repeat = "auto" the run is replaced`
	tests := []struct {
		name string
		w    warning.Warning
		want string
	}{
		{name: "slow scrape", w: warning.New(warning.SlowScrape, "", "", figs{warning.FigMeanMs: 7.25, warning.FigMaxMs: 30.04, warning.FigScrapes: 120, warning.FigIntervalMs: 50}),
			want: "GET /metrics took 7.2 ms on average (max 30.0 ms, 120 scrapes at one per 50ms): polling may perturb the server (docs/method.md#polling)"},
		{name: "gate timed out, gauges read, streams not all decoding", w: warning.New(warning.GateTimedOut, "", "", figs{warning.FigTimeoutS: 33, warning.FigDecoding: 12,
			warning.FigConcurrency: 16, warning.FigRunning: 16, warning.FigWaiting: 0, warning.FigHeldS: 0.4, warning.FigObservedS: 30}),
			want: "steady state not reached within 33s (12 of 16 streams decoding; server running 16, waiting 0); measured anyway: the server made no request wait: " +
				"not every stream was past its first token (requests waiting or fewer than 16 running for 0.4s of 30.0s)"},
		{name: "gate timed out, every stream decoding", w: warning.New(warning.GateTimedOut, "", "", figs{warning.FigTimeoutS: 60, warning.FigDecoding: 4,
			warning.FigConcurrency: 4, warning.FigRunning: 4, warning.FigWaiting: 0, warning.FigHeldS: 0, warning.FigObservedS: 59.5}),
			want: "steady state not reached within 1m0s (4 of 4 streams decoding; server running 4, waiting 0); measured anyway: the server made no request wait " +
				"(requests waiting or fewer than 4 running for 0.0s of 59.5s)"},
		{name: "gate timed out, no gauges", w: warning.New(warning.GateTimedOut, "", "", figs{warning.FigTimeoutS: 33, warning.FigDecoding: 12, warning.FigConcurrency: 16}),
			want: "steady state not reached within 33s (12 of 16 streams decoding); measured anyway: no request gauges in /metrics to tell whether the server made requests wait"},
		{name: "warm-up not sent", w: warning.New(warning.WarmUpFailed, "", "the server is asleep", figs{warning.FigContext: 8192, warning.FigNotSent: 1}),
			want: "cache warm-up request at 8K not sent: the server is asleep"},
		{name: "warm-up failed", w: warning.New(warning.WarmUpFailed, "", "error: stream stalled", figs{warning.FigContext: 16384}),
			want: "cache warm-up request at 16K failed: error: stream stalled"},
		{name: "a stream's warm-up failed", w: warning.New(warning.WarmUpFailed, "", "EOF", figs{warning.FigContext: 8192, warning.FigStream: 3}),
			want: "cache warm-up request of stream 3 at 8K failed: EOF"},
		{name: "decode streams not closed", w: warning.New(warning.StreamsNotClosed, "", "", figs{warning.FigTimeoutS: 10}).About("decode/ctx=8K/conc=64"),
			want: "decode/ctx=8K/conc=64: streams did not close within 10s"},
		{name: "traffic requests not closed", w: warning.New(warning.StreamsNotClosed, "", "", figs{warning.FigTimeoutS: 10, warning.FigTrafficCell: 1}).About("traffic/replay/rate=4"),
			want: "traffic/replay/rate=4: requests did not close within 10s"},
		{name: "no completion", w: warning.New(warning.NoCompletion, "", "", figs{warning.FigLaunched: 3, warning.FigWindowS: 2}),
			want: "no request completed in the 2s window (3 launched), so its latencies are unmeasured: give the traffic block a longer duration or a higher rate"},
		{name: "unfinished", w: warning.New(warning.Unfinished, "", "", figs{warning.FigUnfinished: 4, warning.FigDrainS: 1.5}),
			want: "4 of the window's requests were still running 1.5s after it closed; they count as not meeting the SLO"},
		{name: "reasoning without an answer", w: warning.New(warning.NoAnswer, "", "", figs{warning.FigUnanswered: 3, warning.FigCompleted: 40, warning.FigTokens: 256}),
			want: "3 of the window's 40 completed requests streamed reasoning and no answer token (up to 256 output tokens), so their TTFO is unmeasured: raise max_output so the reasoning can end, or check the server's --reasoning-parser (docs/method.md#reasoning)"},
		{name: "dataset counts: its summary kept", w: warning.New(warning.DatasetCounts, "dataset sharegpt.json", "", figs{warning.FigExamined: 100, warning.FigKept: 80,
			warning.FigDropped: 20, warning.FigTooFewTurns: 5, warning.FigPromptTooShort: 4, warning.FigOutputTooShort: 3, warning.FigPromptTooLong: 2, warning.FigTotalTooLong: 6}),
			want: "dataset sharegpt.json: 100 entries examined, 80 kept, 20 dropped (5 with fewer than two turns, 4 prompts too short, 3 outputs too short, 2 prompts too long, 6 too long in all)"},
		{name: "prefix hit off the dial", w: warning.New(warning.PrefixHitOffDial, "", "", figs{warning.FigDialled: 0.5, warning.FigMeasured: 0.0625, warning.FigBound: 0.1}),
			want: "the server's prefix cache served 6.2% of the prompt tokens, the workload dialled 50.0% (more than 10 points apart): " +
				"a prefix block other than the engine's KV block (vLLM's CPU build: 128), prefix caching off, evictions, or too few requests for the cell's first, cold ones to weigh little (docs/spec.md#prefix-hit-rate)"},
		{name: "prefix block not the server's", w: warning.New(warning.PrefixBlockMismatch, "", "", figs{warning.FigBlock: 16, warning.FigServerBlock: 128}),
			want: "the workload dials its prefix hit rate in blocks of 16 tokens, the server caches whole blocks of 128: " +
				"it serves only the shared tokens that fill its own blocks: set prefix.block = 128 (docs/spec.md#prefix-hit-rate)"},
		{name: "server_total_tps gap", w: warning.New(warning.ServerTPSGap, "", "", figs{warning.FigServerTotalTPS: 900, warning.FigTotalTPS: 1000, warning.FigGap: -0.1}),
			want: "server_total_tps 900.0 differs from total_tps 1000.0 by -10.0%"},
		{name: "counter gap", w: warning.New(warning.ServerCounterGap, "", "", figs{warning.FigCounterTokens: 5000, warning.FigFinishedTokens: 4000, warning.FigUncertainTokens: 200}),
			want: "the server's finished-tokens counter moved by 5000 between the scrapes around the window, but the requests that finished between them predicted 4000 " +
				"(200 more finished too near a scrape to place): the counter and the requests' own timings disagree: tokens counted twice or lost, or a request the client did not see"},
		{name: "rejections gap", w: warning.New(warning.RejectionsGap, "", "", figs{warning.FigServerRejected: 12, warning.FigClientRejected: 10, warning.FigUnanswered: 1}),
			want: "the server counted 12 requests refused at admission over the cell, the client saw 10 refused (and closed 1 before any answer): the server's rejection counter " +
				"and the client's count disagree: requests refused that the client did not see, or refusals the server did not count (docs/method.md#rejections)"},
		{name: "moved: calibration", w: moved(hostenv.Calibration, 10.04, 13.5, 1.25),
			want: "the machine moved: a fixed CPU calibration took 10 ms at its fastest after a run of the cell and 13.5 ms after this one (beyond 1.2×)" + movedDetail},
		{name: "moved: the server waited", w: moved(hostenv.ServerWait, 3, 45, 20),
			want: "the server waited: its threads spent 45 % of the time they were ready to run waiting for a CPU, against 3 % at the least in the cell's runs (more than 20 points)" + movedDetail},
		{name: "moved: steal", w: moved(hostenv.Steal, 0, 7.25, 5),
			want: "the machine moved: 7.2 % of its CPU time was stolen during the run (over 5 %)" + movedDetail},
		{name: "moved: CPU pressure", w: moved(hostenv.Pressure, 1.5, 30, 20),
			want: "the machine moved: CPU pressure (some avg10) rose from 1.5 % after the cell's first run to 30.0 % after this one (more than 20 points)" + movedDetail},
		{name: "server's per-request rate, timings", w: warning.New(warning.ServerRequestTPSGap, "", "",
			figs{warning.FigServerPerRequestTPS: 479.2, warning.FigPerRequestTPS: 226, warning.FigGap: 1.1203539823008849}).About(result.ServerRateTimings),
			want: "the server's own per-request rate 479.2 tok/s (timings.predicted_per_second, median) differs from per_request_tps 226.0 by +112.0%: " +
				"the client's clock and the server's disagree on how fast a request's tokens came: a loaded client, a slow network, or tokens the client miscounts"},
		{name: "server's per-request rate, histogram", w: warning.New(warning.ServerRequestTPSGap, "", "",
			figs{warning.FigServerPerRequestTPS: 100, warning.FigPerRequestTPS: 125, warning.FigGap: -0.2}).About(result.ServerRateHistogram),
			want: "the server's own per-request rate 100.0 tok/s (its inter-token histogram: tokens over waits in the window) differs from per_request_tps 125.0 by -20.0%: " +
				"the client's clock and the server's disagree on how fast a request's tokens came: a loaded client, a slow network, or tokens the client miscounts"},
		{name: "deferred", w: warning.New(warning.Deferred, "", "", figs{warning.FigDeferred: 3}).About("vllm:num_requests_waiting_by_reason{reason=\"deferred\"}"),
			want: `up to 3 requests were deferred during the window (vllm:num_requests_waiting_by_reason{reason="deferred"}), not waiting for capacity`},
		{name: "search without an answer: its error kept", w: warning.New(warning.SearchNoAnswer, "", "the probe at 8 req/s could not be measured: boom", nil).About("cap"),
			want: "search cap stopped without an answer: the probe at 8 req/s could not be measured: boom"},
		{name: "correctness errors", w: warning.New(warning.CorrectnessErrors, "", "", figs{warning.FigRequests: 50, warning.FigFailed: 2}).About("greedy"),
			want: `correctness "greedy": 2 of 50 requests failed: their outputs in correctness.jsonl record why`},
		{name: "port in use", w: warning.New(warning.PortInUse, "", "", nil).About("127.0.0.1:8000"),
			want: "port 127.0.0.1:8000 still accepts connections after the server's process group ended: another process listens there"},
		{name: "another code: as it is", w: warning.New(warning.NoMetrics, "GET /metrics failed", "connection refused", nil),
			want: "GET /metrics failed: connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WarningText(tt.w).String(); got != tt.want {
				t.Errorf("WarningText =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
