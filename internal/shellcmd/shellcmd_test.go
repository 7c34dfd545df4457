package shellcmd

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/spec/spectest"
)

// TestQuoteRoundTrip checks that a shell splits Quote's output
// back into the original word.
func TestQuoteRoundTrip(t *testing.T) {
	tests := []struct{ name, word string }{
		{name: "plain", word: "--port"},
		{name: "empty", word: ""},
		{name: "space", word: "a b"},
		{name: "single quote", word: "it's"},
		{name: "json", word: `{"method":"dflash","n":7}`},
		{name: "dollar", word: "$HOME/bin/vllm"},
		{name: "backslash", word: `a\b`},
		{name: "glob", word: "*.hcl"},
		{name: "newline", word: "a\nb"},
		{name: "quotes mixed", word: `'"'"'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			words, err := spectest.SplitWords("x " + Quote(tt.word) + " y")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"x", tt.word, "y"}, words); diff != "" {
				t.Errorf("round trip of %q via %s (-want +got):\n%s", tt.word, Quote(tt.word), diff)
			}
		})
	}
}

// TestQuoteWithSh checks Quote against a real POSIX shell when
// one is installed.
func TestQuoteWithSh(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	words := []string{"", "a b", "it's", `{"a":1}`, "$HOME", `\`, "*", "a\nb"}
	var quoted []string
	for _, w := range words {
		quoted = append(quoted, Quote(w))
	}
	b, err := exec.Command(sh, "-c", "set -- "+strings.Join(quoted, " ")+`; for w in "$@"; do printf '%s\0' "$w"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	if diff := cmp.Diff(words, got); diff != "" {
		t.Errorf("sh split (-want +got):\n%s", diff)
	}
}
