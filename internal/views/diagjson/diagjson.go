// Package diagjson renders HCL diagnostics as the JSON document of
// `terraform validate -json` (format_version "1.0"), which editors and CI
// tools already read: validity, counts, and per diagnostic its severity,
// summary, detail, source range and a snippet of the source around it.
package diagjson

import (
	"bufio"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcled"
)

// FormatVersion is the version of the document's shape, terraform's.
const FormatVersion = "1.0"

// Document is the whole output of `slogate validate -json`.
type Document struct {
	FormatVersion string       `json:"format_version"`
	Valid         bool         `json:"valid"`
	ErrorCount    int          `json:"error_count"`
	WarningCount  int          `json:"warning_count"`
	Diagnostics   []Diagnostic `json:"diagnostics"`
}

// Diagnostic is one problem. Range and Snippet are absent when the
// diagnostic has no source location (a file that cannot be read).
type Diagnostic struct {
	Severity string   `json:"severity"` // "error" or "warning"
	Summary  string   `json:"summary"`
	Detail   string   `json:"detail"`
	Range    *Range   `json:"range,omitempty"`
	Snippet  *Snippet `json:"snippet,omitempty"`
}

// Range is a span of a source file; End is exclusive.
type Range struct {
	Filename string `json:"filename"`
	Start    Pos    `json:"start"`
	End      Pos    `json:"end"`
}

// Pos is a position in a source file: 1-based line and column (in
// characters), 0-based byte offset.
type Pos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

// Snippet is the source lines a diagnostic covers, as terraform gives them.
type Snippet struct {
	// Context names the enclosing block (`server "qwen"`), when there is one.
	Context *string `json:"context"`
	// Code is the whole lines that hold the range (and its context range).
	Code string `json:"code"`
	// StartLine is the line number of Code's first line.
	StartLine int `json:"start_line"`
	// HighlightStartOffset and HighlightEndOffset are the byte offsets of
	// the range within Code.
	HighlightStartOffset int `json:"highlight_start_offset"`
	HighlightEndOffset   int `json:"highlight_end_offset"`
	// Values are expression values terraform shows; always empty here.
	Values []struct{} `json:"values"`
}

// New builds the document for diags; files are the parsed sources by
// filename, for the snippets (a file missing from it gets no snippet).
func New(diags hcl.Diagnostics, files map[string]*hcl.File) Document {
	doc := Document{FormatVersion: FormatVersion, Diagnostics: []Diagnostic{}}
	for _, d := range diags {
		doc.Diagnostics = append(doc.Diagnostics, newDiagnostic(d, files))
		if d.Severity == hcl.DiagError {
			doc.ErrorCount++
		} else {
			doc.WarningCount++
		}
	}
	doc.Valid = doc.ErrorCount == 0
	return doc
}

func newDiagnostic(d *hcl.Diagnostic, files map[string]*hcl.File) Diagnostic {
	out := Diagnostic{Severity: "error", Summary: d.Summary, Detail: d.Detail}
	if d.Severity == hcl.DiagWarning {
		out.Severity = "warning"
	}
	if d.Subject == nil {
		return out
	}
	out.Range = &Range{Filename: d.Subject.Filename, Start: pos(d.Subject.Start), End: pos(d.Subject.End)}
	if f := files[d.Subject.Filename]; f != nil && f.Bytes != nil {
		out.Snippet = snippet(f, *d.Subject, d.Context)
	}
	return out
}

func pos(p hcl.Pos) Pos { return Pos{Line: p.Line, Column: p.Column, Byte: p.Byte} }

// snippet is terraform's snippet of subject in f: the whole lines covering
// subject and the context range, with the subject's offsets within them.
func snippet(f *hcl.File, subject hcl.Range, context *hcl.Range) *Snippet {
	highlight := subject
	if highlight.Empty() { // an empty range still marks one character
		highlight.End.Byte++
		highlight.End.Column++
	}
	lines := highlight
	if context != nil {
		lines = hcl.RangeOver(lines, *context)
	}
	s := &Snippet{StartLine: lines.Start.Line, Values: []struct{}{}}
	if c := hcled.ContextString(f, highlight.Start.Byte-1); c != "" {
		s.Context = &c
	}
	var code strings.Builder
	codeStart := -1
	sc := hcl.NewRangeScanner(f.Bytes, subject.Filename, bufio.ScanLines)
	for sc.Scan() {
		r := sc.Range()
		if r.Overlaps(lines) {
			if codeStart < 0 {
				codeStart = r.Start.Byte
			}
			code.Write(r.SliceBytes(f.Bytes))
			code.WriteByte('\n')
		}
	}
	s.Code = strings.TrimSuffix(code.String(), "\n")
	start := highlight.Start.Byte - max(codeStart, 0)
	end := start + highlight.End.Byte - highlight.Start.Byte
	s.HighlightStartOffset = min(max(start, 0), len(s.Code))
	s.HighlightEndOffset = min(max(end, 0), len(s.Code))
	return s
}
