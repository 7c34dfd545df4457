package spec

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/requests"
)

// TestCorrectnessDatasetLines: a problem with a line of a correctness
// block's dataset is a diagnostic at that line of the dataset file, with
// the line as its snippet and the block named in the detail.
func TestCorrectnessDatasetLines(t *testing.T) {
	tests := []struct {
		name    string
		block   string // the block's attributes besides dataset
		data    string
		line    int
		summary string
		detail  string
	}{
		{name: "a scorer without answers", block: `scorer = "exact"`,
			data: "{\"prompt\": \"a\", \"answer\": \"x\"}\n{\"prompt\": \"b\"}\n", line: 2, summary: "Answer missing",
			detail: `The block's scorer "exact" scores each output against the line's "answer"; this line has none.`},
		{name: "a line neither prompt nor messages",
			data: "{\"prompt\": \"a\"}\n\n{\"text\": \"b\"}\n", line: 3, summary: "Invalid dataset line",
			detail: "the line is neither a prompt nor a conversation"},
		{name: "malformed JSON",
			data: "{\"prompt\": \"a\"}\n{\"prompt\": \n", line: 2, summary: "Invalid dataset line", detail: "malformed JSON"},
		{name: "prompts and conversations mixed",
			data: "{\"prompt\": \"a\"}\n{\"messages\": [{\"role\": \"user\", \"content\": \"b\"}]}\n", line: 2, summary: "Mixed dataset",
			detail: "This line is a conversation (chat API) and line 1 is a prompt (completions API)"},
		{name: "an answer of another type",
			data: "{\"prompt\": \"a\", \"answer\": [1]}\n", line: 1, summary: "Invalid dataset line", detail: "the answer is a string or a number; got [1]"},
		{name: "a conversation without a user message",
			data: "{\"messages\": [{\"role\": \"system\", \"content\": \"b\"}]}\n", line: 1, summary: "Invalid dataset line", detail: "no user message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "items.jsonl")
			if err := os.WriteFile(data, []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			src := "server \"s\" { model = \"m\" }\ncorrectness \"greedy\" {\n  dataset = \"items.jsonl\"\n  " + tt.block + "\n}\n"
			s, diags := LoadSource(filepath.Join(dir, "spec.hcl"), []byte(src), LoadOptions{LookupEnv: testEnv, ReadItems: requests.ReadItems})
			if len(diags) != 1 {
				t.Fatalf("%d diagnostics, want 1: %v", len(diags), diags)
			}
			d := diags[0]
			if d.Summary != tt.summary || d.Subject.Filename != data || d.Subject.Start.Line != tt.line {
				t.Fatalf("diagnostic %q at %s:%d, want %q at %s:%d", d.Summary, d.Subject.Filename, d.Subject.Start.Line, tt.summary, data, tt.line)
			}
			if !strings.Contains(d.Detail, tt.detail) || !strings.Contains(d.Detail, `correctness "greedy", `+filepath.Join(dir, "spec.hcl")+":3") {
				t.Errorf("detail = %q, want %q and the block's place", d.Detail, tt.detail)
			}
			var buf bytes.Buffer
			if err := WriteDiagnostics(&buf, s.Files, diags, false); err != nil {
				t.Fatal(err)
			}
			lineText := strings.Split(tt.data, "\n")[tt.line-1]
			if out := buf.String(); !strings.Contains(out, "on "+data+" line ") || !strings.Contains(out, lineText) {
				t.Errorf("printed diagnostic lacks the dataset's line and snippet %q:\n%s", lineText, out)
			}
		})
	}
}

// TestCorrectnessDefaults: a block with a dataset alone takes the
// documented defaults.
func TestCorrectnessDefaults(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.jsonl"), []byte("{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, {\"role\": \"assistant\", \"content\": \"yo\"}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "server \"s\" { model = \"m\" }\ncorrectness \"chat\" { dataset = \"c.jsonl\" }\n"
	s, diags := LoadSource(filepath.Join(dir, "spec.hcl"), []byte(src), LoadOptions{LookupEnv: testEnv, ReadItems: requests.ReadItems})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	c := s.CorrectnessBlock("chat")
	if c == nil || !c.Chat || c.MaxOutput != 64 || c.Logprobs != 5 || c.Concurrency != 1 || c.MaxMismatch != 0 ||
		c.Margin != 0.01 || c.NearTieGap != 0.1 || c.Scorer != "" || len(c.Items.Items) != 1 || len(c.Items.Items[0].Messages) != 1 {
		t.Errorf("block = %+v", c)
	}
}
