package plan

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/spec"
)

// TestCorrectnessKept: -run keeps a correctness block by its test name,
// <server>/correctness/<name>, or through a kept assert that reads it
// (correctness["chat"]); a filter of other tests leaves it out.
func TestCorrectnessKept(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.jsonl"), []byte("{\"prompt\": \"a\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "server \"q\" { model = \"m\" }\ncorrectness \"greedy\" { dataset = \"p.jsonl\" }\ncorrectness \"chat\" { dataset = \"p.jsonl\" }\n" +
		"assert \"answered\" {\n  condition = correctness[\"chat\"].errors == 0\n  error_message = \"x\"\n}\n"
	sp, diags := spec.LoadSource(filepath.Join(dir, "s.hcl"), []byte(src), spec.LoadOptions{ReadItems: requests.ReadItems})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	tests := []struct {
		name string
		run  string
		want []string
	}{
		{name: "no filter", want: []string{"greedy", "chat"}},
		{name: "one block", run: "q/correctness/greedy", want: []string{"greedy"}},
		{name: "every block", run: "/correctness/", want: []string{"greedy", "chat"}},
		{name: "other tests", run: "decode", want: nil},
		{name: "through an assert", run: "assert/answered", want: []string{"chat"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var keep *regexp.Regexp
			if tt.run != "" {
				keep = regexp.MustCompile(tt.run)
			}
			var got []string
			for _, c := range New(sp, sp.Servers[0], keep).Correctness {
				got = append(got, c.Name)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("kept %v, want %v", got, tt.want)
			}
		})
	}
}
