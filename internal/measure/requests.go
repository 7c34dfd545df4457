package measure

import (
	"slices"
	"time"

	"github.com/slogate/slogate/internal/measure/sse"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/stats"
	"github.com/slogate/slogate/internal/vocab"
)

// This file makes the records of requests.jsonl
// (docs/method.md#per-request-records): one per generation request, handed
// to the Meter's Record when the request ends (the runner writes them), so
// that the memory it takes is one record per request in flight whatever
// the run's length.

// requestTrace follows one request for its record: times in ns since the
// cell's origin (-1 while unset). It belongs to the goroutine running the
// request; its gap buffer is reused by the next request of the same stream.
type requestTrace struct {
	start, first, last, end int64
	gaps                    []float32 // ms between consecutive chunks after the first
	promptTokens            int64
	outputTokens            int64
	finishReason            string
	timings                 *sse.Timings // the server's, from its last chunk
	// reasoning is the tokens of the request's reasoning-only chunks and
	// firstAnswer when its first answer chunk came (-1: none):
	// tokenStream's, for the record's TTFO (docs/method.md#reasoning).
	reasoning   int64
	firstAnswer int64
}

// begin starts tracing a request sent at start.
func (t *requestTrace) begin(start int64) {
	*t = requestTrace{start: start, first: -1, last: -1, end: -1, firstAnswer: -1, gaps: t.gaps[:0]}
}

// burstGap is the gap below which a chunk belongs to the burst of the
// chunk before it (docs/method.md#bursts): llama-server writes a
// speculative step's accepted tokens one chunk each, tens of
// microseconds apart (0.02 to 0.12 ms on llama-server b11669), while a
// decode step of any engine slogate measures takes milliseconds (2.5 ms
// for the tiny test model on one CPU thread).
const burstGap = int64(500 * time.Microsecond)

// chunk notes a chunk with choices arriving at now: the first gives the
// TTFT, each later one an inter-token latency, as vLLM's benchmark times
// them (docs/method.md#tpot-and-itl), except one of a burst (less than
// burstGap after the chunk before it): a burst is one chunk, as vLLM
// sends a speculative step (docs/method.md#bursts).
func (t *requestTrace) chunk(now int64) {
	if t.first < 0 {
		t.first = now
	} else if now-t.last >= burstGap {
		t.gaps = append(t.gaps, float32(float64(now-t.last)/1e6))
	}
	t.last = now
}

// requestMeta is what a record says of where a request belongs.
type requestMeta struct {
	// promptTokens is the prompt's length as built, recorded until the
	// server's usage says otherwise.
	promptTokens int64
	cell         string
	phase        vocab.Phase
	purpose      string
	repeat       int
	stream       int
}

// record is the trace's line of requests.jsonl. err is the request's error
// (nil when it ended normally or was cancelled: cancelled says which; a
// rejection when the server refused it at admission); finished is whether
// it ended with a finish_reason and [DONE].
func (t *requestTrace) record(origin time.Time, m requestMeta, finished, cancelled bool, err error) result.RequestRecord {
	rec := result.RequestRecord{Cell: m.cell, Phase: m.phase, Purpose: m.purpose, Repeat: m.repeat, Stream: m.stream,
		Start: origin.Add(time.Duration(t.start)).UTC(), End: origin.Add(time.Duration(t.end)).UTC(),
		E2EMs: Round(float64(t.end-t.start)/1e6, 3), PromptTokens: t.promptTokens, OutputTokens: t.outputTokens,
		FinishReason: t.finishReason}
	if tm := t.timings; tm != nil {
		rec.ServerTimings = &result.ServerTimings{PromptN: tm.PromptN, PromptMs: tm.PromptMs, PredictedN: tm.PredictedN, PredictedMs: tm.PredictedMs,
			PredictedPerSecond: tm.PredictedPerSecond, DraftN: tm.DraftN, DraftNAccepted: tm.DraftNAccepted, CacheN: tm.CacheN}
	}
	switch {
	case isRejection(err):
		rec.Status, rec.Error = result.RequestRejected, err.Error()
	case err != nil:
		rec.Status, rec.Error = result.RequestError, err.Error()
	case cancelled:
		rec.Status = result.RequestCancelled
	case finished:
		rec.Status = result.RequestFinished
	default:
		rec.Status = result.RequestUnfinished
	}
	if t.first >= 0 {
		v := Round(float64(t.first-t.start)/1e6, 3)
		rec.TTFTMs = &v
	}
	if t.outputTokens > 1 && t.last > t.first {
		v := Round(float64(t.last-t.first)/1e6/float64(t.outputTokens-1), 3)
		rec.TPOTMs = &v
	}
	if t.reasoning > 0 {
		n := min(t.reasoning, t.outputTokens)
		rec.ReasoningTokens = &n
		if t.firstAnswer >= 0 {
			v := Round(float64(t.firstAnswer-t.start)/1e6, 3)
			rec.TTFOMs = &v
		}
	}
	if n := len(t.gaps); n > 0 {
		slices.Sort(t.gaps)
		var sum float64
		for _, g := range t.gaps {
			sum += float64(g)
		}
		rec.ITL = &result.GapSummary{Count: n, Mean: Round(sum/float64(n), 3),
			P50: Round(stats.PercentileSorted(t.gaps, 0.5), 3), P99: Round(stats.PercentileSorted(t.gaps, 0.99), 3),
			Max: Round(float64(t.gaps[n-1]), 3)}
	}
	return rec
}
