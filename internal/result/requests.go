package result

import (
	"encoding/json"
	"io"
	"time"

	"github.com/slogate/slogate/internal/vocab"
)

// RequestRecord is one line of requests.jsonl: one generation request the
// runner sent, written when it ended (docs/method.md#per-request-records).
// The fields under "Workloads" are left out today; datasets and
// conversations fill them in.
type RequestRecord struct {
	// Cell is the name of the cell the request belongs to, below the
	// server: "decode/ctx=8K/conc=64", "prefill/ctx=8K",
	// "traffic/steady/ctx=8K/rate=0.5", "search/max-c/conc=16"
	// (CellRef.Name).
	Cell  string      `json:"cell"`
	Phase vocab.Phase `json:"phase"`
	// Purpose is "" for a request of the cell's measurement and "warm-up"
	// for a cache warm-up request (max_tokens 1) sent before the cell.
	Purpose string `json:"purpose,omitempty"`
	// Repeat is the run of a repeated cell the request belongs to (1-based;
	// measure.repeat > 1), 0 otherwise.
	Repeat int `json:"repeat,omitempty"`
	// Stream is the decode stream (1-based) that sent it; 0 for prefill and
	// traffic requests.
	Stream int `json:"stream,omitempty"`
	// Start is when the request was sent, End when its stream ended.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// TTFTMs is the time from Start to the first chunk; nil when none came.
	TTFTMs *float64 `json:"ttft_ms,omitempty"`
	// E2EMs is the time from Start to End.
	E2EMs float64 `json:"e2e_ms"`
	// TPOTMs is (time of the last token chunk − first chunk) ÷ (output
	// tokens − 1), vLLM's TPOT (docs/method.md#tpot-and-itl); nil with fewer
	// than 2 output tokens.
	TPOTMs *float64 `json:"tpot_ms,omitempty"`
	// ReasoningTokens are the output tokens the server sent as reasoning
	// (delta.reasoning or delta.reasoning_content, docs/method.md#reasoning);
	// nil when it sent none. TTFOMs is the time from Start to the first
	// answer (content) chunk, set only beside ReasoningTokens (without
	// reasoning the first answer is the first token: TTFTMs); nil when no
	// answer came.
	ReasoningTokens *int64   `json:"reasoning_tokens,omitempty"`
	TTFOMs          *float64 `json:"ttfo_ms,omitempty"`
	// ITL summarises the request's inter-token latencies: the gaps between
	// consecutive token chunks, as vLLM's benchmark records them (one per
	// chunk, however many tokens it carries); nil when there were none.
	ITL          *GapSummary `json:"itl_ms,omitempty"`
	PromptTokens int64       `json:"prompt_tokens"`
	OutputTokens int64       `json:"output_tokens"`
	// FinishReason is the server's finish_reason ("length", "stop", …); ""
	// when the stream ended without one.
	FinishReason string `json:"finish_reason,omitempty"`
	// Status is how the request ended: RequestFinished, RequestCancelled,
	// RequestUnfinished, RequestRejected or RequestError (Error then says
	// why; a rejection's quotes the server's answer).
	Status RequestStatus `json:"status"`
	Error  string        `json:"error,omitempty"`
	// InWindow is set on a decode request whose tokens counted in the
	// cell's window, and on a traffic request launched inside the window
	// (the requests the cell's metrics are computed from).
	InWindow bool `json:"in_window,omitempty"`

	// Traffic schedules: set on a traffic cell's requests.

	// Index is the request's 0-based place in its cell's arrival schedule
	// (a conversation's turns share their conversation's index and differ
	// by Turn); nil outside traffic cells.
	Index *int `json:"index,omitempty"`
	// PlannedMs is when the schedule planned to send the request, in ms
	// since the cell's clock zero (the first arrival is planned one gap
	// after it); nil for a closed loop's requests, which have no planned
	// time, and for a conversation's later turns, sent when the previous
	// answer is in.
	PlannedMs *float64 `json:"planned_ms,omitempty"`
	// LagMs is the actual send time minus PlannedMs: how far the client
	// (or, for an arrival held by the outstanding cap, the server) fell
	// behind the schedule; nil where PlannedMs is.
	LagMs *float64 `json:"lag_ms,omitempty"`
	// HeldMs is the part of LagMs the arrival waited for the outstanding
	// cap (max_outstanding), it or an arrival before it: the server's
	// share of the lag, not the client's (LagMs − HeldMs is the client's);
	// nil when no cap wait delayed it.
	HeldMs *float64 `json:"held_ms,omitempty"`

	// Workloads: set by dataset and conversation workloads.

	// DatasetEntry names the dataset entry the prompt came from (its id,
	// or its index in the file).
	DatasetEntry string `json:"dataset_entry,omitempty"`
	// Conversation and Turn place the request in a multi-turn
	// conversation (Turn is 1-based).
	Conversation string `json:"conversation,omitempty"`
	Turn         int    `json:"turn,omitempty"`
	// PrefixGroup names the group of requests sharing a prompt prefix.
	PrefixGroup string `json:"prefix_group,omitempty"`
	// CachedTokens is the prompt tokens the server reported served from its
	// prefix cache (usage.prompt_tokens_details.cached_tokens); nil when it
	// did not say.
	CachedTokens *int64 `json:"cached_tokens,omitempty"`
	// ServerTimings is what the server said of the request's own timings
	// (llama-server's "timings" in its last chunk:
	// docs/llamacpp.md#server-timings); nil where it says nothing.
	ServerTimings *ServerTimings `json:"server_timings,omitempty"`
}

// ServerTimings is a server's own account of one request: the prompt
// tokens it evaluated (CacheN more were reused) and their time, the tokens
// it predicted, their time and rate ((PredictedN − 1) ÷ PredictedMs, the
// first token excluded as per_request_tps excludes it), and the draft
// tokens speculative decoding proposed and the target accepted.
type ServerTimings struct {
	PromptN            int64   `json:"prompt_n"`
	PromptMs           float64 `json:"prompt_ms"`
	PredictedN         int64   `json:"predicted_n"`
	PredictedMs        float64 `json:"predicted_ms"`
	PredictedPerSecond float64 `json:"predicted_per_second"`
	DraftN             int64   `json:"draft_n,omitempty"`
	DraftNAccepted     int64   `json:"draft_n_accepted,omitempty"`
	CacheN             int64   `json:"cache_n"`
}

// PurposeWarmUp is the Purpose of a cache warm-up request.
const PurposeWarmUp = "warm-up"

// RequestStatus is how one request ended.
type RequestStatus string

// Request statuses.
const (
	// RequestFinished: the stream ended with a finish_reason and [DONE].
	RequestFinished RequestStatus = "finished"
	// RequestCancelled: slogate closed the stream (a decode cell's window
	// closed, a traffic cell's cool-down arrivals were cut, the run was
	// stopped).
	RequestCancelled RequestStatus = "cancelled"
	// RequestError: the request failed (an HTTP error, an error event, a
	// stalled or truncated stream).
	RequestError RequestStatus = "error"
	// RequestUnfinished: the stream ended without a finish_reason or was
	// cut by the server without an error.
	RequestUnfinished RequestStatus = "unfinished"
	// RequestRejected: the server refused the request at admission, its
	// queue full (vLLM's 503 under --max-num-queued-reqs or
	// --max-num-queued-tokens; docs/method.md#rejections); Error quotes
	// its answer. Not a failure: it produced no token and met no SLO.
	RequestRejected RequestStatus = "rejected"
)

// GapSummary summarises one request's inter-token latencies, in ms.
type GapSummary struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// AppendRequest writes one record as a single JSON line.
func AppendRequest(w io.Writer, rec *RequestRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
