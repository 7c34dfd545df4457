package requests

import (
	"embed"
	"math/rand/v2"
	"strings"
	"sync"
	"unicode/utf8"
)

// corpusFS holds the built-in corpus: essays written for this project on
// unrelated subjects, so the document has a wide vocabulary and no short
// period.
//
//go:embed corpus/*.txt
var corpusFS embed.FS

var corpus = sync.OnceValue(func() string {
	entries, err := corpusFS.ReadDir("corpus")
	if err != nil {
		panic(err) // embedded at build time
	}
	var parts []string
	for _, e := range entries { // ReadDir sorts by name
		b, err := corpusFS.ReadFile("corpus/" + e.Name())
		if err != nil {
			panic(err)
		}
		parts = append(parts, strings.TrimSpace(string(b)))
	}
	return strings.Join(parts, "\n\n")
})

// Corpus is the built-in reference document: the embedded essays in file
// name order, separated by blank lines.
func Corpus() string { return corpus() }

// document is a reference text that can be cut at any length: past its
// end it continues with variations of itself (see extend).
type document struct {
	base       string
	paragraphs [][]string // sentences of each paragraph
	text       string     // base, then its variations, as far as asked
	passes     int
}

// newDocument splits base into paragraphs (at blank lines) and sentences;
// base must hold some text.
func newDocument(base string) *document {
	d := &document{base: base, text: base, passes: 1}
	for _, p := range strings.Split(strings.ReplaceAll(base, "\r\n", "\n"), "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			d.paragraphs = append(d.paragraphs, sentences(p))
		}
	}
	if len(d.paragraphs) == 0 {
		d.paragraphs = [][]string{{base}}
	}
	return d
}

// prefix returns the first n bytes of the document (continued as needed),
// cut back to a UTF-8 boundary.
func (d *document) prefix(n int) string {
	return d.text[:d.boundary(n)]
}

// boundary moves a cut at n back to the start of a UTF-8 sequence.
func (d *document) boundary(n int) int {
	d.ensure(n)
	for n > 0 && n < len(d.text) && !utf8.RuneStart(d.text[n]) {
		n--
	}
	return n
}

// ensure continues the document to at least n bytes, at least doubling it
// when it grows, so that a search creeping up to 4 MB copies it a few times
// only.
func (d *document) ensure(n int) {
	if len(d.text) >= n {
		return
	}
	target := max(n, 2*len(d.text))
	var b strings.Builder
	b.Grow(target + len(d.base) + 2)
	b.WriteString(d.text)
	for b.Len() < target {
		d.writePass(&b)
	}
	d.text = b.String()
}

// writePass appends one more pass over the document: its paragraphs in a
// new order (a permutation seeded by the pass number), each with its
// sentences rotated by a pass-dependent amount. A later pass thus repeats
// no paragraph of the document verbatim (unless it is one sentence long)
// and follows no earlier pass's paragraph order, so a model reading a
// 1M-token prompt continued from the ~100 KB corpus sees no period shorter
// than the corpus and no verbatim repeat of it.
func (d *document) writePass(b *strings.Builder) {
	pass := d.passes
	d.passes++
	rng := rand.New(rand.NewPCG(uint64(pass), 0x736c6f67617465)) // "slogate"
	for _, i := range rng.Perm(len(d.paragraphs)) {
		b.WriteString("\n\n")
		ss := d.paragraphs[i]
		rot := (pass + i) % len(ss)
		if rot == 0 && len(ss) > 1 {
			rot = 1
		}
		for j := range ss {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(ss[(j+rot)%len(ss)])
		}
	}
}

// sentences splits a paragraph after ". ", "? " and "! " (and their
// closing quotes) when an upper-case letter or a quote follows.
func sentences(p string) []string {
	var out []string
	start := 0
	for i := 0; i+2 < len(p); i++ {
		c := p[i]
		if c != '.' && c != '?' && c != '!' {
			continue
		}
		j := i + 1
		for j < len(p) && (p[j] == '"' || p[j] == '\'' || p[j] == ')') {
			j++
		}
		if j+1 >= len(p) || p[j] != ' ' {
			continue
		}
		next := p[j+1]
		if (next >= 'A' && next <= 'Z') || next == '"' {
			out = append(out, p[start:j])
			start = j + 1
			i = j
		}
	}
	return append(out, p[start:])
}
