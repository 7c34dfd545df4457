package workload

import "fmt"

// Dataset formats (the values of workload.format; docs/spec.md#datasets).
const (
	// FormatShareGPT is a JSON list of entries whose "conversations" hold
	// {"from", "value"} turns, as vLLM's ShareGPTDataset reads it: the
	// first turn's value is the prompt, the second's the reference output.
	FormatShareGPT = "sharegpt"
	// FormatJSONL is one JSON object a line with a "prompt" string and an
	// optional whole "output_tokens" (vLLM's custom dataset).
	FormatJSONL = "jsonl"
	// FormatMessages is one JSON object a line with "messages": an OpenAI
	// conversation of {"role", "content"} messages (and an optional "id").
	FormatMessages = "messages"
	// FormatCopilotAgent is a coding agent's trace (GitHub Copilot's
	// coding-agent traces of June 2026, as docs/spec.md#agentic-sessions
	// defines its fields): one LLM call a line, JSONL or JSONL.gz, with its
	// session, turn, start time, duration and token counts; the gaps between
	// a session's calls are its tool batches.
	FormatCopilotAgent = "copilot-agent"
)

// Formats are the dataset formats, in the order docs list them: the prompt
// datasets', then the traces' (TraceFormats).
var Formats = append([]string{FormatShareGPT, FormatJSONL, FormatMessages}, TraceFormatNames()...)

// AgentCall is one LLM call of an agentic trace (FormatCopilotAgent), as
// recorded.
type AgentCall struct {
	// Session names the call's session; Turn is the user turn of the
	// session the call belongs to (1-based).
	Session string
	Turn    int
	// StartMs is when the call was sent (ms, the trace's clock) and
	// DurationMs how long the server took to answer it.
	StartMs, DurationMs float64
	// PromptTokens, CompletionTokens and CachedTokens are the call's
	// recorded token counts (CachedTokens: the prompt tokens the recorded
	// server's cache served; 0 when not recorded).
	PromptTokens, CompletionTokens, CachedTokens int
}

// Message is one message of a dataset conversation.
type Message struct {
	Role    string
	Content string
}

// Entry is one usable entry of a dataset, in file order.
type Entry struct {
	// Index is the entry's place among the file's entries (0-based,
	// counting the ones ShareGPT skips for having fewer than two turns).
	Index int
	// Line is the file line the entry starts on (1-based).
	Line int
	// Prompt is the prompt text: ShareGPT's first turn, a JSONL line's
	// prompt, a messages conversation's first user message.
	Prompt string
	// Reference is the reference output: ShareGPT's second turn, the
	// assistant message after a conversation's first user message; "" when
	// the entry has none.
	Reference string
	// OutputTokens is a JSONL line's output_tokens; 0 when not given.
	OutputTokens int
	// Messages is a messages entry's whole conversation; nil in the other
	// formats.
	Messages []Message
	// ID is a messages entry's "id", or "" when it has none; an agentic
	// trace's session.
	ID string
	// Call is an agentic trace's call (FormatCopilotAgent); nil in the
	// other formats.
	Call *AgentCall
	// Trace is a trace line's request (a trace format's entry); nil in
	// the prompt datasets.
	Trace *TraceRequest
}

// Dataset is a dataset file read into memory.
type Dataset struct {
	// Path is the file as opened; Format is the format read (given or
	// detected).
	Path, Format string
	// Entries are the usable entries, in file order.
	Entries []Entry
	// Skipped counts ShareGPT entries without "conversations" or with fewer
	// than two turns: vLLM drops them while loading, and so does
	// requests.ReadDataset (they are not errors).
	Skipped int
	// ZeroLength counts trace lines with no input or no output token (a
	// BurstGPT failure logs a response of 0 tokens): they cannot be sent,
	// and are left out while reading.
	ZeroLength int
	// SHA256 is the hex SHA-256 of the file's bytes as read: what a
	// traffic cell's schedule records of the dataset, so that two runs of
	// one path but other contents are told apart.
	SHA256 string
}

// DatasetError is a problem with a dataset file: which file, which line
// (0 when the problem is the whole file), and why.
type DatasetError struct {
	Path string
	// Format is the format the file was read as (given or detected); ""
	// when the problem came before the format was known.
	Format string
	Line   int
	// Reason says why in words; Err says it instead as an error, the
	// words its own (the file system's error wrapped, a count in a
	// sentence): Why is whichever is set, Unwrap is Err.
	Reason string
	Err    error
	// Data are the file's bytes when the problem is at a line, for a
	// diagnostic's snippet of that line; nil otherwise.
	Data []byte
	// Unreadable is set when the file could not be read at all; Empty when
	// it holds no usable entry (none at all, none with two turns, none the
	// filter keeps).
	Unreadable, Empty bool
}

func (e *DatasetError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Why())
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Why())
}

// Why says why the dataset is refused: Err's words when Err is set, else
// Reason.
func (e *DatasetError) Why() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return e.Reason
}

// Unwrap is the error behind e (Err), nil when Reason says why.
func (e *DatasetError) Unwrap() error { return e.Err }
