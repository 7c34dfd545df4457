package measure

import (
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// The bounds past which the client could not measure a decode cell
// (docs/method.md#unmeasurable).
const (
	// MinWindowTokens is the fewest output tokens a decode window must
	// hold: total_tps counts whole tokens, so a count n is exact only to
	// one token either side, by where the window's edges fall; under 20
	// that is more than the 5 % a comparison's default tolerance asks.
	MinWindowTokens = 20
	// ServerRateBound is how far, as a ratio either way, the client's
	// per_request_tps may be from the server's own per-request rate
	// (llama.cpp's timings.predicted_per_second; vLLM's and SGLang's
	// inter-token histogram, tokens over waits) before the cell is
	// unmeasurable: the two clocks time the same tokens, and past a
	// factor of 1.5 the client's reading is of the client, not the server
	// (serverRateTolerance, 10 %, only warns).
	ServerRateBound = 1.5
	// PrefillBound is how many times the server's own time for a prefill
	// run's prompt (PrefillCell.ServerPrefillMs) its TTFT may be, and
	// PrefillSlackMs by how much more at least, before the run is
	// unmeasurable: the client's TTFT holds the server's and the HTTP and
	// SSE path around it, 1 to 4 ms on a quiet machine, and the prompt's
	// upload, parsing and tokenizing before the server's clock starts,
	// which grow with the prompt: on a loaded CI machine the simulator's
	// 1K-token prompt read 16 ms against its own 1 ms, a 251K one 79 ms
	// against 2.6, a 1019K one 97 ms against 10.4; and a fast tokenizer
	// takes about 1 ms for 1K tokens. So only a client slower than the
	// server's clock by more than PrefillSlackMs and PrefillSlackPerKMs a
	// thousand prompt tokens is judged.
	PrefillBound       = 1.5
	PrefillSlackMs     = 50.0
	PrefillSlackPerKMs = 1.0
)

// prefillUnmeasurableWhy says why the client could not measure prefill
// run c, a valid one; nil when it could (docs/method.md#unmeasurable).
func prefillUnmeasurableWhy(c *result.PrefillCell) *result.CellReason {
	s := c.ServerPrefillMs
	if s == nil || *s <= 0 || c.TTFTMs <= 0 {
		return nil
	}
	if c.ServerPrefillSource != result.ServerPrefillTimings {
		// A time-to-first-token histogram is recorded, not judged: its
		// clock starts after the request crossed whatever is in front of
		// the engine, and in a container that was 316 ms of a 1K
		// prompt's 317 on the simulator (the client on time), past any
		// slack. llama.cpp's prompt_ms times the prompt the client sent.
		return nil
	}
	if c.TTFTMs > PrefillBound**s && c.TTFTMs-*s > PrefillSlackMs+PrefillSlackPerKMs*float64(c.Context)/1000 {
		return &result.CellReason{Code: result.ReasonLateFirstToken,
			Figures: map[string]float64{result.FigTTFTMs: c.TTFTMs, result.FigServerMs: *s, result.FigBound: PrefillBound},
			Names:   map[string]string{result.NameSource: c.ServerPrefillSource}}
	}
	return nil
}

// judgePrefillMeasurable makes valid prefill run c unmeasurable when the
// client could not measure it (prefillUnmeasurableWhy), its Reasons the
// rule's, and reports whether it did: the caller words them into Reason.
func judgePrefillMeasurable(c *result.PrefillCell) bool {
	if c.Status != vocab.StatusValid {
		return false
	}
	why := prefillUnmeasurableWhy(c)
	if why == nil {
		return false
	}
	c.Status, c.Reasons = vocab.StatusUnmeasurable, []result.CellReason{*why}
	return true
}

// unmeasurableWhy says why the client could not measure decode cell c, a
// cell measured valid or queued; "" when it could. The rules are
// docs/method.md#unmeasurable's, the first that holds.
// A queued window of few tokens stays queued: the server held the
// requests, and the status says so.
func unmeasurableWhy(c *result.DecodeCell) *result.CellReason {
	if c.OutputTokens < MinWindowTokens && c.Status == vocab.StatusValid && !serverCounted(c) {
		return &result.CellReason{Code: result.ReasonFewTokens,
			Figures: map[string]float64{result.FigOutputTokens: float64(c.OutputTokens), result.FigMeasuredS: c.MeasuredS, result.FigMinTokens: MinWindowTokens}}
	}
	if s := c.ServerPerRequestTPS; s != nil && *s > 0 && c.PerRequestTPS > 0 {
		// Either way against llama.cpp's timings, which time the tokens
		// the client reads; against a histogram, only a client slower
		// than the server: a histogram's waits can hold time the stream
		// never showed (the simulator's dropped steps on a loaded machine
		// read the client 1.71× faster), and a client faster than the
		// server's clock is not one that fell behind.
		r := *s / c.PerRequestTPS
		if r > ServerRateBound || (r < 1/ServerRateBound && c.ServerRateSource != result.ServerRateHistogram) {
			return &result.CellReason{Code: result.ReasonRateGap,
				Figures: map[string]float64{result.FigPerRequestTPS: c.PerRequestTPS, result.FigServerTPS: *s, result.FigBound: ServerRateBound},
				Names:   map[string]string{result.NameSource: c.ServerRateSource}}
		}
	}
	return nil
}

// serverCounted reports whether the server's own counter of generated
// tokens (server_total_tps) agrees with the client's total_tps within
// ServerRateBound: then a window of few tokens is the server's doing, a
// slow server measured, not a client that missed what was sent. Leaving
// such windows out would hide a build that slowed down (its slow runs
// dropped, its fast ones kept), so only the client's own evidence makes
// a few-token window unmeasurable.
func serverCounted(c *result.DecodeCell) bool {
	s := c.ServerTotalTPS
	if s == nil || *s <= 0 || c.TotalTPS <= 0 {
		return false
	}
	r := *s / c.TotalTPS
	return r <= ServerRateBound && r >= 1/ServerRateBound
}

// judgeMeasurable makes decode cell c unmeasurable when the client could
// not measure it (unmeasurableWhy), its Reasons the rule's, and reports
// whether it did: the caller words them into Reason. A cell without
// numbers stays as it is.
func judgeMeasurable(c *result.DecodeCell) bool {
	if !c.Status.Measured() {
		return false
	}
	why := unmeasurableWhy(c)
	if why == nil {
		return false
	}
	c.Status, c.Reasons = vocab.StatusUnmeasurable, []result.CellReason{*why}
	return true
}
