package report

import (
	"fmt"
	"math"
	"time"

	"github.com/slogate/slogate/internal/hostenv"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// WarningText is w with the words its code, subject and figures make: its
// Summary and Detail, for the codes whose words are made here (the meter's
// and the runner's, which create them wordless and hand them here through
// their WarningText; a part that quotes what no figure or subject holds,
// as dataset_counts' dataset in its summary or search_no_answer's error in
// its detail, is given and kept). A warning of another code is w as it
// is.
func WarningText(w warning.Warning) warning.Warning {
	f := func(name string) float64 { return w.Figures[name] }
	n := func(name string) int64 { return int64(math.Round(w.Figures[name])) }
	switch w.Code {
	case warning.SlowScrape:
		w.Summary = fmt.Sprintf("GET /metrics took %.1f ms on average (max %.1f ms, %d scrapes at one per %v)",
			f(warning.FigMeanMs), f(warning.FigMaxMs), n(warning.FigScrapes), millis(f(warning.FigIntervalMs)))
		w.Detail = "polling may perturb the server (docs/method.md#polling)"
	case warning.GateTimedOut:
		w.Summary, w.Detail = gateNoteText(w.Figures)
	case warning.NoCompletion:
		w.Summary = fmt.Sprintf("no request completed in the %v window (%d launched), so its latencies are unmeasured",
			seconds(f(warning.FigWindowS)), n(warning.FigLaunched))
		w.Detail = "give the traffic block a longer duration or a higher rate"
	case warning.Unfinished:
		w.Summary = fmt.Sprintf("%d of the window's requests were still running %v after it closed; they count as not meeting the SLO",
			n(warning.FigUnfinished), seconds(f(warning.FigDrainS)))
		w.Detail = ""
	case warning.NoAnswer:
		w.Summary = fmt.Sprintf("%d of the window's %d completed requests streamed reasoning and no answer token (up to %d output tokens), so their TTFO is unmeasured",
			n(warning.FigUnanswered), n(warning.FigCompleted), n(warning.FigTokens))
		w.Detail = "raise max_output so the reasoning can end, or check the server's --reasoning-parser (docs/method.md#reasoning)"
	case warning.DatasetCounts:
		w.Detail = fmt.Sprintf("%d entries examined, %d kept, %d dropped (%d with fewer than two turns, %d prompts too short, %d outputs too short, %d prompts too long, %d too long in all)",
			n(warning.FigExamined), n(warning.FigKept), n(warning.FigDropped), n(warning.FigTooFewTurns), n(warning.FigPromptTooShort),
			n(warning.FigOutputTooShort), n(warning.FigPromptTooLong), n(warning.FigTotalTooLong))
	case warning.TraceCounts:
		w.Detail = fmt.Sprintf("%d requests in the slice, %d sent, %d over max_model_len dropped; %d lines of the trace without tokens left out",
			n(warning.FigExamined), n(warning.FigKept), n(warning.FigOverLength), n(warning.FigZeroLength))
	case warning.PrefixHitOffDial:
		w.Summary = fmt.Sprintf("the server's prefix cache served %.1f%% of the prompt tokens, the workload dialled %.1f%% (more than %.0f points apart)",
			f(warning.FigMeasured)*100, f(warning.FigDialled)*100, f(warning.FigBound)*100)
		w.Detail = "a prefix block other than the engine's KV block (vLLM's CPU build: 128), prefix caching off, evictions, or too few requests for the cell's first, cold ones to weigh little (docs/spec.md#prefix-hit-rate)"
	case warning.PrefixBlockMismatch:
		w.Summary = fmt.Sprintf("the workload dials its prefix hit rate in blocks of %d tokens, the server caches whole blocks of %d",
			n(warning.FigBlock), n(warning.FigServerBlock))
		w.Detail = fmt.Sprintf("it serves only the shared tokens that fill its own blocks: set prefix.block = %d (docs/spec.md#prefix-hit-rate)", n(warning.FigServerBlock))
	case warning.ServerRequestTPSGap:
		w.Summary = fmt.Sprintf("the server's own per-request rate %.1f tok/s (%s) differs from per_request_tps %.1f by %+.1f%%",
			f(warning.FigServerPerRequestTPS), serverRateName(w.Subject), f(warning.FigPerRequestTPS), f(warning.FigGap)*100)
		w.Detail = "the client's clock and the server's disagree on how fast a request's tokens came: a loaded client, a slow network, or tokens the client miscounts"
	case warning.Deferred:
		w.Summary = fmt.Sprintf("up to %.0f requests were deferred during the window (%s), not waiting for capacity", f(warning.FigDeferred), w.Subject)
		w.Detail = ""
	case warning.ServerTPSGap:
		w.Summary = fmt.Sprintf("server_total_tps %.1f differs from total_tps %.1f by %+.1f%%", f(warning.FigServerTotalTPS), f(warning.FigTotalTPS), f(warning.FigGap)*100)
		w.Detail = ""
	case warning.ServerCounterGap:
		w.Summary = fmt.Sprintf("the server's finished-tokens counter moved by %.0f between the scrapes around the window, but the requests that finished between them predicted %d (%d more finished too near a scrape to place)",
			f(warning.FigCounterTokens), n(warning.FigFinishedTokens), n(warning.FigUncertainTokens))
		w.Detail = "the counter and the requests' own timings disagree: tokens counted twice or lost, or a request the client did not see"
	case warning.RejectionsGap:
		w.Summary = fmt.Sprintf("the server counted %d requests refused at admission over the cell, the client saw %d refused (and closed %d before any answer)",
			n(warning.FigServerRejected), n(warning.FigClientRejected), n(warning.FigUnanswered))
		w.Detail = "the server's rejection counter and the client's count disagree: requests refused that the client did not see, or refusals the server did not count (docs/method.md#rejections)"
	case warning.SearchNoAnswer:
		w.Summary = fmt.Sprintf("search %s stopped without an answer", w.Subject)
	case warning.CorrectnessErrors:
		w.Summary = fmt.Sprintf("correctness %q: %d of %d requests failed", w.Subject, n(warning.FigFailed), n(warning.FigRequests))
		w.Detail = "their outputs in correctness.jsonl record why"
	case warning.PortInUse:
		w.Summary = fmt.Sprintf("port %s still accepts connections after the server's process group ended", w.Subject)
		w.Detail = "another process listens there"
	case warning.WarmUpFailed:
		at := vocab.FormatTokens(int(n(warning.FigContext)))
		switch {
		case f(warning.FigNotSent) == 1:
			w.Summary = "cache warm-up request at " + at + " not sent"
		case n(warning.FigStream) > 0:
			w.Summary = fmt.Sprintf("cache warm-up request of stream %d at %s failed", n(warning.FigStream), at)
		default:
			w.Summary = "cache warm-up request at " + at + " failed"
		}
	case warning.StreamsNotClosed:
		what := "streams"
		if f(warning.FigTrafficCell) == 1 {
			what = "requests"
		}
		// The cell is the summary, as these warnings were first written.
		w.Summary, w.Detail = w.Subject, what+" did not close within "+seconds(f(warning.FigTimeoutS)).String()
	case warning.EnvironmentMoved:
		w.Summary = movedText(hostenv.Kind(w.Subject), f(warning.FigBefore), f(warning.FigAfter), f(warning.FigBound))
		w.Detail = `other work on this machine changed what the run could use; with repeat = "auto" the run is replaced`
	}
	return w
}

// gateNoteText is the summary and detail of a steady-state gate that timed
// out with no sign of the server making requests wait (warning.GateTimedOut's
// figures): how far the gate got, and why it is not taken as a queue.
func gateNoteText(figs map[string]float64) (summary, detail string) {
	n := func(name string) int64 { return int64(math.Round(figs[name])) }
	summary = gateProgress(figs) + "); measured anyway"
	observed, polled := figs[warning.FigObservedS]
	if !polled {
		return summary, "no request gauges in /metrics to tell whether the server made requests wait"
	}
	detail = "the server made no request wait"
	if n(warning.FigDecoding) < n(warning.FigConcurrency) {
		detail += ": not every stream was past its first token"
	}
	return summary, detail + fmt.Sprintf(" (requests waiting or fewer than %d running for %.1fs of %.1fs)", n(warning.FigConcurrency), figs[warning.FigHeldS], observed)
}

// movedText is the summary of a machine that moved during a run, by how it
// moved (hostenv.Kind) with the figures before, after and the bound.
func movedText(kind hostenv.Kind, before, after, bound float64) string {
	switch kind {
	case hostenv.Calibration:
		return fmt.Sprintf("the machine moved: a fixed CPU calibration took %.3g ms at its fastest after a run of the cell and %.3g ms after this one (beyond %.1f×)", before, after, bound)
	case hostenv.ServerWait:
		return fmt.Sprintf("the server waited: its threads spent %.0f %% of the time they were ready to run waiting for a CPU, against %.0f %% at the least in the cell's runs (more than %.0f points)", after, before, bound)
	case hostenv.Steal:
		return fmt.Sprintf("the machine moved: %.1f %% of its CPU time was stolen during the run (over %.0f %%)", after, bound)
	}
	return fmt.Sprintf("the machine moved: CPU pressure (some avg10) rose from %.1f %% after the cell's first run to %.1f %% after this one (more than %.0f points)", before, after, bound)
}

// millis is ms milliseconds as a duration, which %v writes as Go does.
func millis(ms float64) time.Duration { return time.Duration(math.Round(ms * 1e6)) }
