package measure

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/measure/sse"
)

// tokenStream reads one generation request's event stream for every cell
// kind (decode, traffic, cold prefill) and counts its tokens, usage and
// timings one way:
//   - a chunk with choices and usage carries the increase of its
//     completion_tokens (per-chunk usage: continuous_usage_stats);
//   - a chat role chunk without usage or text carries no token;
//   - any other chunk with choices counts one token, provisionally: the
//     final usage chunk (choices: [], include_usage) says how many the
//     chunks carried in all;
//   - the request's output tokens are the final usage's completion_tokens,
//     or the count so far when that is more (or the final usage has not
//     come);
//   - the TTFT is the first chunk with choices (vLLM sends the chat role
//     chunk with the first token), and every chunk with choices is an
//     inter-chunk latency of the request's trace (docs/method.md#tpot-and-itl).
//
// Each chunk restarts the stall timer. The cell kinds keep only their own
// accounting on top (decode's window, traffic's spans, prefill's TTFT).
type tokenStream struct {
	rd    *sse.Reader
	body  io.ReadCloser
	stall *stallTimer
	idle  time.Duration // inactivity allowed between chunks
	now   func() int64  // the cell's clock, ns since its origin
	tr    *requestTrace

	// completion is the completion tokens so far: the latest per-chunk
	// usage, plus one for each chunk counted without usage.
	completion int64
	// perChunkUsage: a chunk with choices carried usage.
	perChunkUsage bool
	// provisional counts the chunks counted one token each (no usage).
	provisional int64
	// final: the final usage chunk came, with finalTokens.
	final       bool
	finalTokens int64
	// finished: a choice carried a finish_reason.
	finished bool
	// first and lastTok are when the first chunk with choices and the last
	// chunk carrying tokens arrived (-1: none yet).
	first, lastTok int64
	// cached is the final usage's prompt_tokens_details.cached_tokens, when
	// the server sent it.
	cached *int64
	// reasoning is the tokens of the chunks whose text was reasoning only
	// (sse.Chunk.Reasoning); firstAnswer is when the first chunk with
	// text that is not reasoning only arrived (-1: none yet). A stream
	// with reasoning has two phases: reasoning from its first chunk to
	// firstAnswer, then the answer (docs/method.md#reasoning).
	reasoning   int64
	firstAnswer int64
	// timings is what the server said of the request's own timings
	// (llama.cpp's "timings" object), when it did; requests.jsonl records
	// it, and a decode cell cross-checks its rates and counters with it.
	timings *sse.Timings
}

// streamChunk is one chunk as the stream counts it.
type streamChunk struct {
	sse.Chunk
	at     int64 // when it arrived, on the cell's clock
	tokens int64 // the tokens it carries (0 for the final usage chunk)
	first  bool  // the request's first chunk with choices: its TTFT
}

// openTokenStream POSTs body to the client's url and returns its stream,
// read under stall (the first chunk's timeout already running), with tr
// the request's trace; the caller closes it.
func openTokenStream(rctx context.Context, c *lifecycle.Client, url, path string, body []byte, stall *stallTimer, idle time.Duration, now func() int64, tr *requestTrace) (*tokenStream, error) {
	b, err := c.OpenStream(rctx, url, path, body)
	if err != nil {
		return nil, err
	}
	rd := readers.Get().(*sse.Reader)
	rd.Reset(b)
	return &tokenStream{rd: rd, body: b, stall: stall, idle: idle, now: now, tr: tr, first: -1, lastTok: -1, firstAnswer: -1}, nil
}

// readers keeps the streams' readers for the next requests: a new one's
// 16 KiB buffer for each request was half the bytes a decode cell
// allocated (a thousand requests a second in the firehose).
var readers = sync.Pool{New: func() any { return sse.NewReader(nil, 16<<10) }}

// close closes the stream and gives its reader to the next one.
func (s *tokenStream) close() {
	s.body.Close()
	s.rd.Reset(nil)
	readers.Put(s.rd)
	s.rd = nil
}

// drainTimeout bounds the wait for the end of a response after its
// "data: [DONE]". vLLM, SGLang and llama.cpp end it at once; a server that
// keeps it open past this costs the request's connection, not its figures.
const drainTimeout = 100 * time.Millisecond

// drainLimit is the most of a response read after its "data: [DONE]".
const drainLimit = 4 << 10

// drain reads the response to its end after "data: [DONE]", so that the
// HTTP client puts the connection back in its pool for the stream's next
// request: closed before its end, the connection is closed, and every
// request dialled a new one (a 128-stream cell of 128-token requests: a
// thousand connections a second). A read cut by drainTimeout only loses
// the connection.
func (s *tokenStream) drain() {
	s.stall.chunk(drainTimeout)
	io.Copy(io.Discard, io.LimitReader(s.body, drainLimit))
}

// next returns the next chunk: io.EOF at "data: [DONE]", the reader's
// error otherwise (a mid-stream error, a truncation, a cancelled read).
// The chunk's arrival time is taken after the read, with or without error.
func (s *tokenStream) next() (streamChunk, error) {
	ch, err := s.rd.Next()
	c := streamChunk{Chunk: ch, at: s.now()}
	if err == io.EOF {
		s.drain()
	}
	if err != nil {
		return c, err
	}
	s.stall.chunk(s.idle)
	if ch.HasUsage {
		s.tr.promptTokens = ch.PromptTokens
	}
	if ch.HasTimings {
		if t, ok := sse.ParseTimings(s.rd.Data()); ok {
			s.timings = &t
			s.tr.timings = &t
		}
	}
	if ch.Choices == 0 {
		if ch.HasUsage {
			s.final, s.finalTokens = true, ch.CompletionTokens
			var d chunkDetails
			if json.Unmarshal(s.rd.Data(), &d) == nil {
				if n, ok := d.cached(); ok {
					s.cached = &n
				}
			}
		}
		return c, nil
	}
	switch {
	case ch.HasUsage:
		s.perChunkUsage = true
		c.tokens = max(ch.CompletionTokens-s.completion, 0)
		s.completion = ch.CompletionTokens
	case ch.Role && !ch.Text:
		// A chat role chunk without usage carries no token.
	default:
		c.tokens = 1
		s.completion++
		s.provisional++
	}
	s.tr.chunk(c.at)
	if s.first < 0 {
		s.first, c.first = c.at, true
	}
	if ch.Finished {
		s.finished = true
		s.tr.finishReason = ch.FinishReason
	}
	if c.tokens > 0 {
		s.lastTok = c.at
	}
	switch {
	case ch.Reasoning:
		s.reasoning += c.tokens
		s.tr.reasoning = s.reasoning
	case ch.Text && s.firstAnswer < 0:
		s.firstAnswer, s.tr.firstAnswer = c.at, c.at
	}
	return c, nil
}

// reasoningTokens is the request's reasoning tokens: those of its
// reasoning-only chunks, at most its output tokens (a final usage that
// says fewer than the chunks counted bounds both).
func (s *tokenStream) reasoningTokens() int64 { return min(s.reasoning, s.outputTokens()) }

// errShortStream is a stream that finished (a finish_reason and [DONE])
// with fewer tokens than its request asked with ignore_eos: the server
// cut it short without an error (llama-server past a slot's context,
// docs/llamacpp.md#context-limit). Such a request would make a cell look
// faster than the server is, so it is the cell's error, never a fast
// cell (docs/method.md#statuses).
type errShortStream struct {
	got, want int64
	reason    string
}

func (e errShortStream) Error() string {
	return "the server ended a stream after " + strconv.FormatInt(e.got, 10) + " of the " + strconv.FormatInt(e.want, 10) +
		" tokens ignore_eos asked for (finish_reason " + strconv.Quote(e.reason) + "): it cut the request short, so the cell is not measured (a context or slot limit below the prompt and max_output?)"
}

// short is errShortStream when the stream finished with fewer than want
// tokens (want 0: the request did not ask an exact count), else nil.
func (s *tokenStream) short(want int64) error {
	if want <= 0 || !s.finished || s.outputTokens() >= want {
		return nil
	}
	return errShortStream{got: s.outputTokens(), want: want, reason: s.tr.finishReason}
}

// outputTokens is the request's output tokens: the final usage's, or the
// count so far when that is more (or the final usage has not come).
func (s *tokenStream) outputTokens() int64 { return max(s.finalTokens, s.completion) }
