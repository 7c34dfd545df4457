package diagjson

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
)

// TestNew: counts by severity, ranges as given, snippets of whole lines
// with the range's offsets inside them (a context range widens the lines),
// and no range for a diagnostic without a subject.
func TestNew(t *testing.T) {
	src := "server \"q\" {\n  model = \"m\"\n  port  = 70000\n}\n"
	p := hclparse.NewParser()
	if _, diags := p.ParseHCL([]byte(src), "s.hcl"); diags.HasErrors() {
		t.Fatal(diags)
	}
	rng := func(l1, c1, b1, l2, c2, b2 int) *hcl.Range {
		return &hcl.Range{Filename: "s.hcl", Start: hcl.Pos{Line: l1, Column: c1, Byte: b1}, End: hcl.Pos{Line: l2, Column: c2, Byte: b2}}
	}
	diags := hcl.Diagnostics{
		// "70000" on line 3: columns 11-16, bytes 37-42; context: the whole attribute from line 2.
		{Severity: hcl.DiagError, Summary: "Invalid port", Detail: "A port is at most 65535.", Subject: rng(3, 11, 37, 3, 16, 42), Context: rng(2, 3, 15, 3, 16, 42)},
		{Severity: hcl.DiagWarning, Summary: "Odd model", Detail: "m is short.", Subject: rng(2, 11, 23, 2, 14, 26)},
		{Severity: hcl.DiagError, Summary: "Cannot read spec file", Detail: "no such file"},
	}
	serverCtx := `server "q"`
	want := Document{
		FormatVersion: "1.0", Valid: false, ErrorCount: 2, WarningCount: 1,
		Diagnostics: []Diagnostic{
			{Severity: "error", Summary: "Invalid port", Detail: "A port is at most 65535.",
				Range: &Range{Filename: "s.hcl", Start: Pos{3, 11, 37}, End: Pos{3, 16, 42}},
				Snippet: &Snippet{Context: &serverCtx, Code: "  model = \"m\"\n  port  = 70000", StartLine: 2,
					HighlightStartOffset: 24, HighlightEndOffset: 29, Values: []struct{}{}}},
			{Severity: "warning", Summary: "Odd model", Detail: "m is short.",
				Range: &Range{Filename: "s.hcl", Start: Pos{2, 11, 23}, End: Pos{2, 14, 26}},
				Snippet: &Snippet{Context: &serverCtx, Code: "  model = \"m\"", StartLine: 2,
					HighlightStartOffset: 10, HighlightEndOffset: 13, Values: []struct{}{}}},
			{Severity: "error", Summary: "Cannot read spec file", Detail: "no such file"},
		},
	}
	got := New(diags, p.Files())
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("document (-want +got):\n%s", diff)
	}
	if s := got.Diagnostics[0].Snippet; s.Code[s.HighlightStartOffset:s.HighlightEndOffset] != "70000" {
		t.Errorf("highlight %q, want 70000", s.Code[s.HighlightStartOffset:s.HighlightEndOffset])
	}
	if empty := New(nil, nil); !empty.Valid || empty.Diagnostics == nil || empty.ErrorCount+empty.WarningCount != 0 {
		t.Errorf("no diagnostics: %+v", empty)
	}
}
