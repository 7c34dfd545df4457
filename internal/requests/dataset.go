package requests

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/slogate/slogate/internal/workload"
)

// ReadDataset reads the dataset at path in format (FormatShareGPT,
// FormatJSONL, FormatMessages, a trace format of workload.TraceFormats,
// or "" to detect it: a first line with a trace format's mark field or
// CSV column is that trace; a file whose first non-blank byte is '[' is
// ShareGPT; otherwise the first line's object decides, "messages" over
// "prompt"). Every problem is a *DatasetError naming the file, the line
// and why: an unreadable or empty file, JSON that does not parse, an
// entry or line without its field, a field of the wrong type, a file
// with no usable entry, a trace out of time order, a format the first
// line contradicts.
func ReadDataset(path, format string) (*workload.Dataset, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &workload.DatasetError{Path: path, Err: fmt.Errorf("cannot read the dataset: %w", errors.Unwrap(err)), Unreadable: true}
	}
	return ParseDataset(path, data, format)
}

// ParseDataset is ReadDataset for a file already in memory; path names it
// in errors.
func ParseDataset(path string, data []byte, format string) (*workload.Dataset, error) {
	sum := sha256.Sum256(data)
	if gz, err := gunzip(data); err != nil {
		return nil, &workload.DatasetError{Path: path, Format: format, Err: err}
	} else if gz != nil {
		data = gz
	}
	read := format
	fail := func(line int, format string, args ...any) error {
		de := &workload.DatasetError{Path: path, Format: read, Line: line, Reason: fmt.Sprintf(format, args...)}
		if line > 0 && workload.IsTrace(read) {
			de.Data = data // a trace's diagnostic shows its line
		}
		return de
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, &workload.DatasetError{Path: path, Reason: "the dataset is empty", Empty: true}
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, size := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			off += size
		}
		return nil, fail(lineAt(data, off), "the dataset is not UTF-8 text")
	}
	first, _, _ := bytes.Cut(trimmed, []byte("\n"))
	trace, terr := detectTrace(bytes.TrimSpace(first))
	switch {
	case format != "" && trace != "" && trace != format:
		return nil, fail(1, "format is %q, but the first line has the fields of format %s (%s); set format = %q, or point dataset at a %s file", format, trace, traceKeys(trace), trace, format)
	case format != "" && workload.IsTrace(format) && trace == "":
		f, _ := workload.TraceFormatOf(format)
		return nil, fail(1, "format is %q, but the first line does not hold that format's fields (%s)", format, traceKeys(f.Name))
	case format == "" && terr != nil:
		return nil, fail(1, "%v", terr)
	case format == "" && trace != "":
		format = trace
	case format == "":
		format = detectFormat(trimmed)
	}
	read = format
	d := &workload.Dataset{Path: path, Format: format, SHA256: hex.EncodeToString(sum[:])}
	var err error
	switch format {
	case workload.FormatShareGPT:
		err = readShareGPT(d, data, fail)
	case workload.FormatJSONL, workload.FormatMessages:
		err = readLines(d, data, fail)
	case workload.FormatCopilotAgent:
		err = readAgentCalls(d, data, fail)
	default:
		if f, ok := workload.TraceFormatOf(format); ok {
			err = readTrace(d, data, f, fail)
			break
		}
		return nil, fail(0, "unknown dataset format %q (the formats are %s)", format, strings.Join(workload.Formats, ", "))
	}
	if err != nil {
		return nil, err
	}
	if len(d.Entries) == 0 {
		de := &workload.DatasetError{Path: path, Format: format, Reason: "the dataset holds no entry", Empty: true}
		if d.ZeroLength > 0 {
			de.Err = fmt.Errorf("the trace holds no request with input and output tokens (%d with none left out)", d.ZeroLength)
		}
		if d.Skipped > 0 {
			de.Err = fmt.Errorf("the dataset holds no entry with two or more conversation turns (%d skipped)", d.Skipped)
		}
		return nil, de
	}
	return d, nil
}

// detectFormat guesses a dataset's format from its first bytes.
func detectFormat(trimmed []byte) string {
	if trimmed[0] == '[' {
		return workload.FormatShareGPT
	}
	first, _, _ := bytes.Cut(trimmed, []byte("\n"))
	var probe map[string]json.RawMessage
	if json.Unmarshal(first, &probe) == nil {
		if _, ok := probe["messages"]; ok {
			return workload.FormatMessages
		}
	}
	return workload.FormatJSONL
}

// lineAt is the 1-based line of byte offset off in data.
func lineAt(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// jsonError says why a JSON value did not decode, without Go's type
// names.
func jsonError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("malformed JSON: %w", se)
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "the value"
		}
		return fmt.Errorf("%s is a JSON %s, want %s", field, te.Value, jsonWant(te.Type.String()))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("malformed JSON: the file ends inside a value")
	}
	return fmt.Errorf("malformed JSON: %w", err)
}

func jsonWant(goType string) string {
	switch {
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "int"):
		return "a whole number"
	case strings.HasPrefix(goType, "map"), strings.HasPrefix(goType, "struct"), strings.HasPrefix(goType, "requests."):
		return "an object"
	}
	return goType
}

// syntaxLine is the line of a JSON syntax error, whose offset counts from
// base (a json.Decoder's from the start of its stream: base 0); other
// errors are placed at base.
func syntaxLine(data []byte, base int, err error) int {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return lineAt(data, base+int(se.Offset)-1)
	}
	return lineAt(data, base)
}

// shareGPTEntry is the part of a ShareGPT entry vLLM reads.
type shareGPTEntry struct {
	Conversations *[]shareGPTTurn `json:"conversations"`
}

type shareGPTTurn struct {
	Value *string `json:"value"`
}

// readShareGPT reads a JSON list of ShareGPT entries. It decodes one entry
// at a time so that each error names the line its entry starts on: the
// decoder's byte offset, counted into lines (encoding/json reports offsets,
// not lines).
func readShareGPT(d *workload.Dataset, data []byte, fail func(int, string, ...any) error) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return fail(syntaxLine(data, 0, err), "%v", jsonError(err))
	}
	if delim, ok := tok.(json.Delim); !ok || delim != '[' {
		return fail(1, "a ShareGPT dataset is a JSON list of entries, [ {\"conversations\": [...]}, … ]")
	}
	// Lines are counted on from the previous entry's start: counting from
	// the file's start for each entry made a 10,000-entry file quadratic.
	line, counted := 1, 0
	for index := 0; dec.More(); index++ {
		start := int(dec.InputOffset())
		// The entry starts at the first non-space byte after the offset
		// (past the comma).
		for start < len(data) && (data[start] == ',' || isSpace(data[start])) {
			start++
		}
		line += bytes.Count(data[counted:start], []byte("\n"))
		counted = start
		var e shareGPTEntry
		if err := dec.Decode(&e); err != nil {
			if _, syntax := err.(*json.SyntaxError); !syntax {
				return fail(line, "entry %d: %v", index+1, jsonError(err))
			}
			return fail(syntaxLine(data, 0, err), "entry %d: %v", index+1, jsonError(err))
		}
		// vLLM keeps entries with "conversations" of at least two turns
		// and drops the rest silently.
		if e.Conversations == nil || len(*e.Conversations) < 2 {
			d.Skipped++
			continue
		}
		turns := *e.Conversations
		for i, t := range turns[:2] {
			if t.Value == nil {
				return fail(line, "entry %d: conversations[%d] has no \"value\" (the turn's text)", index+1, i)
			}
		}
		d.Entries = append(d.Entries, workload.Entry{Index: index, Line: line, Prompt: *turns[0].Value, Reference: *turns[1].Value})
	}
	if _, err := dec.Token(); err != nil {
		return fail(syntaxLine(data, 0, err), "%v", jsonError(err))
	}
	if rest := bytes.TrimSpace(data[dec.InputOffset():]); len(rest) > 0 {
		return fail(lineAt(data, int(dec.InputOffset())), "text after the end of the list")
	}
	return nil
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// jsonlLine is a line of a JSONL prompt or messages dataset.
type jsonlLine struct {
	Prompt       *string         `json:"prompt"`
	OutputTokens json.RawMessage `json:"output_tokens"`
	Messages     *[]jsonlMessage `json:"messages"`
	ID           json.RawMessage `json:"id"`
}

type jsonlMessage struct {
	Role    *string `json:"role"`
	Content *string `json:"content"`
}

// readLines reads a JSONL dataset, one entry a non-blank line.
func readLines(d *workload.Dataset, data []byte, fail func(int, string, ...any) error) error {
	err := eachJSONLine(data, fail, func(n int, l jsonlLine) error {
		index := len(d.Entries)
		e := workload.Entry{Index: index, Line: n}
		if d.Format == workload.FormatJSONL {
			if l.Prompt == nil {
				return fail(n, "no \"prompt\" field (a JSONL dataset line is {\"prompt\": \"…\"}, with an optional \"output_tokens\")")
			}
			if strings.TrimSpace(*l.Prompt) == "" {
				return fail(n, "the prompt is empty")
			}
			e.Prompt = *l.Prompt
			if l.OutputTokens != nil {
				v, err := strconv.ParseInt(string(l.OutputTokens), 10, 32)
				if err != nil || v < 1 {
					return fail(n, "output_tokens is a whole number ≥ 1; got %s", l.OutputTokens)
				}
				e.OutputTokens = int(v)
			}
		} else {
			if err := readMessages(&e, l); err != nil {
				return fail(n, "%s", err)
			}
		}
		d.Entries = append(d.Entries, e)
		return nil
	})
	if err != nil {
		return err
	}
	return nil
}

// eachJSONLine decodes data's non-blank lines, each one JSON value, and
// hands each to take as a T with its 1-based line number. A line that is
// no JSON value, or more than one, is fail's at that line, as is the
// first error take returns (take words its own with fail); a read error
// is fail's at line 0. (encoding/json's Decoder reads a stream of values
// but not lines, and the errors here name the line.)
func eachJSONLine[T any](data []byte, fail func(int, string, ...any) error, take func(n int, v T) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for n := 1; sc.Scan(); n++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var v T
		dec := json.NewDecoder(bytes.NewReader(text))
		if err := dec.Decode(&v); err != nil {
			return fail(n, "%v", jsonError(err))
		}
		if dec.More() {
			return fail(n, "more than one JSON value on the line (JSONL holds one object a line)")
		}
		if err := take(n, v); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fail(0, "cannot read the dataset: %v", err)
	}
	return nil
}

// chatRoles are the roles a messages conversation may hold.
var chatRoles = []string{"system", "user", "assistant"}

// readMessages fills e from a messages line: a non-empty list of
// {role, content} with a user message, whose prompt is the first user
// message and reference the assistant message right after it.
func readMessages(e *workload.Entry, l jsonlLine) error {
	if l.Messages == nil {
		return fmt.Errorf("no \"messages\" field (a messages dataset line is {\"messages\": [{\"role\": \"user\", \"content\": \"…\"}, …]})")
	}
	if len(l.ID) > 0 {
		var s string
		if json.Unmarshal(l.ID, &s) == nil {
			e.ID = s
		} else {
			e.ID = string(l.ID)
		}
	}
	firstUser := -1
	for i, m := range *l.Messages {
		if m.Role == nil || m.Content == nil {
			return fmt.Errorf("messages[%d] needs \"role\" and \"content\" strings", i)
		}
		known := false
		for _, r := range chatRoles {
			known = known || *m.Role == r
		}
		if !known {
			return fmt.Errorf("messages[%d] has role %q; the roles are system, user and assistant", i, *m.Role)
		}
		if *m.Role == "user" && firstUser < 0 {
			firstUser = i
		}
		e.Messages = append(e.Messages, workload.Message{Role: *m.Role, Content: *m.Content})
	}
	if firstUser < 0 {
		return fmt.Errorf("the conversation has no user message")
	}
	e.Prompt = e.Messages[firstUser].Content
	if firstUser+1 < len(e.Messages) && e.Messages[firstUser+1].Role == "assistant" {
		e.Reference = e.Messages[firstUser+1].Content
	}
	return nil
}
