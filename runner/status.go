package runner

import (
	"fmt"
	"strings"

	"github.com/slogate/slogate/result"
)

// This file is where a decode cell's status is decided
// (docs/method.md#statuses); a cell whose streams failed is an error where
// the failure is seen (decode.go), and an error is never reported as slow.

// unrunnable says whether the decode cell ref cannot be run on this server,
// with the status and reason to record instead of measuring it: over
// capacity when its requests cannot all fit in the KV cache
// (docs/method.md#over-capacity), an error when a request cannot fit in
// max_model_len.
func (r *run) unrunnable(ref result.CellRef) (result.Status, string, bool) {
	maxOutput := r.measure().MaxOutput
	if r.kvPool.OverCapacity(ref.Concurrency, ref.Context, maxOutput) {
		return result.StatusOverCapacity, r.kvPool.Arithmetic(ref.Concurrency, ref.Context, maxOutput, nil), true
	}
	if r.maxModelLen > 0 && ref.Context+maxOutput > r.maxModelLen {
		return result.StatusError, fmt.Sprintf("context %d + max_output %d exceeds max_model_len %d", ref.Context, maxOutput, r.maxModelLen), true
	}
	return "", "", false
}

// waitEvidence is what the steady-state gate and the window saw of the
// server making requests wait (docs/method.md#statuses).
type waitEvidence struct {
	// gateQueued is the gate's own finding: a stable queue, or a timeout
	// with the server making requests wait (gateReason says which).
	gateQueued bool
	gateReason string
	// gateNote says the gate timed out with no sign of waiting: a note on
	// a cell measured anyway.
	gateNote string
	// gateWaiting: num_requests_waiting > 0 once the gate's conditions had
	// first held (the ramp-up, when C requests arrive at once and are
	// admitted over a few engine steps, does not count).
	gateWaiting bool
	// windowWaiting: num_requests_waiting > 0 in a poll of the window.
	windowWaiting bool
	// preemptions is Δnum_preemptions_total over the window; -1 unknown.
	preemptions int64
	// polls counts the window's polls that read the server's request
	// gauges; shortPolls those of them where the client had all C
	// requests outstanding and the server ran fewer than C.
	polls, shortPolls int
}

// Thresholds of a sustained shortfall: fewer than C running while C were
// outstanding in at least this share of the window's polls, and in at
// least minShortPolls of them. A request between the client and the engine
// (sent and not yet scheduled, or finished and its last chunk not yet
// read) shows for milliseconds in one 250 ms poll now and then; a server
// that does not run what it was sent shows in most of them.
const (
	sustainedShare = 0.25
	minShortPolls  = 2
)

// cellStatus decides a measured decode cell's status: queued only when the
// server made requests wait (docs/method.md#statuses), with the evidence in
// the reason; valid otherwise. The client's own restart gaps
// lower active_avg and give a note, never the queued status.
func cellStatus(ev waitEvidence, activeAvg float64, concurrency int) (status result.Status, reason string, notes []string) {
	if ev.gateNote != "" {
		notes = append(notes, ev.gateNote)
	}
	if activeAvg < 0.95*float64(concurrency) {
		notes = append(notes, fmt.Sprintf("%.1f of %d streams active on average: the client's restart gaps (a finished stream's next request before its first token), not server queueing", activeAvg, concurrency))
	}
	// The first sign of a queue says it (a stable queue at the gate also
	// shows as waiting requests and a shortfall in the window), and
	// preemptions are added: they are a different way of waiting.
	var why []string
	switch {
	case ev.gateQueued:
		why = append(why, ev.gateReason)
	case ev.windowWaiting:
		why = append(why, "the server reported waiting requests during the window")
	case ev.gateWaiting:
		why = append(why, "the server reported waiting requests during the steady-state hold")
	case ev.shortPolls >= minShortPolls && float64(ev.shortPolls) >= sustainedShare*float64(ev.polls):
		why = append(why, fmt.Sprintf("the server ran fewer than %d requests while %d were outstanding in %d of %d polls of the window", concurrency, concurrency, ev.shortPolls, ev.polls))
	}
	if ev.preemptions > 0 {
		why = append(why, fmt.Sprintf("the server preempted %d requests during the window (vllm:num_preemptions_total)", ev.preemptions))
	}
	if len(why) == 0 {
		return result.StatusValid, "", notes
	}
	return result.StatusQueued, strings.Join(why, "; "), notes
}

// statusRank orders the statuses of repeated runs of one cell from best to
// worst: valid, queued, over_capacity, error.
func statusRank(s result.Status) int {
	switch s {
	case result.StatusValid:
		return 0
	case result.StatusQueued:
		return 1
	case result.StatusOverCapacity:
		return 2
	}
	return 3
}

// trafficStatus is the status of a measured traffic cell: queued when the
// server reported waiting requests during the window (the rule of
// cellStatus), when arrivals found the outstanding cap reached (the
// client, not the server, held them back) or when some of the window's
// requests had not finished by the drain timeout; valid otherwise.
func trafficStatus(sawWaiting bool, capHits, maxOutstanding, unfinished int) (result.Status, string) {
	switch {
	case sawWaiting:
		return result.StatusQueued, "the server reported waiting requests during the window"
	case capHits > 0:
		return result.StatusQueued, fmt.Sprintf("%d arrivals found %d requests outstanding (max_outstanding) and were launched late", capHits, maxOutstanding)
	case unfinished > 0:
		return result.StatusQueued, fmt.Sprintf("%d of the window's requests did not finish", unfinished)
	}
	return result.StatusValid, ""
}
