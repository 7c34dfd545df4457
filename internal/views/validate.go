package views

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/views/diagjson"
	"github.com/slogate/slogate/internal/vocab"
)

// This file is the spec view: what run, plan and validate show of the
// spec files they loaded (specload returns the files; these write them).

// SpecFile is one loaded spec file as the spec view shows it: its path
// as given, its file name as the spec records it (empty when it did not
// load), its sources (for the snippets) and every diagnostic.
type SpecFile struct {
	Path, Filename string
	Sources        map[string]*hcl.File
	Diags          hcl.Diagnostics
}

// WriteDiagnostics prints every file's diagnostics on w: file, line,
// snippet, in colour on the same terms as the console (a terminal,
// NO_COLOR unset, TERM not dumb).
func WriteDiagnostics(w io.Writer, files []SpecFile) error {
	color := report.ConsoleOptionsFor(w, nil).Color
	for _, f := range files {
		if len(f.Diags) == 0 {
			continue
		}
		if err := spec.WriteDiagnostics(w, f.Sources, f.Diags, color); err != nil {
			return exit.Infraf("writing diagnostics: %w", err)
		}
	}
	return nil
}

// WriteInvalidSpecEvents writes what `go test -json` writes for a package
// that does not build, for an invalid spec file: test2json events with
// Package = the spec file, its diagnostics (without colour) as "output"
// events, then the FAIL lines and a "fail" event.
func WriteInvalidSpecEvents(w io.Writer, f SpecFile) error {
	var text bytes.Buffer
	if err := spec.WriteDiagnostics(&text, f.Sources, f.Diags, false); err != nil {
		return exit.Infraf("writing diagnostics: %w", err)
	}
	stream := report.NewJSONStream(w, f.Path)
	for _, l := range strings.Split(strings.TrimRight(text.String(), "\n"), "\n") {
		stream.Log(l)
	}
	stream.Finish(vocab.Fail, 0)
	return nil
}

// WriteValidateText is `slogate validate`'s text output: the diagnostics
// on stderr, "ok  SPEC" on stdout for each valid spec; when a spec is
// invalid it returns exit.Quiet(exit.Usage).
func WriteValidateText(stdout, stderr io.Writer, files []SpecFile) error {
	werr := WriteDiagnostics(stderr, files)
	var err error
	for _, f := range files {
		if f.Diags.HasErrors() {
			err = exit.Quiet(exit.Usage)
			continue
		}
		fmt.Fprintf(stdout, "ok  %s\n", f.Filename)
	}
	if werr != nil {
		return werr
	}
	return err
}

// WriteValidateJSON prints the diagnostics of all files as one document
// in the shape of `terraform validate -json` (diagjson); when a spec is
// invalid it returns exit.Quiet(exit.Usage).
func WriteValidateJSON(stdout io.Writer, files []SpecFile) error {
	var diags hcl.Diagnostics
	sources := map[string]*hcl.File{}
	for _, f := range files {
		diags = append(diags, f.Diags...)
		maps.Copy(sources, f.Sources)
	}
	doc := diagjson.New(diags, sources)
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return exit.Infraf("validate: writing output: %w", err)
	}
	if !doc.Valid {
		return exit.Quiet(exit.Usage)
	}
	return nil
}
