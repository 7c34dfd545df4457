// Package specload loads the spec files a command is given with every
// static check slogate has (the language's, the conditions' from assert, the
// plan's), and has the spec view (internal/views) show what it found:
// diagnostics with file, line and snippet on the console, the test2json
// events of a failed package under -json, or `slogate validate`'s text and
// JSON. It is what cmd/slogate's run, plan and validate share.
package specload

import (
	"io"

	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/assert"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/plan"
	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/views"
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

// viewed is files as the spec view shows them.
func viewed(files []File) []views.SpecFile {
	out := make([]views.SpecFile, len(files))
	for i, f := range files {
		out[i] = views.SpecFile{Path: f.Path, Filename: f.Spec.Filename, Sources: f.Spec.Files, Diags: f.Diags}
	}
	return out
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
	if err := views.WriteDiagnostics(stderr, viewed(files)); err != nil {
		return nil, err
	}
	return valid(files)
}

// LoadForRun loads the specs `slogate run` runs, printing their
// diagnostics on stderr; under -json (json) an invalid spec also gets the
// test2json events of a failed package on stdout, as `go test -json` gives
// a package that does not build, so that gotestsum shows the failure.
func LoadForRun(stdout, stderr io.Writer, paths []string, vars spec.Vars, json bool) ([]*spec.Spec, error) {
	files := LoadFiles(paths, vars)
	shown := viewed(files)
	if err := views.WriteDiagnostics(stderr, shown); err != nil {
		return nil, err
	}
	for i, f := range files {
		if json && f.Diags.HasErrors() {
			if err := views.WriteInvalidSpecEvents(stdout, shown[i]); err != nil {
				return nil, err
			}
		}
	}
	return valid(files)
}

// WriteValidateText is `slogate validate`'s text output
// (views.WriteValidateText): the diagnostics on stderr, "ok  SPEC" on
// stdout for each valid spec; when a spec is invalid it returns
// exit.Quiet(exit.Usage).
func WriteValidateText(stdout, stderr io.Writer, files []File) error {
	return views.WriteValidateText(stdout, stderr, viewed(files))
}

// WriteValidateJSON prints the diagnostics of all files as one document
// in the shape of `terraform validate -json` (views.WriteValidateJSON);
// when a spec is invalid it returns exit.Quiet(exit.Usage).
func WriteValidateJSON(stdout io.Writer, files []File) error {
	return views.WriteValidateJSON(stdout, viewed(files))
}
