package result

// TokenSource says how the output tokens of a decode cell were counted
// (docs/method.md#token-sources). It is a cell's token_source in
// results.json.
type TokenSource string

// Token sources, from the most to the least exact.
const (
	// TokenSourceUsage: every chunk carried its usage delta.
	TokenSourceUsage TokenSource = "usage"
	// TokenSourceFinalUsage: only the final usage chunk; its count is
	// spread over the request's chunks.
	TokenSourceFinalUsage TokenSource = "final_usage"
	// TokenSourceChunks: no usage at all; one token per chunk.
	TokenSourceChunks TokenSource = "chunks"
)

// Rank orders the token sources by exactness: 0 for none (""), 1 for
// usage, 2 for final_usage, 3 for chunks. A cell or a run of streams
// reports the least exact source any of its requests needed.
func (s TokenSource) Rank() int {
	switch s {
	case TokenSourceUsage:
		return 1
	case TokenSourceFinalUsage:
		return 2
	case TokenSourceChunks:
		return 3
	}
	return 0
}

// LeastExact returns the less exact of s and t (by Rank; s on a tie).
func (s TokenSource) LeastExact(t TokenSource) TokenSource {
	if t.Rank() > s.Rank() {
		return t
	}
	return s
}

// Stage is where the measurement of a cell stands, as live progress shows
// it.
type Stage string

// Stages of a cell, in the order they happen.
const (
	// StagePrefill: the cold prefill request of a context is running.
	StagePrefill Stage = "prefill"
	// StageWarmUp: a decode cell's streams start and the steady-state gate
	// waits (docs/method.md#steady-state-gate).
	StageWarmUp Stage = "warm-up"
	// StageMeasuring: the window is open (docs/method.md#window).
	StageMeasuring Stage = "measuring"
)
