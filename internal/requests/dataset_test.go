package requests

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/workload"
)

// datasets is the repository's dataset fixtures folder.
const datasets = "../../testdata/datasets"

// TestReadDatasetFormats reads the good fixtures, each with its format
// detected, and checks what vLLM's readers take from them.
func TestReadDatasetFormats(t *testing.T) {
	tests := []struct {
		name, file, format string
		wantFormat         string
		entries, skipped   int
		first              workload.Entry
	}{
		{name: "sharegpt detected", file: "sharegpt.json", wantFormat: workload.FormatShareGPT, entries: 12, skipped: 2,
			first: workload.Entry{Index: 0, Line: 2, Prompt: "Why does bread rise in the oven?",
				Reference: "Yeast in the dough turns sugar into carbon dioxide. The gluten network traps the gas, so the loaf swells, and the heat of the oven sets the crumb around the bubbles."}},
		{name: "jsonl detected", file: "prompts.jsonl", wantFormat: workload.FormatJSONL, entries: 5,
			first: workload.Entry{Index: 0, Line: 1, Prompt: "Describe a lighthouse keeper's night in three sentences."}},
		{name: "messages detected", file: "messages.jsonl", wantFormat: workload.FormatMessages, entries: 2,
			first: workload.Entry{Index: 0, Line: 1, ID: "baking", Prompt: "Why did my bread come out flat?",
				Reference: "Most often the yeast was tired or the dough was not proved long enough, so there was too little gas to lift it."}},
		{name: "copilot-agent detected", file: "agent.jsonl", wantFormat: workload.FormatCopilotAgent, entries: 5,
			first: workload.Entry{Index: 0, Line: 1, ID: "s-a", Call: &workload.AgentCall{Session: "s-a", Turn: 1, StartMs: 1780000000000, DurationMs: 200, PromptTokens: 300, CompletionTokens: 10},
				Trace: &workload.TraceRequest{At: 1780000000000 * time.Millisecond, InputTokens: 300, OutputTokens: 10}}},
		{name: "copilot-agent gzip", file: "agent.jsonl.gz", wantFormat: workload.FormatCopilotAgent, entries: 5,
			first: workload.Entry{Index: 0, Line: 1, ID: "s-a", Call: &workload.AgentCall{Session: "s-a", Turn: 1, StartMs: 1780000000000, DurationMs: 200, PromptTokens: 300, CompletionTokens: 10},
				Trace: &workload.TraceRequest{At: 1780000000000 * time.Millisecond, InputTokens: 300, OutputTokens: 10}}},
		{name: "format given", file: "prompts.jsonl", format: workload.FormatJSONL, wantFormat: workload.FormatJSONL, entries: 5,
			first: workload.Entry{Index: 0, Line: 1, Prompt: "Describe a lighthouse keeper's night in three sentences."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ReadDataset(filepath.Join(datasets, tt.file), tt.format)
			if err != nil {
				t.Fatal(err)
			}
			if d.Format != tt.wantFormat || len(d.Entries) != tt.entries || d.Skipped != tt.skipped {
				t.Fatalf("format %q, %d entries, %d skipped; want %q, %d, %d", d.Format, len(d.Entries), d.Skipped, tt.wantFormat, tt.entries, tt.skipped)
			}
			got := d.Entries[0]
			got.Messages = nil
			if diff := cmp.Diff(tt.first, got); diff != "" {
				t.Errorf("first entry (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPromptDatasetsWithTraceFields: a prompt or messages dataset whose
// lines also carry a trace format's mark field (session_id, chat_id,
// hash_ids) is read as the prompts it holds, detected or with its format
// given, as it was before the trace formats.
func TestPromptDatasetsWithTraceFields(t *testing.T) {
	tests := []struct {
		name, line, format string
		wantFormat         string
		wantPrompt         string
	}{
		{name: "prompt with session_id", line: `{"prompt": "Describe a lighthouse.", "session_id": "u1"}`, wantFormat: workload.FormatJSONL, wantPrompt: "Describe a lighthouse."},
		{name: "prompt with session_id, jsonl given", line: `{"prompt": "Describe a lighthouse.", "session_id": "u1"}`, format: workload.FormatJSONL, wantFormat: workload.FormatJSONL, wantPrompt: "Describe a lighthouse."},
		{name: "prompt with chat_id", line: `{"prompt": "Describe a lighthouse.", "chat_id": 7}`, wantFormat: workload.FormatJSONL, wantPrompt: "Describe a lighthouse."},
		{name: "prompt with hash_ids", line: `{"prompt": "Describe a lighthouse.", "hash_ids": [1, 2]}`, format: workload.FormatJSONL, wantFormat: workload.FormatJSONL, wantPrompt: "Describe a lighthouse."},
		{name: "messages with session_id", line: `{"messages": [{"role": "user", "content": "Hi."}, {"role": "assistant", "content": "Hello."}], "session_id": "u1"}`, wantFormat: workload.FormatMessages, wantPrompt: "Hi."},
		{name: "messages with session_id, messages given", line: `{"messages": [{"role": "user", "content": "Hi."}, {"role": "assistant", "content": "Hello."}], "session_id": "u1"}`, format: workload.FormatMessages, wantFormat: workload.FormatMessages, wantPrompt: "Hi."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDataset("p.jsonl", []byte(tt.line+"\n"), tt.format)
			if err != nil {
				t.Fatal(err)
			}
			if d.Format != tt.wantFormat || len(d.Entries) != 1 || d.Entries[0].Prompt != tt.wantPrompt {
				t.Errorf("format %q, %d entries, first %+v; want %q, 1 entry with prompt %q", d.Format, len(d.Entries), d.Entries, tt.wantFormat, tt.wantPrompt)
			}
		})
	}
}

// TestShareGPTEntryLines: each ShareGPT entry's line is where its object
// opens, computed from the decoder's byte offset (the file is indented, so
// entries span many lines).
func TestShareGPTEntryLines(t *testing.T) {
	d, err := ReadDataset(filepath.Join(datasets, "sharegpt.json"), "")
	if err != nil {
		t.Fatal(err)
	}
	src := readFile(t, filepath.Join(datasets, "sharegpt.json"))
	lines := strings.Split(src, "\n")
	for _, e := range d.Entries {
		if l := strings.TrimSpace(lines[e.Line-1]); l != "{" {
			t.Errorf("entry %d: line %d is %q, not the entry's opening brace", e.Index, e.Line, l)
		}
		if !strings.Contains(strings.Join(lines[e.Line-1:min(len(lines), e.Line+8)], "\n"), jsonQuoted(e.Prompt[:min(20, len(e.Prompt))])) {
			t.Errorf("entry %d: its prompt %.20q is not near line %d", e.Index, e.Prompt, e.Line)
		}
	}
	// Entry 2 (0-based) has one turn and entry 6 none: skipped, so the
	// indexes of the kept entries jump over them.
	var idx []int
	for _, e := range d.Entries {
		idx = append(idx, e.Index)
	}
	if diff := cmp.Diff([]int{0, 1, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13}, idx); diff != "" {
		t.Errorf("kept entry indexes (-want +got):\n%s", diff)
	}
}

// TestDatasetErrors: every bad file gives a *DatasetError with the file,
// the line of the problem (0: the whole file) and why.
func TestDatasetErrors(t *testing.T) {
	tests := []struct {
		name, file, format string
		line               int
		reason             string
	}{
		{name: "missing file", file: "bad/none.json", reason: "cannot read the dataset: no such file or directory"},
		{name: "empty", file: "bad/empty.json", reason: "the dataset is empty"},
		{name: "malformed entry", file: "bad/sharegpt_malformed.json", line: 4, reason: "entry 3: malformed JSON: invalid character '{' after array element"},
		{name: "not a list", file: "bad/sharegpt_object.json", format: workload.FormatShareGPT, line: 1, reason: "a ShareGPT dataset is a JSON list of entries"},
		{name: "missing value", file: "bad/sharegpt_missing_value.json", line: 8, reason: `entry 2: conversations[0] has no "value" (the turn's text)`},
		{name: "value type", file: "bad/sharegpt_value_type.json", line: 3, reason: "entry 2: conversations.value is a JSON number, want a string"},
		{name: "no usable entry", file: "bad/sharegpt_no_usable.json", reason: "the dataset holds no entry with two or more conversation turns (2 skipped)"},
		{name: "unterminated list", file: "bad/sharegpt_unterminated.json", line: 3, reason: "malformed JSON"},
		{name: "malformed line", file: "bad/prompts_malformed.jsonl", line: 3, reason: "malformed JSON: invalid character '}' looking for beginning of object key string"},
		{name: "missing prompt", file: "bad/prompts_missing_prompt.jsonl", line: 3, reason: `no "prompt" field`},
		{name: "two values on a line", file: "bad/prompts_two_values.jsonl", line: 2, reason: "more than one JSON value on the line"},
		{name: "output_tokens type", file: "bad/prompts_output_tokens.jsonl", line: 2, reason: `output_tokens is a whole number ≥ 1; got "many"`},
		{name: "output_tokens zero", file: "bad/prompts_zero_output_tokens.jsonl", line: 1, reason: "output_tokens is a whole number ≥ 1; got 0"},
		{name: "no user message", file: "bad/messages_no_user.jsonl", line: 2, reason: "the conversation has no user message"},
		{name: "unknown role", file: "bad/messages_role.jsonl", format: workload.FormatMessages, line: 1, reason: `messages[0] has role "human"; the roles are system, user and assistant`},
		{name: "not UTF-8", file: "bad/not_utf8.jsonl", line: 2, reason: "the dataset is not UTF-8 text"},
		{name: "agent call without a field", file: "bad/agent_missing_field.jsonl", line: 2, reason: `no "duration_ms" field (an agentic trace line is one LLM call`},
		{name: "agent calls out of order", file: "bad/agent_out_of_order.jsonl", line: 3, reason: `the call starts at 150 ms, before session "s-a"'s previous call (line 1) ended at 200 ms`},
		{name: "agent call given as jsonl", file: "agent.jsonl", format: workload.FormatJSONL, line: 1, reason: `format is "jsonl", but the first line has the fields of format copilot-agent`},
		{name: "unknown format", file: "prompts.jsonl", format: "csv", reason: `unknown dataset format "csv"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(datasets, tt.file)
			_, err := ReadDataset(path, tt.format)
			var de *workload.DatasetError
			if !errors.As(err, &de) {
				t.Fatalf("error %v (%T), want a *workload.DatasetError", err, err)
			}
			if de.Path != path || de.Line != tt.line || !strings.Contains(de.Why(), tt.reason) {
				t.Errorf("got %s:%d %q; want %s:%d containing %q", de.Path, de.Line, de.Why(), path, tt.line, tt.reason)
			}
		})
	}
}

// TestDatasetErrorUnwraps: a dataset that cannot be read is the file
// system's error underneath, for errors.Is.
func TestDatasetErrorUnwraps(t *testing.T) {
	tests := []struct {
		name string
		read func(string) error
	}{
		{name: "dataset", read: func(p string) error { _, err := ReadDataset(p, ""); return err }},
		{name: "correctness items", read: func(p string) error { _, err := ReadItems(p); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.read(filepath.Join(datasets, "bad/none.json"))
			var de *workload.DatasetError
			if !errors.As(err, &de) || !de.Unreadable || !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("error %v (%T): want an unreadable *workload.DatasetError wrapping fs.ErrNotExist", err, err)
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// jsonQuoted is s as encoding/json writes it inside quotes (with
// ensure_ascii off, as the fixtures were written).
func jsonQuoted(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

// TestDatasetSHA256: a dataset records the SHA-256 of its file's bytes,
// so a file of the same path and entries but one byte more (a trailing
// blank line) is told apart from the original, and one of the same bytes
// at another path is not.
func TestDatasetSHA256(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(datasets, "prompts.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tests := []struct {
		name  string
		bytes []byte
		same  bool
	}{
		{name: "same bytes elsewhere", bytes: raw, same: true},
		{name: "one more blank line", bytes: append(append([]byte(nil), raw...), '\n'), same: false},
	}
	orig, err := ReadDataset(filepath.Join(datasets, "prompts.jsonl"), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(orig.SHA256) != 64 {
		t.Fatalf("SHA256 %q is not a hex SHA-256", orig.SHA256)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".jsonl")
			if err := os.WriteFile(path, tt.bytes, 0o644); err != nil {
				t.Fatal(err)
			}
			d, err := ReadDataset(path, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Entries) != len(orig.Entries) {
				t.Fatalf("%d entries, want %d", len(d.Entries), len(orig.Entries))
			}
			if same := d.SHA256 == orig.SHA256; same != tt.same {
				t.Errorf("SHA256 %s vs the original's %s: same = %v, want %v", d.SHA256, orig.SHA256, same, tt.same)
			}
		})
	}
}
