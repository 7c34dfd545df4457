package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/result"
)

// TestRender: each format renders what its writer writes; json is
// results.json itself; any other name is an error that names it.
func TestRender(t *testing.T) {
	res := &result.Results{Schema: result.Schema, Server: result.Server{Name: "qwen", Model: "Qwen/Qwen3.5-4B"}}
	var md, html bytes.Buffer
	if err := WriteMarkdown(&md, res); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&html, res); err != nil {
		t.Fatal(err)
	}
	js, err := res.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for format, want := range map[string][]byte{"md": md.Bytes(), "html": html.Bytes(), "json": js} {
		got, err := Render(format, res)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("Render(%q): %v; output differs from its writer's (%d vs %d bytes)", format, err, len(got), len(want))
		}
	}
	if _, err := Render("pdf", res); err == nil || !strings.Contains(err.Error(), `"pdf"`) {
		t.Errorf("Render(pdf): %v", err)
	}
}
