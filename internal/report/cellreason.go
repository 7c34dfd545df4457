package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/hostenv"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
)

// CellReasonText words a cell's reasons (result.CellReason), each in
// turn, joined by "; ": the sentence a cell's Reason holds, such as "the
// server ran 64 of 128 requests; 64 waited". Without reasons (a
// results.json written before them) it is sentence, the Reason read; so
// it is when a code is one this build does not know (a newer file), else
// that code stands for its words.
func CellReasonText(reasons []result.CellReason, sentence string) string {
	if len(reasons) == 0 {
		return sentence
	}
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		words, known := cellReasonPart(r)
		if !known && sentence != "" {
			return sentence
		}
		parts[i] = words
	}
	return strings.Join(parts, "; ")
}

// cellReasonPart words one reason and reports whether its code is known
// (an unknown one gives the code).
func cellReasonPart(r result.CellReason) (string, bool) {
	if words := cellReasonWords(r); words != "" {
		return words, true
	}
	return string(r.Code), false
}

// cellReasonWords words one reason; "" for a code this build does not
// know.
func cellReasonWords(r result.CellReason) string {
	f := func(name string) float64 { return r.Figures[name] }
	n := func(name string) int64 { return int64(math.Round(r.Figures[name])) }
	switch r.Code {
	case result.ReasonStreamsNotStopped:
		return fmt.Sprintf("streams did not stop within %v", seconds(f(result.FigTimeoutS)))
	case result.ReasonRequestsNotStopped:
		return fmt.Sprintf("requests did not stop within %v", seconds(f(result.FigTimeoutS)))
	case result.ReasonNoTrafficBlock:
		return fmt.Sprintf("the spec has no traffic block %q", r.Names[result.NameBlock])
	case result.ReasonContextTooLong:
		return fmt.Sprintf("context %d + max_output %d exceeds max_model_len %d", n(result.FigContext), n(result.FigMaxOutput), n(result.FigMaxModelLen))
	case result.ReasonAsleep:
		engines := "its engine"
		if k := n(result.FigAsleep); k > 1 {
			engines = strconv.FormatInt(k, 10) + " of its engines"
		}
		level := ""
		if l := n(result.FigSleepLevel); l > 0 {
			level = " at sleep level " + strconv.FormatInt(l, 10)
		}
		return fmt.Sprintf("the server is asleep, not idle (%s%s): %s", engines, level, r.Names[result.NameHow])
	case result.ReasonRefusedWindow:
		return fmt.Sprintf("the server refused %d of the window's requests at admission (its queue limit), so fewer than %d ran", n(result.FigRefused), n(result.FigConcurrency))
	case result.ReasonRefusedGate:
		return fmt.Sprintf("the server refused requests at admission throughout the steady-state gate's %.1fs (%d refused): it did not run %d",
			f(result.FigHeldS), n(result.FigRefused), n(result.FigConcurrency))
	case result.ReasonStableQueue:
		return fmt.Sprintf("the server ran %.0f of %d requests; %.0f waited", f(result.FigRunning), n(result.FigConcurrency), f(result.FigWaiting))
	case result.ReasonGateTimedOut:
		return gateTimeoutText(r) + fmt.Sprintf("; the server made requests wait for %.1fs of the %.1fs observed; measured anyway", f(result.FigHeldS), f(result.FigObservedS))
	case result.ReasonWaitingWindow:
		return "the server reported requests waiting for capacity during the window"
	case result.ReasonWaitingHold:
		return "the server reported requests waiting for capacity during the steady-state hold"
	case result.ReasonShortfall:
		c := n(result.FigConcurrency)
		return fmt.Sprintf("the server ran fewer than %d requests while %d were outstanding (beyond those just sent) for %.1fs of the window's %.1fs",
			c, c, f(result.FigHeldS), f(result.FigObservedS))
	case result.ReasonPreempted:
		return fmt.Sprintf("the server preempted %d requests during the window (%s)", n(result.FigPreempted), r.Names[result.NameCounter])
	case result.ReasonTrafficRefused:
		return fmt.Sprintf("the server refused %d of the window's %d requests at admission (its queue limit)", n(result.FigRefused), n(result.FigLaunched))
	case result.ReasonWaitedInARow:
		return "the server reported waiting requests in two polls in a row during the window"
	case result.ReasonSaturated:
		return SaturationText(r)
	case result.ReasonCapHits:
		return fmt.Sprintf("%d arrivals found %d requests outstanding (max_outstanding) and were launched late", n(result.FigCapHits), n(result.FigMaxOutstanding))
	case result.ReasonUnfinished:
		return fmt.Sprintf("%d of the window's requests did not finish", n(result.FigUnfinished))
	case result.ReasonClientLagMedian, result.ReasonClientLagMax:
		what := fmt.Sprintf("median lag %s ms > %s ms (the larger of %v and %g %% of the %s ms mean gap), p99 %s ms, max %s ms",
			numfmt.Lag(f(result.FigLagP50Ms)), numfmt.Lag(f(result.FigLagBoundMs)), seconds(f(result.FigLagFloorS)), f(result.FigLagGapShare)*100,
			numfmt.Lag(f(result.FigMeanGapMs)), numfmt.Lag(f(result.FigLagP99Ms)), numfmt.Lag(f(result.FigLagMaxMs)))
		if r.Code == result.ReasonClientLagMax {
			what = fmt.Sprintf("lag up to %s ms > %v (median %s ms, p99 %s ms)",
				numfmt.Lag(f(result.FigLagMaxMs)), seconds(f(result.FigLagMostS)), numfmt.Lag(f(result.FigLagP50Ms)), numfmt.Lag(f(result.FigLagP99Ms)))
		}
		return fmt.Sprintf("the client fell behind its schedule: %s over %d arrivals; slogate could not drive this rate from this machine, so the cell measures the client, not the server",
			what, n(result.FigArrivals))
	case result.ReasonLateFirstToken:
		ttft, server := f(result.FigTTFTMs), f(result.FigServerMs)
		return fmt.Sprintf("the client's ttft_ms %.1f is %.2f× the server's own %.1f ms (%s), beyond the %.1f× bound: the client read the first token late",
			ttft, ttft/server, server, serverPrefillName(r.Names[result.NameSource]), f(result.FigBound))
	case result.ReasonFewTokens:
		return fmt.Sprintf("the window held %d output tokens in %.3g s, fewer than the %d its throughput needs (a token either side is more than 5 %% of fewer)",
			n(result.FigOutputTokens), f(result.FigMeasuredS), n(result.FigMinTokens))
	case result.ReasonRateGap:
		client, server := f(result.FigPerRequestTPS), f(result.FigServerTPS)
		return fmt.Sprintf("the client's per_request_tps %.1f is %.2f× the server's own %.1f tok/s (%s), beyond the %.1f× bound either way: the client could not keep up with what the server sent",
			client, client/server, server, serverRateName(r.Names[result.NameSource]), f(result.FigBound))
	case result.ReasonStarved:
		return fmt.Sprintf("the server was starved: its threads spent %.0f %% of the time they were ready to run waiting for a CPU (over %.0f %%), using %.2f CPUs: "+
			"it had less than half the CPU time it was ready to use, so the figures are the machine's contention, not the build's", f(result.FigWaitPct), f(result.FigBoundPct), f(result.FigCPUs))
	case result.ReasonRepeatFailed:
		return fmt.Sprintf("repeat %d of %d could not be measured: %s (the %d measured before are kept in samples)",
			n(result.FigRepeat), n(result.FigOf), r.Names[result.NameCause], n(result.FigKept))
	case result.ReasonRepeatFailedLeftOut:
		return fmt.Sprintf("repeat %d of %d could not be measured: %s (the %d before it were left out: %s)",
			n(result.FigRepeat), n(result.FigOf), r.Names[result.NameCause], n(result.FigLeftOut), r.Names[result.NameLastLeftOut])
	case result.ReasonNoneMeasured:
		return fmt.Sprintf("none of its %d runs could be measured: run %d: %s", n(result.FigRuns), n(result.FigRepeat), r.Names[result.NameCause])
	case result.ReasonMachineMoved:
		return movedText(hostenv.Kind(r.Names[result.NameKind]), f(result.FigBefore), f(result.FigAfter), f(result.FigBound))
	case result.ReasonLogprobsRefused:
		return fmt.Sprintf("logprobs: the server refused them (%s); the outputs were asked without, and no near tie can be told", r.Names[result.NameCause])
	case result.ReasonRunLeftOut:
		return fmt.Sprintf("run %d: %s", n(result.FigRepeat), r.Names[result.NameCause])
	}
	return ""
}

// gateTimeoutText words the steady-state gate's timeout of r (a
// ReasonGateTimedOut's figures): "steady state not reached within 30s (3
// of 4 streams decoding; server running 3, waiting 1)".
func gateTimeoutText(r result.CellReason) string { return gateProgress(r.Figures) + ")" }

// gateProgress is how far a steady-state gate got before its timeout,
// from the figures a ReasonGateTimedOut and a warning.GateTimedOut share
// (their Fig names are the same words), its parenthesis left open:
// "steady state not reached within 30s (3 of 4 streams decoding; server
// running 3, waiting 1".
func gateProgress(f map[string]float64) string {
	msg := fmt.Sprintf("steady state not reached within %v (%d of %d streams decoding",
		seconds(f[result.FigTimeoutS]), int64(math.Round(f[result.FigDecoding])), int64(math.Round(f[result.FigConcurrency])))
	if running, gauges := f[result.FigRunning]; gauges {
		msg += fmt.Sprintf("; server running %.0f, waiting %.0f", running, f[result.FigWaiting])
	}
	return msg
}

// seconds is s seconds as a duration, which %v writes as Go does ("30s",
// "50ms").
func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// SaturationText words a saturated cell's evidence (result.ReasonSaturated;
// docs/method.md#saturation): "past the server's capacity at 60 req/s:
// its waiting requests grew from 12 to 61 over 5.2s (9.4 a second, fit
// 0.99; outstanding 18 to 70); stopped after its saturation_after of 5s,
// 28s of its 30s window saved". Without the server's waiting gauge, the
// client's outstanding requests are the evidence.
func SaturationText(r result.CellReason) string {
	f := func(name string) float64 { return r.Figures[name] }
	v := func(name string) string { return numfmt.Value(f(name)) }
	grew := fmt.Sprintf("its waiting requests grew from %s to %s", v(result.FigWaitingStart), v(result.FigWaitingEnd))
	client := fmt.Sprintf("; outstanding %s to %s", v(result.FigOutstandingStart), v(result.FigOutstandingEnd))
	if _, ok := r.Figures[result.FigWaitingStart]; !ok {
		grew = fmt.Sprintf("its requests outstanding grew from %s to %s (the server reports no waiting gauge)", v(result.FigOutstandingStart), v(result.FigOutstandingEnd))
		client = ""
	}
	return fmt.Sprintf("past the server's capacity at %s req/s: %s over %v (%s a second, fit %s%s); stopped after its saturation_after of %v, %v of its %v window saved",
		v(result.FigRate), grew, seconds(f(result.FigObservedS)), v(result.FigSlopePerS), v(result.FigFit), client,
		seconds(f(result.FigSaturationAfterS)), seconds(f(result.FigSavedS)), seconds(f(result.FigWindowS)))
}

// serverPrefillName names where a server's prompt time was read from
// (result.ServerPrefillSource).
func serverPrefillName(source string) string {
	if source == result.ServerPrefillHistogram {
		return "its time-to-first-token histogram over the request"
	}
	return "timings.prompt_ms"
}

// serverRateName names where a server's per-request rate was read from
// (result.DecodeCell.ServerRateSource).
func serverRateName(source string) string {
	if source == result.ServerRateHistogram {
		return "its inter-token histogram: tokens over waits in the window"
	}
	return "timings.predicted_per_second, median"
}
