// Package sse reads the server-sent event stream of a vLLM (OpenAI-style)
// streaming completion or chat completion and decodes, per chunk, only what
// a cell measures: whether the chunk carries choices, the cumulative
// usage counters, whether a choice finished, whether it carries a role or
// generated text, and a mid-stream error.
//
// Why not go-openai's CompletionStream (github.com/sashabaranov/go-openai
// v1.43.0)? Measured on this machine with BenchmarkReader/BenchmarkGoOpenAI
// (same recorded vLLM chunks; see sse_test.go):
//   - this reader:    874,000 chunks/s on one core, 5 allocations per
//     1000-chunk stream (buffers only);
//   - go-openai Recv:    81,000 chunks/s, 18 allocations per chunk (a regexp
//     match and replace on every line, ReadBytes copies, and a full
//     CompletionResponse decode with logprobs and text).
//
// 128 streams at 1 ms between tokens are 128,000 chunks/s: go-openai would
// need more than one of this machine's two cores for that alone.
//
// More decisive than speed: go-openai returns io.EOF both for "data: [DONE]"
// and for a connection closed mid-stream, so a truncated stream would be
// counted as a finished request; and its request type cannot send
// temperature 0 (omitempty) nor vLLM's ignore_eos/min_tokens/cache_salt.
// We keep go-openai's wire types where they fit (openai.Usage in tests and
// the model listing in package lifecycle).
//
// Chat chunks go through the same scanner: go-openai's
// ChatCompletionStreamResponse would decode every delta's content, tool
// calls and logprobs into strings and structs per chunk (the allocations
// above), and has no "reasoning" field (vLLM's reasoning parser output,
// docs/vllm.md#chat), only the old "reasoning_content".
package sse

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ErrTruncated is returned when the stream ends without "data: [DONE]".
var ErrTruncated = errors.New("stream ended without [DONE] (truncated)")

// APIError is an error object sent inside the stream with HTTP 200
// (docs/vllm.md#mid-stream-errors), in either shape vLLM has used: nested,
// data: {"error":{"message":…,"type":…,"code":…}}, or flat,
// data: {"object":"error","message":…,"type":…,"code":…}.
type APIError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"`
}

// Error says the server reported an error mid-stream, with its message and type.
func (e *APIError) Error() string {
	if e.Type != "" {
		return "server error in stream: " + e.Message + " (" + e.Type + ")"
	}
	return "server error in stream: " + e.Message
}

// Chunk is what one data event says.
type Chunk struct {
	// Choices is the number of entries in "choices" (0 for the final usage
	// chunk that include_usage adds).
	Choices int
	// HasUsage is true when the chunk carries a usage object.
	HasUsage bool
	// PromptTokens and CompletionTokens are the usage counters (cumulative
	// under continuous_usage_stats).
	PromptTokens     int64
	CompletionTokens int64
	// Finished is true when a choice carries a non-null finish_reason.
	Finished bool
	// FinishReason is that finish_reason ("stop", "length", "abort", …),
	// the last choice's when several carry one; "" when none does.
	FinishReason string
	// Role is true when a choice's "delta" carries a non-empty "role": the
	// first chunk of a chat stream, {"role":"assistant","content":""}.
	Role bool
	// Text is true when a choice carries non-empty generated text: "text"
	// (completions) or the delta's "content", "reasoning" or
	// "reasoning_content" (chat; reasoning_content is the name vLLM used
	// before PR #27752).
	Text bool
	// Reasoning is true when the chunk's text is reasoning only: a
	// choice's delta carries a non-empty "reasoning" or
	// "reasoning_content" and no choice carries non-empty "content" or
	// "text" (a chunk with both, the reasoning parser's last reasoning and
	// first answer, is an answer chunk). The tokens of such a chunk are the
	// reasoning phase's (docs/method.md#reasoning).
	Reasoning bool
	// HasTimings is true when the chunk carries a non-null "timings"
	// object: llama.cpp's server sends the request's own timings so in its
	// last chunk (ParseTimings reads them).
	HasTimings bool
}

// Timings is what a server says of one request's own timings, in
// llama.cpp's names ("timings" in its server's last chunk): the prompt
// tokens evaluated (cache_n more were reused from its cache) and the time
// they took, the tokens predicted, their time and rate, and the draft
// tokens of speculative decoding proposed and accepted. Absent fields are 0.
type Timings struct {
	PromptN            int64   `json:"prompt_n"`
	PromptMs           float64 `json:"prompt_ms"`
	PredictedN         int64   `json:"predicted_n"`
	PredictedMs        float64 `json:"predicted_ms"`
	PredictedPerSecond float64 `json:"predicted_per_second"`
	DraftN             int64   `json:"draft_n"`
	DraftNAccepted     int64   `json:"draft_n_accepted"`
	CacheN             int64   `json:"cache_n"`
}

// ParseTimings reads the "timings" object of a data payload (a chunk whose
// HasTimings is true); ok is false when it has none or it is not an
// object of numbers.
func ParseTimings(data []byte) (t Timings, ok bool) {
	var w struct {
		Timings *Timings `json:"timings"`
	}
	if json.Unmarshal(data, &w) != nil || w.Timings == nil {
		return Timings{}, false
	}
	return *w.Timings, true
}

// Reader reads data events from a stream. It is not safe for concurrent use.
type Reader struct {
	br   *bufio.Reader
	data []byte // the current event's data (reused)
	done bool
}

// NewReader returns a Reader of r, buffered with size bytes (4 KiB when 0).
func NewReader(r io.Reader, size int) *Reader {
	if size <= 0 {
		size = 4096
	}
	return &Reader{br: bufio.NewReaderSize(r, size)}
}

// Reset makes r read from rd afresh, keeping its buffers: a reader kept
// for the next stream allocates nothing.
func (r *Reader) Reset(rd io.Reader) {
	r.br.Reset(rd)
	r.data, r.done = r.data[:0], false
}

// Data is the raw data of the event Next returned last, valid until the
// next call to Next: for a caller that needs more of a chunk than Chunk
// holds (a conversation's answer text, the final usage's details).
func (r *Reader) Data() []byte { return r.data }

// Next returns the next chunk. At "data: [DONE]" it returns io.EOF; when the
// stream ends without it, ErrTruncated; a mid-stream error event (nested or
// flat) is returned as an *APIError; a data event that is not a JSON object is an error.
func (r *Reader) Next() (Chunk, error) {
	if r.done {
		return Chunk{}, io.EOF
	}
	for {
		data, err := r.event()
		if err != nil {
			return Chunk{}, err
		}
		if data == nil {
			continue
		}
		if bytes.Equal(data, doneMarker) {
			r.done = true
			return Chunk{}, io.EOF
		}
		return Parse(data)
	}
}

var (
	doneMarker  = []byte("[DONE]")
	dataField   = []byte("data")
	errorKey    = []byte(`"error"`)
	objectKey   = []byte(`"object"`)
	errorValue  = []byte(`"error"`)
	choicesKey  = []byte(`"choices"`)
	usageKey    = []byte(`"usage"`)
	finishKey   = []byte(`"finish_reason"`)
	textKey     = []byte(`"text"`)
	deltaKey    = []byte(`"delta"`)
	roleKey     = []byte(`"role"`)
	contentKey  = []byte(`"content"`)
	reasonKey   = []byte(`"reasoning"`)
	reasonCKey  = []byte(`"reasoning_content"`)
	timingsKey  = []byte(`"timings"`)
	promptKey   = []byte(`"prompt_tokens"`)
	complKey    = []byte(`"completion_tokens"`)
	nullLiteral = []byte("null")
)

// event reads lines up to the blank line that ends an event and returns
// its data (nil for an event without data, e.g. a comment). A final event
// not followed by a blank line is still returned.
func (r *Reader) event() ([]byte, error) {
	r.data, r.done = r.data[:0], false
	has := false
	for {
		line, err := r.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer: gather it (rare; e.g. an echoed prompt).
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = r.br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		eof := err == io.EOF
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if eof {
				if has {
					return r.data, nil
				}
				return nil, ErrTruncated
			}
			if has {
				return r.data, nil
			}
			continue
		}
		if line[0] != ':' { // ':' starts a comment
			field, value := line, []byte(nil)
			if i := bytes.IndexByte(line, ':'); i >= 0 {
				field, value = line[:i], line[i+1:]
				if len(value) > 0 && value[0] == ' ' {
					value = value[1:]
				}
			}
			if bytes.Equal(field, dataField) {
				if has {
					r.data = append(r.data, '\n')
				}
				r.data = append(r.data, value...)
				has = true
			}
		}
		if eof {
			if has {
				return r.data, nil
			}
			return nil, ErrTruncated
		}
	}
}

// Parse decodes one data payload. The common vLLM chunk is decoded by a
// scanner that looks only at the top-level keys a cell needs (no
// allocation); anything unusual (an error, odd nesting) goes through
// encoding/json, so the result is always what encoding/json would say.
func Parse(data []byte) (Chunk, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return Chunk{}, fmt.Errorf("stream event is not a JSON object: %.80q", data)
	}
	if c, ok := scan(data); ok {
		return c, nil
	}
	return parseJSON(data)
}

// wireDelta holds the raw values so that any JSON type decodes (only a
// non-empty string counts), as the scanner skips any value.
type wireDelta struct {
	Role             json.RawMessage `json:"role"`
	Content          json.RawMessage `json:"content"`
	Reasoning        json.RawMessage `json:"reasoning"`
	ReasoningContent json.RawMessage `json:"reasoning_content"`
}

type wireChunk struct {
	Choices []struct {
		FinishReason *string         `json:"finish_reason"`
		Text         json.RawMessage `json:"text"`
		Delta        wireDelta       `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
	// "error" in the flat error shape: {"object": "error", "message": …}.
	Object  json.RawMessage `json:"object"`
	Timings json.RawMessage `json:"timings"`
}

func parseJSON(data []byte) (Chunk, error) {
	var w wireChunk
	if err := json.Unmarshal(data, &w); err != nil {
		return Chunk{}, fmt.Errorf("stream event is not valid JSON: %v", err)
	}
	if len(w.Error) > 0 && !bytes.Equal(w.Error, nullLiteral) {
		e := &APIError{}
		if json.Unmarshal(w.Error, e) != nil || e.Message == "" {
			// {"error": "text"} or an unexpected shape: keep it readable.
			var s string
			if json.Unmarshal(w.Error, &s) == nil {
				e = &APIError{Message: s}
			} else {
				e = &APIError{Message: string(w.Error)}
			}
		}
		return Chunk{}, e
	}
	var object string
	if json.Unmarshal(w.Object, &object) == nil && object == "error" {
		e := &APIError{}
		if json.Unmarshal(data, e) != nil || e.Message == "" {
			e = &APIError{Message: string(data)} // keep it readable
		}
		return Chunk{}, e
	}
	c := Chunk{Choices: len(w.Choices)}
	answer, reasoning := false, false
	for _, ch := range w.Choices {
		if ch.FinishReason != nil {
			c.Finished = true
			c.FinishReason = *ch.FinishReason
		}
		if nonEmptyString(ch.Delta.Role) {
			c.Role = true
		}
		if nonEmptyString(ch.Text) || nonEmptyString(ch.Delta.Content) {
			answer = true
		}
		if nonEmptyString(ch.Delta.Reasoning) || nonEmptyString(ch.Delta.ReasoningContent) {
			reasoning = true
		}
	}
	c.Text, c.Reasoning = answer || reasoning, reasoning && !answer
	c.HasTimings = len(w.Timings) > 0 && !bytes.Equal(w.Timings, nullLiteral)
	if w.Usage != nil {
		c.HasUsage = true
		c.PromptTokens = w.Usage.PromptTokens
		c.CompletionTokens = w.Usage.CompletionTokens
	}
	return c, nil
}

// finishReasons are the usual finish_reason values (OpenAI's and vLLM's
// "abort" and "error"), kept as constants so that reading one allocates
// nothing.
var finishReasons = []string{"stop", "length", "abort", "tool_calls", "error", "content_filter"}

// internReason is the finish reason spelled by b: a shared constant for
// the usual ones, a copy otherwise (b is the reader's reused buffer).
func internReason(b []byte) string {
	for _, r := range finishReasons {
		if string(b) == r {
			return r
		}
	}
	return string(b)
}

// nonEmptyString reports whether a raw JSON value is a string other than "".
func nonEmptyString(raw json.RawMessage) bool {
	return len(raw) > 2 && raw[0] == '"'
}
