package spec

import (
	"fmt"
	"io"

	"github.com/hashicorp/hcl/v2"
)

// diagnosticWidth is the column at which diagnostic details are wrapped.
const diagnosticWidth = 100

// WriteDiagnostics prints diags the way HCL does: severity and summary,
// file:line, a snippet of the source with the subject underlined, and the
// detail. files are the parsed sources (Spec.Files); color adds ANSI bold
// and colour, for terminals only.
func WriteDiagnostics(w io.Writer, files map[string]*hcl.File, diags hcl.Diagnostics, color bool) error {
	return hcl.NewDiagnosticTextWriter(w, files, diagnosticWidth, color).WriteDiagnostics(diags)
}

// where names a source position the way people cite it: "file:line".
func where(r hcl.Range) string { return fmt.Sprintf("%s:%d", r.Filename, r.Start.Line) }
