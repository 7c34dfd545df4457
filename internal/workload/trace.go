package workload

import (
	"math"
	"time"
)

// Trace formats (values of workload.format; docs/spec.md#traces):
// production traces of lengths and arrival times, without text.
const (
	// FormatMooncake is Mooncake's JSONL trace (FAST '25): timestamp
	// (ms), input_length, output_length, hash_ids of 512-token blocks.
	FormatMooncake = "mooncake"
	// FormatBailian is Alibaba Bailian's JSONL usage trace: chat_id,
	// parent_chat_id, timestamp (s), input_length, output_length, type,
	// turn, hash_ids of 16-token blocks.
	FormatBailian = "bailian"
	// FormatAzure is Azure's LLM inference trace (2023, 2024): CSV
	// TIMESTAMP (a datetime), ContextTokens, GeneratedTokens.
	FormatAzure = "azure"
	// FormatBurstGPT is BurstGPT's CSV trace: Timestamp (s), Model,
	// Request tokens, Response tokens, Total tokens, Log Type.
	FormatBurstGPT = "burstgpt"
)

// TraceFormat is what slogate knows of one trace format: its name, how its
// file is laid out, and the tokens each of its hash_ids stands for.
type TraceFormat struct {
	Name string
	// CSV: the file is a CSV table with a header line; otherwise JSONL.
	CSV bool
	// BlockTokens is the tokens one hash_ids block covers; 0 for a
	// format without hash_ids.
	BlockTokens int
	// Keys are the fields (JSONL) or columns (CSV) every line needs, in
	// the order the format's documentation lists them.
	Keys []string
	// Mark is the field or column that tells the format from the others
	// in a file's first line, unless the line also has one of Unless (a
	// prompt dataset's "prompt" or "messages" among them, so that prompts
	// carrying a session_id, chat_id or hash_ids stay prompts).
	Mark   string
	Unless []string
}

// TraceFormats are the trace formats, one row a format: a format is
// added as a row here and a reader in requests' traceReaders.
var TraceFormats = []TraceFormat{
	{Name: FormatMooncake, BlockTokens: 512, Keys: []string{"timestamp", "input_length", "output_length", "hash_ids"}, Mark: "hash_ids", Unless: []string{"chat_id", "prompt", "messages"}},
	{Name: FormatBailian, BlockTokens: 16, Keys: []string{"chat_id", "timestamp", "input_length", "output_length"}, Mark: "chat_id", Unless: []string{"prompt", "messages"}},
	{Name: FormatAzure, CSV: true, Keys: []string{"TIMESTAMP", "ContextTokens", "GeneratedTokens"}, Mark: "ContextTokens"},
	{Name: FormatBurstGPT, CSV: true, Keys: []string{"Timestamp", "Request tokens", "Response tokens"}, Mark: "Request tokens"},
	{Name: FormatCopilotAgent, Keys: []string{"session_id", "turn", "timestamp_ms", "duration_ms", "prompt_tokens", "completion_tokens"}, Mark: "session_id", Unless: []string{"prompt", "messages"}},
}

// TraceFormatNames are TraceFormats' names, in order.
func TraceFormatNames() []string {
	names := make([]string, len(TraceFormats))
	for i, f := range TraceFormats {
		names[i] = f.Name
	}
	return names
}

// TraceFormatOf is format's row of TraceFormats; false when format is
// not a trace's.
func TraceFormatOf(format string) (TraceFormat, bool) {
	for _, f := range TraceFormats {
		if f.Name == format {
			return f, true
		}
	}
	return TraceFormat{}, false
}

// IsTrace reports whether format is a trace format.
func IsTrace(format string) bool {
	_, ok := TraceFormatOf(format)
	return ok
}

// TraceRequest is one request of a trace: when it arrived, its lengths and
// the prefix blocks it shares.
type TraceRequest struct {
	// At is the arrival time since the epoch of the trace's clock
	// (Mooncake's ms, Bailian's and BurstGPT's s, Azure's datetime).
	At time.Duration
	// InputTokens and OutputTokens are the request's lengths.
	InputTokens, OutputTokens int
	// HashIDs are the prompt's blocks in order, BlockTokens tokens each
	// (the last may be partial): two requests with a block ID in common
	// share those tokens. Nil in formats without them.
	HashIDs []int64
	// Chat and Parent are Bailian's chat_id and parent_chat_id (-1: a
	// conversation's first request), Turn its turn; 0 elsewhere.
	Chat, Parent int64
	Turn         int
}

// Trace is how a workload replays a trace dataset: its time scale, the
// slice of it replayed, how many requests, and whether a request longer
// than the server's max_model_len is dropped (counted) or an error.
type Trace struct {
	// Speed divides the trace's gaps: 2 replays it twice as fast. 0 is 1.
	Speed float64
	// From and To are the slice of the trace replayed, measured from its
	// first request's time; To 0 is the trace's end.
	From, To time.Duration
	// MaxRequests caps the requests replayed; 0 is all.
	MaxRequests int
	// DropOverLength drops (and counts) a request whose prompt and output
	// exceed the server's max_model_len, which is otherwise an error at
	// its line.
	DropOverLength bool
}

// IsZero reports whether t is the default replay: the whole trace at its
// own speed.
func (t Trace) IsZero() bool { return t == Trace{} }

// SpeedOrOne is Speed, 1 when unset.
func (t Trace) SpeedOrOne() float64 {
	if t.Speed <= 0 {
		return 1
	}
	return t.Speed
}

// Select is the entries of a trace dataset that t replays, in file order
// (the trace's arrival order): those whose time since the first entry's is
// in [From, To), the first MaxRequests of them.
func (t Trace) Select(entries []Entry) []int {
	var out []int
	if len(entries) == 0 {
		return nil
	}
	t0 := entries[0].Trace.At
	for i, e := range entries {
		since := e.Trace.At - t0
		if since < t.From || (t.To > 0 && since >= t.To) {
			continue
		}
		out = append(out, i)
		if t.MaxRequests > 0 && len(out) == t.MaxRequests {
			break
		}
	}
	return out
}

// Offset is when entry e is replayed, in seconds since the replay's start:
// its time since the slice's start (the first entry's time plus From),
// divided by the speed.
func (t Trace) Offset(entries []Entry, e Entry) float64 {
	since := e.Trace.At - entries[0].Trace.At - t.From
	return since.Seconds() / t.SpeedOrOne()
}

// MeanRate is the requests per second of t's replay of entries: the
// selected requests over the replayed span from the slice's start to the
// last one; 0 without requests, and the request count for a span of 0.
func (t Trace) MeanRate(entries []Entry) float64 {
	sel := t.Select(entries)
	if len(sel) == 0 {
		return 0
	}
	span := t.Offset(entries, entries[sel[len(sel)-1]])
	if span <= 0 {
		return float64(len(sel))
	}
	return math.Round(float64(len(sel))/span*1000) / 1000
}
