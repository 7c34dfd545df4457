// Package specload loads the spec files a command is given with every
// static check slogate has (the language's, the conditions' from assert, the
// plan's), and shows what it found: diagnostics with file, line and snippet
// on the console, the test2json events of a failed package under -json, or
// `slogate validate`'s text and JSON. It is what cmd/slogate's run, plan and
// validate share.
package specload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/assert"
	"github.com/slogate/slogate/internal/cli/diagjson"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/plan"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
)

// File is one spec file as loaded: its path as given, the spec (usable
// only when Diags hold no error) and every diagnostic, warnings included.
type File struct {
	Path  string
	Spec  *spec.Spec
	Diags hcl.Diagnostics
}

// LoadFiles loads each path, in order, and checks the conditions of
// each spec statically (assert.CheckLoaded: conditions that can never be
// true or false are errors before any server starts), in the same pass as
// the load's reference checks, so that every problem shows at once; a
// valid spec also gets plan.Check's warnings (a concurrency above
// max_num_seqs will queue) and its max_gpu_time checked against its plan
// (plan.CheckBudget).
func LoadFiles(paths []string, vars spec.Vars) []File {
	out := make([]File, 0, len(paths))
	for _, p := range paths {
		s, diags := spec.Load(p, spec.LoadOptions{Vars: vars, ReadDataset: requests.ReadDataset, ReadItems: requests.ReadItems})
		diags = append(diags, assert.CheckLoaded(s, diags)...)
		if !diags.HasErrors() {
			diags = append(diags, plan.Check(s)...)
			diags = append(diags, plan.CheckBudget(s)...)
		}
		out = append(out, File{Path: p, Spec: s, Diags: diags})
	}
	return out
}

// writeDiagnostics prints every file's diagnostics on w: file, line,
// snippet, in colour on the same terms as the console (a terminal, NO_COLOR
// unset, TERM not dumb).
func writeDiagnostics(w io.Writer, files []File) error {
	color := report.ConsoleOptionsFor(w, nil).Color
	for _, f := range files {
		if len(f.Diags) == 0 {
			continue
		}
		if err := spec.WriteDiagnostics(w, f.Spec.Files, f.Diags, color); err != nil {
			return exit.Infraf("writing diagnostics: %w", err)
		}
	}
	return nil
}

// valid returns the specs without errors, and exit.Quiet(exit.Usage)
// when any file had an error (its diagnostics are assumed shown).
func valid(files []File) ([]*spec.Spec, error) {
	var ok []*spec.Spec
	var err error
	for _, f := range files {
		if f.Diags.HasErrors() {
			err = exit.Quiet(exit.Usage)
			continue
		}
		ok = append(ok, f.Spec)
	}
	return ok, err
}

// Load loads each path, printing every diagnostic (warnings too) on
// stderr. It returns the valid specs, and exit.Quiet(exit.Usage) when any
// spec had an error.
func Load(stderr io.Writer, paths []string, vars spec.Vars) ([]*spec.Spec, error) {
	files := LoadFiles(paths, vars)
	if err := writeDiagnostics(stderr, files); err != nil {
		return nil, err
	}
	return valid(files)
}

// writeInvalidSpecEvents writes what `go test -json` writes for a package
// that does not build, for an invalid spec file: test2json events with
// Package = the spec file, its diagnostics (without colour) as "output"
// events, then the FAIL lines and a "fail" event.
func writeInvalidSpecEvents(w io.Writer, f File) error {
	var text bytes.Buffer
	if err := spec.WriteDiagnostics(&text, f.Spec.Files, f.Diags, false); err != nil {
		return exit.Infraf("writing diagnostics: %w", err)
	}
	stream := report.NewJSONStream(w, f.Path)
	for _, l := range strings.Split(strings.TrimRight(text.String(), "\n"), "\n") {
		stream.Log(l)
	}
	stream.Finish(vocab.Fail, 0)
	return nil
}

// LoadForRun loads the specs `slogate run` runs, printing their
// diagnostics on stderr; under -json (json) an invalid spec also gets the
// test2json events of a failed package on stdout, as `go test -json` gives
// a package that does not build, so that gotestsum shows the failure.
func LoadForRun(stdout, stderr io.Writer, paths []string, vars spec.Vars, json bool) ([]*spec.Spec, error) {
	files := LoadFiles(paths, vars)
	if err := writeDiagnostics(stderr, files); err != nil {
		return nil, err
	}
	for _, f := range files {
		if json && f.Diags.HasErrors() {
			if err := writeInvalidSpecEvents(stdout, f); err != nil {
				return nil, err
			}
		}
	}
	return valid(files)
}

// WriteValidateText is `slogate validate`'s text output: the diagnostics
// on stderr, "ok  SPEC" on stdout for each valid spec; when a spec is
// invalid it returns exit.Quiet(exit.Usage).
func WriteValidateText(stdout, stderr io.Writer, files []File) error {
	werr := writeDiagnostics(stderr, files)
	specs, err := valid(files)
	for _, s := range specs {
		fmt.Fprintf(stdout, "ok  %s\n", s.Filename)
	}
	if werr != nil {
		return werr
	}
	return err
}

// WriteValidateJSON prints the diagnostics of all files as one document
// in the shape of `terraform validate -json` (diagjson); when a spec is
// invalid it returns exit.Quiet(exit.Usage).
func WriteValidateJSON(stdout io.Writer, files []File) error {
	var diags hcl.Diagnostics
	sources := map[string]*hcl.File{}
	for _, f := range files {
		diags = append(diags, f.Diags...)
		maps.Copy(sources, f.Spec.Files)
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
