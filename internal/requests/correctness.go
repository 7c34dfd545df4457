package requests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/slogate/slogate/internal/workload"
)

// ReadItems reads a correctness block's dataset (docs/spec.md#correctness):
// JSONL, one object a line with "prompt" (sent to the completions API) or
// "messages" (an OpenAI conversation, sent to the chat API), and an
// optional "answer" (a string or a number). Every problem is a
// *workload.DatasetError naming the line: an unreadable or empty file,
// JSON that does not parse, a line that is neither prompt nor messages,
// an answer of another type.
func ReadItems(path string) (*workload.Items, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &workload.DatasetError{Path: path, Err: fmt.Errorf("cannot read the dataset: %w", errors.Unwrap(err)), Unreadable: true}
	}
	return ParseItems(path, data)
}

// itemLine is a line of a correctness dataset.
type itemLine struct {
	Prompt   *string         `json:"prompt"`
	Messages *[]jsonlMessage `json:"messages"`
	Answer   json.RawMessage `json:"answer"`
}

// ParseItems is ReadItems for a file already in memory; path names it in
// errors.
func ParseItems(path string, data []byte) (*workload.Items, error) {
	fail := func(line int, format string, args ...any) error {
		return &workload.DatasetError{Path: path, Format: "jsonl", Line: line, Reason: fmt.Sprintf(format, args...), Data: data}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &workload.DatasetError{Path: path, Reason: "the dataset is empty", Empty: true}
	}
	if !utf8.Valid(data) {
		return nil, fail(0, "the dataset is not UTF-8 text")
	}
	out := &workload.Items{Path: path, Data: data}
	err := eachJSONLine(data, fail, func(n int, l itemLine) error {
		it := workload.Item{Line: n}
		switch {
		case l.Prompt != nil && l.Messages != nil:
			return fail(n, "the line has both \"prompt\" and \"messages\"; a line is one or the other")
		case l.Prompt != nil:
			if strings.TrimSpace(*l.Prompt) == "" {
				return fail(n, "the prompt is empty")
			}
			it.Prompt = *l.Prompt
		case l.Messages != nil:
			var e workload.Entry
			if err := readMessages(&e, jsonlLine{Messages: l.Messages}); err != nil {
				return fail(n, "%s", err)
			}
			last := -1
			for i, m := range e.Messages {
				if m.Role == "user" {
					last = i
				}
			}
			it.Messages, it.Prompt = e.Messages[:last+1], e.Messages[last].Content
		default:
			return fail(n, "the line is neither a prompt nor a conversation: a line is {\"prompt\": \"…\"} or {\"messages\": [{\"role\": \"user\", \"content\": \"…\"}]}, with an optional \"answer\"")
		}
		if len(l.Answer) > 0 && string(l.Answer) != "null" {
			var s string
			switch {
			case json.Unmarshal(l.Answer, &s) == nil:
				it.Answer = s
			case l.Answer[0] == '-' || (l.Answer[0] >= '0' && l.Answer[0] <= '9'):
				it.Answer = string(l.Answer)
			default:
				return fail(n, "the answer is a string or a number; got %s", l.Answer)
			}
			it.HasAnswer = true
		}
		out.Items = append(out.Items, it)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out.Items) == 0 {
		return nil, &workload.DatasetError{Path: path, Reason: "the dataset holds no line", Empty: true}
	}
	return out, nil
}
