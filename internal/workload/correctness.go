package workload

// Item is one line of a correctness block's dataset
// (docs/spec.md#correctness): a prompt for the completions API or a
// conversation for the chat API, and an optional answer to score the
// output against.
type Item struct {
	// Line is the item's line in the file (1-based).
	Line int
	// Prompt is a completions line's prompt; for a conversation, its last
	// user message (what reports show).
	Prompt string
	// Messages is a chat line's conversation up to its last user message
	// (the messages sent); nil for a completions line.
	Messages []Message
	// Answer is the line's "answer" (a number as written); HasAnswer is
	// false when the line has none.
	Answer    string
	HasAnswer bool
}

// Chat reports whether the item is sent to the chat API.
func (it Item) Chat() bool { return it.Messages != nil }

// Items is a correctness dataset read into memory.
type Items struct {
	// Path is the file as opened; Data its bytes (for diagnostics'
	// snippets at a line of the file).
	Path string
	Data []byte
	// Items are the lines, in file order.
	Items []Item
}
