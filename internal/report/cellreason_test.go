package report

import (
	"testing"

	"github.com/slogate/slogate/internal/hostenv"
	"github.com/slogate/slogate/internal/result"
)

// TestCellReasonText: each code of a cell's reasons worded from its
// figures and names, the whole sentence a cell's Reason has always held
// (the meter and the runner decide; this words them for results.json,
// the console, the reports and JUnit); reasons joined in turn; a
// results.json written before reasons gives its sentence, and a code this
// build does not know gives the code.
func TestCellReasonText(t *testing.T) {
	type figs = map[string]float64
	type names = map[string]string
	reason := func(code result.ReasonCode, f figs, n names) []result.CellReason {
		return []result.CellReason{{Code: code, Figures: f, Names: n}}
	}
	tests := []struct {
		name     string
		reasons  []result.CellReason
		sentence string
		want     string
	}{
		{name: "streams not stopped", reasons: reason(result.ReasonStreamsNotStopped, figs{result.FigTimeoutS: 10}, nil),
			want: "streams did not stop within 10s"},
		{name: "requests not stopped", reasons: reason(result.ReasonRequestsNotStopped, figs{result.FigTimeoutS: 10}, nil),
			want: "requests did not stop within 10s"},
		{name: "no traffic block", reasons: reason(result.ReasonNoTrafficBlock, nil, names{result.NameBlock: "steady"}),
			want: `the spec has no traffic block "steady"`},
		{name: "context too long", reasons: reason(result.ReasonContextTooLong, figs{result.FigContext: 8192, result.FigMaxOutput: 256, result.FigMaxModelLen: 4096}, nil),
			want: "context 8192 + max_output 256 exceeds max_model_len 4096"},
		{name: "asleep, one engine", reasons: reason(result.ReasonAsleep, figs{result.FigAsleep: 1}, names{result.NameHow: "vllm:engine_sleep_state"}),
			want: "the server is asleep, not idle (its engine): vllm:engine_sleep_state"},
		{name: "asleep, engines at a level", reasons: reason(result.ReasonAsleep, figs{result.FigAsleep: 2, result.FigSleepLevel: 1}, names{result.NameHow: "vllm:engine_sleep_state"}),
			want: "the server is asleep, not idle (2 of its engines at sleep level 1): vllm:engine_sleep_state"},
		{name: "refused in the window", reasons: reason(result.ReasonRefusedWindow, figs{result.FigRefused: 57, result.FigConcurrency: 6}, nil),
			want: "the server refused 57 of the window's requests at admission (its queue limit), so fewer than 6 ran"},
		{name: "refused at the gate", reasons: reason(result.ReasonRefusedGate, figs{result.FigHeldS: 3, result.FigRefused: 40, result.FigConcurrency: 64}, nil),
			want: "the server refused requests at admission throughout the steady-state gate's 3.0s (40 refused): it did not run 64"},
		{name: "stable queue", reasons: reason(result.ReasonStableQueue, figs{result.FigRunning: 64, result.FigConcurrency: 128, result.FigWaiting: 66}, nil),
			want: "the server ran 64 of 128 requests; 66 waited"},
		{name: "gate timed out, gauges read", reasons: reason(result.ReasonGateTimedOut, figs{result.FigTimeoutS: 33, result.FigDecoding: 12, result.FigConcurrency: 16,
			result.FigRunning: 12, result.FigWaiting: 0, result.FigHeldS: 30, result.FigObservedS: 30}, nil),
			want: "steady state not reached within 33s (12 of 16 streams decoding; server running 12, waiting 0); the server made requests wait for 30.0s of the 30.0s observed; measured anyway"},
		{name: "gate timed out, no gauges", reasons: reason(result.ReasonGateTimedOut, figs{result.FigTimeoutS: 60, result.FigDecoding: 3, result.FigConcurrency: 4,
			result.FigHeldS: 1.25, result.FigObservedS: 58.04}, nil),
			want: "steady state not reached within 1m0s (3 of 4 streams decoding); the server made requests wait for 1.2s of the 58.0s observed; measured anyway"},
		{name: "waiting in the window", reasons: reason(result.ReasonWaitingWindow, nil, nil),
			want: "the server reported requests waiting for capacity during the window"},
		{name: "waiting in the hold", reasons: reason(result.ReasonWaitingHold, nil, nil),
			want: "the server reported requests waiting for capacity during the steady-state hold"},
		{name: "shortfall", reasons: reason(result.ReasonShortfall, figs{result.FigConcurrency: 64, result.FigHeldS: 0.5, result.FigObservedS: 2}, nil),
			want: "the server ran fewer than 64 requests while 64 were outstanding (beyond those just sent) for 0.5s of the window's 2.0s"},
		{name: "preempted", reasons: reason(result.ReasonPreempted, figs{result.FigPreempted: 3}, names{result.NameCounter: "vllm:num_preemptions_total"}),
			want: "the server preempted 3 requests during the window (vllm:num_preemptions_total)"},
		{name: "traffic refused", reasons: reason(result.ReasonTrafficRefused, figs{result.FigRefused: 7, result.FigLaunched: 40}, nil),
			want: "the server refused 7 of the window's 40 requests at admission (its queue limit)"},
		{name: "waited in a row", reasons: reason(result.ReasonWaitedInARow, nil, nil),
			want: "the server reported waiting requests in two polls in a row during the window"},
		{name: "cap hits", reasons: reason(result.ReasonCapHits, figs{result.FigCapHits: 3, result.FigMaxOutstanding: 64}, nil),
			want: "3 arrivals found 64 requests outstanding (max_outstanding) and were launched late"},
		{name: "unfinished", reasons: reason(result.ReasonUnfinished, figs{result.FigUnfinished: 2}, nil),
			want: "2 of the window's requests did not finish"},
		{name: "client lag, its median", reasons: reason(result.ReasonClientLagMedian, figs{result.FigLagP50Ms: 123.456, result.FigLagBoundMs: 50, result.FigLagFloorS: 0.05,
			result.FigLagGapShare: 0.1, result.FigMeanGapMs: 10, result.FigLagP99Ms: 300.2, result.FigLagMaxMs: 412.9, result.FigArrivals: 250}, nil),
			want: "the client fell behind its schedule: median lag 123 ms > 50.0 ms (the larger of 50ms and 10 % of the 10.0 ms mean gap), p99 300 ms, max 413 ms over 250 arrivals; " +
				"slogate could not drive this rate from this machine, so the cell measures the client, not the server"},
		{name: "client lag, its most", reasons: reason(result.ReasonClientLagMax, figs{result.FigLagMaxMs: 1500, result.FigLagMostS: 1, result.FigLagP50Ms: 2.345,
			result.FigLagP99Ms: 12.34, result.FigArrivals: 9}, nil),
			want: "the client fell behind its schedule: lag up to 1500 ms > 1s (median 2.35 ms, p99 12.3 ms) over 9 arrivals; " +
				"slogate could not drive this rate from this machine, so the cell measures the client, not the server"},
		{name: "late first token, timings", reasons: reason(result.ReasonLateFirstToken, figs{result.FigTTFTMs: 300, result.FigServerMs: 100, result.FigBound: 1.5},
			names{result.NameSource: result.ServerPrefillTimings}),
			want: "the client's ttft_ms 300.0 is 3.00× the server's own 100.0 ms (timings.prompt_ms), beyond the 1.5× bound: the client read the first token late"},
		{name: "late first token, histogram", reasons: reason(result.ReasonLateFirstToken, figs{result.FigTTFTMs: 300, result.FigServerMs: 100, result.FigBound: 1.5},
			names{result.NameSource: result.ServerPrefillHistogram}),
			want: "the client's ttft_ms 300.0 is 3.00× the server's own 100.0 ms (its time-to-first-token histogram over the request), beyond the 1.5× bound: the client read the first token late"},
		{name: "few tokens", reasons: reason(result.ReasonFewTokens, figs{result.FigOutputTokens: 7, result.FigMeasuredS: 0.50123, result.FigMinTokens: 20}, nil),
			want: "the window held 7 output tokens in 0.501 s, fewer than the 20 its throughput needs (a token either side is more than 5 % of fewer)"},
		{name: "rate gap, timings", reasons: reason(result.ReasonRateGap, figs{result.FigPerRequestTPS: 226, result.FigServerTPS: 479.2, result.FigBound: 1.5},
			names{result.NameSource: result.ServerRateTimings}),
			want: "the client's per_request_tps 226.0 is 0.47× the server's own 479.2 tok/s (timings.predicted_per_second, median), beyond the 1.5× bound either way: the client could not keep up with what the server sent"},
		{name: "rate gap, histogram", reasons: reason(result.ReasonRateGap, figs{result.FigPerRequestTPS: 60, result.FigServerTPS: 180, result.FigBound: 1.5},
			names{result.NameSource: result.ServerRateHistogram}),
			want: "the client's per_request_tps 60.0 is 0.33× the server's own 180.0 tok/s (its inter-token histogram: tokens over waits in the window), beyond the 1.5× bound either way: the client could not keep up with what the server sent"},
		{name: "starved", reasons: reason(result.ReasonStarved, figs{result.FigWaitPct: 80, result.FigBoundPct: 50, result.FigCPUs: 0.456}, nil),
			want: "the server was starved: its threads spent 80 % of the time they were ready to run waiting for a CPU (over 50 %), using 0.46 CPUs: " +
				"it had less than half the CPU time it was ready to use, so the figures are the machine's contention, not the build's"},
		{name: "a repeat failed", reasons: reason(result.ReasonRepeatFailed, figs{result.FigRepeat: 2, result.FigOf: 3, result.FigKept: 1},
			names{result.NameCause: "server error in stream: engine died"}),
			want: "repeat 2 of 3 could not be measured: server error in stream: engine died (the 1 measured before are kept in samples)"},
		{name: "a repeat failed after runs left out", reasons: reason(result.ReasonRepeatFailedLeftOut, figs{result.FigRepeat: 3, result.FigOf: 3, result.FigLeftOut: 2},
			names{result.NameCause: "interrupted", result.NameLastLeftOut: "the machine moved"}),
			want: "repeat 3 of 3 could not be measured: interrupted (the 2 before it were left out: the machine moved)"},
		{name: "none measured", reasons: []result.CellReason{
			{Code: result.ReasonNoneMeasured, Figures: figs{result.FigRuns: 2, result.FigRepeat: 1}, Names: names{result.NameCause: "the window held 7 output tokens"}},
			{Code: result.ReasonRunLeftOut, Figures: figs{result.FigRepeat: 2}, Names: names{result.NameCause: "the server was starved"}}},
			want: "none of its 2 runs could be measured: run 1: the window held 7 output tokens; run 2: the server was starved"},
		{name: "the machine moved", reasons: reason(result.ReasonMachineMoved, figs{result.FigBefore: 0, result.FigAfter: 7.25, result.FigBound: 5},
			names{result.NameKind: string(hostenv.Steal)}),
			want: "the machine moved: 7.2 % of its CPU time was stolen during the run (over 5 %)"},
		{name: "logprobs refused", reasons: reason(result.ReasonLogprobsRefused, nil, names{result.NameCause: "HTTP 400: logprobs are not supported"}),
			want: "logprobs: the server refused them (HTTP 400: logprobs are not supported); the outputs were asked without, and no near tie can be told"},
		{name: "reasons in turn", reasons: append(reason(result.ReasonWaitingWindow, nil, nil), reason(result.ReasonPreempted, figs{result.FigPreempted: 2}, names{result.NameCounter: "vllm:num_preemptions_total"})...),
			want: "the server reported requests waiting for capacity during the window; the server preempted 2 requests during the window (vllm:num_preemptions_total)"},
		{name: "a results.json of before reasons: its sentence", sentence: "the server ran 24 of 32 requests; 8 waited",
			want: "the server ran 24 of 32 requests; 8 waited"},
		{name: "a code this build does not know: the sentence kept", reasons: reason("from_the_future", nil, nil), sentence: "kept",
			want: "kept"},
		{name: "a code this build does not know, no sentence: its code", reasons: reason("from_the_future", nil, nil),
			want: "from_the_future"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CellReasonText(tt.reasons, tt.sentence); got != tt.want {
				t.Errorf("CellReasonText =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
