package runner

import (
	"fmt"

	"github.com/slogate/slogate/plan"
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
	if plan.OverCapacity(ref.Concurrency, ref.Context, maxOutput, r.kvCapacity) {
		return result.StatusOverCapacity, fmt.Sprintf("%d × (%d + %d) = %d tokens > KV cache %d tokens", ref.Concurrency, ref.Context, maxOutput,
			int64(ref.Concurrency)*int64(ref.Context+maxOutput), r.kvCapacity), true
	}
	if r.maxModelLen > 0 && ref.Context+maxOutput > r.maxModelLen {
		return result.StatusError, fmt.Sprintf("context %d + max_output %d exceeds max_model_len %d", ref.Context, maxOutput, r.maxModelLen), true
	}
	return "", "", false
}

// windowStatus is the status of a measured window: queued when the
// steady-state gate found a stable queue or timed out (gateQueued, with its
// reason), when the server reported waiting requests during the window, or
// when fewer than 95% of the streams were active on average; valid
// otherwise.
func windowStatus(gateQueued bool, gateReason string, sawWaiting bool, activeAvg float64, concurrency int) (result.Status, string) {
	switch {
	case gateQueued:
		return result.StatusQueued, gateReason
	case sawWaiting:
		return result.StatusQueued, "the server reported waiting requests during the window"
	case activeAvg < 0.95*float64(concurrency):
		return result.StatusQueued, fmt.Sprintf("only %.1f of %d streams active on average", activeAvg, concurrency)
	}
	return result.StatusValid, ""
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
// windowStatus), when arrivals found the outstanding cap reached (the
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
