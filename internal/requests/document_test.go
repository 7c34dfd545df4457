package requests

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/slogate/slogate/internal/workload"
)

// TestCorpus: the built-in corpus is varied prose, not a paragraph
// repeated: several thousand distinct words, no paragraph or sentence twice.
func TestCorpus(t *testing.T) {
	c := Corpus()
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(c), func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
		words[w] = true
	}
	if len(words) < 3500 {
		t.Errorf("%d distinct words, want several thousand (at least 3,500)", len(words))
	}
	d := newDocument(c)
	if len(d.paragraphs) < 100 {
		t.Errorf("%d paragraphs, want at least 100", len(d.paragraphs))
	}
	seen := map[string]bool{}
	for _, p := range d.paragraphs {
		if len(p) < 2 {
			t.Errorf("a paragraph of one sentence cannot be varied by rotation: %.60q", p[0])
		}
		for _, s := range p {
			if seen[s] {
				t.Errorf("sentence repeated in the corpus: %q", s)
			}
			seen[s] = true
		}
	}
	t.Logf("corpus: %d bytes, %d distinct words, %d paragraphs, %d sentences", len(c), len(words), len(d.paragraphs), len(seen))
}

// TestDocumentContinued: past its end the document continues with
// variations of itself: no paragraph of the original appears verbatim
// again, each pass orders the paragraphs differently, and a 4 MB document
// (a 1M-token prompt) holds no exact repeat of the corpus's opening.
func TestDocumentContinued(t *testing.T) {
	c := Corpus()
	d := newDocument(c)
	const size = 4 << 20
	text := d.prefix(size)
	if len(text) != size {
		t.Fatalf("prefix(%d) gave %d bytes", size, len(text))
	}
	if !strings.HasPrefix(text, c+"\n\n") {
		t.Fatal("the continued document does not start with the document itself")
	}
	rest := text[len(c):]
	for _, p := range strings.Split(c, "\n\n") {
		if strings.Contains(rest, p) {
			t.Fatalf("a paragraph of the corpus reappears verbatim: %.80q…", p)
		}
	}
	if strings.Contains(rest, c[:2000]) {
		t.Fatal("the corpus's opening reappears verbatim")
	}
	var firsts []string
	// The first paragraph of each pass (every len(paragraphs)-th one).
	paras := strings.Split(strings.TrimPrefix(rest, "\n\n"), "\n\n")
	for i := 0; i+len(d.paragraphs) <= len(paras); i += len(d.paragraphs) {
		firsts = append(firsts, paras[i][:60])
	}
	distinct := map[string]bool{}
	for _, f := range firsts {
		distinct[f] = true
	}
	if len(firsts) < 40 || len(distinct) < len(firsts)*3/4 {
		t.Errorf("%d passes begin with only %d different paragraphs: the order does not vary", len(firsts), len(distinct))
	}
}

// TestDocumentUTF8: a cut never splits a multi-byte character.
func TestDocumentUTF8(t *testing.T) {
	d := newDocument("Ça coûte très cher. Überall Grüße.\n\nΑλφα βήτα. Γάμμα δέλτα.")
	for n := 0; n < 400; n++ {
		if p := d.prefix(n); !utf8.ValidString(p) || len(p) > n {
			t.Fatalf("prefix(%d) = %q is not valid UTF-8", n, p)
		}
	}
}

// TestBuiltInHashes: the built-in article's hashes that workload records
// for readers without this package are those of the corpus and the
// default instruction this package sends.
func TestBuiltInHashes(t *testing.T) {
	if got := sha256Hex(Corpus()); got != workload.BuiltInDocumentSHA256 {
		t.Errorf("the corpus hashes to %s, workload.BuiltInDocumentSHA256 is %s: set it to the corpus's", got, workload.BuiltInDocumentSHA256)
	}
	if got := sha256Hex(DefaultInstruction); got != workload.BuiltInInstructionSHA256 {
		t.Errorf("the default instruction hashes to %s, workload.BuiltInInstructionSHA256 is %s: set it to the instruction's", got, workload.BuiltInInstructionSHA256)
	}
}
