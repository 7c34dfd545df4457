// Package merge is `slogate merge`: it combines the results folders of
// several runs (the jobs of a CI matrix, one server each) into one
// results set, its reports and the worst of their exit codes.
package merge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/judge"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/views"
	"github.com/slogate/slogate/internal/vocab"
)

// MergeOptions is one `slogate merge -out DIR OUT...`.
type MergeOptions struct {
	// OutDir receives the merged results.json, report.md, report.html,
	// junit.xml and one folder per server holding its results.json.
	OutDir string
	// Inputs are results folders (each with the results.json of one
	// server, as `slogate run -out` wrote it) or results.json files.
	Inputs []string
	// Getenv reads the environment (os.Getenv when nil): GITHUB_STEP_SUMMARY.
	Getenv func(string) string
	// Stdout receives one line per run and one for the whole set.
	Stdout io.Writer
}

// Merge combines the runs of several results folders into one results set
// (docs/ci.md#merging-the-results): a merged results.json (schema
// slogate/merged/v1), one report.md and report.html with a section per
// server, one junit.xml, a copy of each server's results.json in
// OutDir/<server>/, or OutDir/<spec>/<server>/ when two runs share a server
// name (vocab.RunNames; for a later -baseline), and the GitHub step summary when
// GITHUB_STEP_SUMMARY is set. The verdicts are taken as each run recorded
// them; no spec is evaluated again. The error carries the exit code: the
// worst of the runs' (RunExitCode) as a quiet error, a usage error (2) for
// an input that is not a results folder or the same run twice, an
// infrastructure error (3) when the output cannot be written.
func Merge(o MergeOptions) error {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if len(o.Inputs) == 0 {
		return exit.Usagef("merge: no results folder given")
	}
	m := &result.Merged{Schema: result.MergedSchema, Runs: []result.MergedRun{}}
	type input struct {
		path string
		raw  []byte
		res  *result.Results
	}
	var ins []input
	var keys []vocab.RunKey
	for _, in := range o.Inputs {
		path, b, res, err := readInput(in)
		if err != nil {
			return err
		}
		if name := res.Server.Name; name == "" || name == "." || name == ".." || filepath.Base(name) != name {
			return exit.Usagef("merge: %s: server name %q cannot name a folder", path, name)
		}
		ins = append(ins, input{path, b, res})
		keys = append(keys, vocab.RunKey{Spec: res.Spec, Server: res.Server.Name})
	}
	// A run is named by its server, or by spec and server when another run
	// has the same server name (vocab.RunNames): its folder and test names.
	names := vocab.RunNames(keys)
	raw := map[string][]byte{} // Dir → the results.json as read
	sources := map[string]string{}
	for i, in := range ins {
		dir := names[i]
		if prev, dup := sources[dir]; dup {
			return exit.Usagef("merge: %s and %s both hold server %q of %s: merge each run once", prev, in.path, in.res.Server.Name, in.res.Spec)
		}
		sources[dir], raw[dir] = in.path, in.raw
		code := RunExitCode(in.res)
		run := result.MergedRun{Dir: dir, Source: filepath.Dir(in.path), Outcome: runOutcome(in.res, code), ExitCode: code, Results: in.res}
		m.Runs = append(m.Runs, run)
		m.Outcome = vocab.Worst(m.Outcome, run.Outcome)
		m.ExitCode = exit.Worst(m.ExitCode, code)
	}
	if err := writeMerged(o.OutDir, m, raw); err != nil {
		return exit.With(exit.Infra, err)
	}
	if path := getenv("GITHUB_STEP_SUMMARY"); path != "" {
		var b bytes.Buffer
		if err := report.WriteMergedSummary(&b, m); err == nil {
			if err := result.AppendFile(path, b.Bytes()); err != nil && o.Stdout != nil {
				// A summary is a convenience: warn, never fail the merge for it.
				views.WriteStepSummaryWarning(o.Stdout, err)
			}
		}
	}
	if o.Stdout != nil {
		views.WriteMerged(o.Stdout, m, o.OutDir)
	}
	if m.ExitCode != exit.OK {
		return exit.Quiet(m.ExitCode)
	}
	return nil
}

// RunExitCode is the exit code `slogate run` gives one server's run, read
// from its results as recorded: 3 when the run ended early (an
// infrastructure error or an interruption) or something could not be
// measured (result.Results.Unmeasured: a cell, a traffic cell, a search),
// else the verdicts' code (judge.ExitCode: 3 a verdict read an unmeasured
// cell, 2 a condition is not a bool, 1 a breach, 0 pass).
func RunExitCode(res *result.Results) int {
	code := judge.ExitCode(res.Verdicts)
	if res.Error != "" || res.Interrupted {
		return exit.Infra
	}
	if len(res.Unmeasured()) > 0 { // the rule of `slogate run` (unmeasuredCells)
		return exit.Infra
	}
	if len(res.Saturated()) > 0 { // docs/method.md#saturation
		code = exit.Worst(code, exit.Fail)
	}
	if len(res.Unmeasurable()) > 0 { // docs/method.md#unmeasurable
		return exit.Worst(code, exit.Inconclusive)
	}
	return code
}

// runOutcome is a run's outcome in a merged set: its worst verdict, or
// Error when its exit code says infrastructure.
func runOutcome(res *result.Results, code int) vocab.Outcome {
	if code == exit.Infra {
		return vocab.Error
	}
	return res.Outcome()
}

// readInput reads the results.json of one merge argument: a folder holding
// one, or the file itself. Every problem is a usage error saying what to
// pass instead.
func readInput(in string) (path string, raw []byte, res *result.Results, err error) {
	path = in
	if info, statErr := os.Stat(in); statErr == nil && info.IsDir() {
		path = filepath.Join(in, "results.json")
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			if nested, _ := filepath.Glob(filepath.Join(in, "*", "results.json")); len(nested) > 0 {
				return "", nil, nil, exit.Usagef("merge: %s has no results.json, but its subfolders do: pass them (%s)", in, filepath.Join(in, "*"))
			}
			return "", nil, nil, exit.Usagef("merge: %s has no results.json: pass the -out folder of a `slogate run` of one server", in)
		}
	}
	raw, err = os.ReadFile(path)
	if err != nil {
		return "", nil, nil, exit.Usagef("merge: %v", err)
	}
	res, err = result.Decode(path, raw)
	if err != nil {
		return "", nil, nil, exit.Usagef("merge: %v", err)
	}
	return path, raw, res, nil
}

// writeMerged writes the merged set into dir: results.json, report.md,
// report.html, junit.xml and <dir>/results.json of each run, each
// atomically.
func writeMerged(dir string, m *result.Merged, raw map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("merge: creating %s: %w", dir, err)
	}
	var errs []error
	write := func(name string, render func(io.Writer) error) {
		if err := result.RenderFileAtomic(dir, name, render); err != nil {
			errs = append(errs, fmt.Errorf("merge: %w", err))
		}
	}
	runs := make([]*result.Results, len(m.Runs))
	for i, r := range m.Runs {
		runs[i] = r.Results
		sub := filepath.FromSlash(r.Dir)
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			errs = append(errs, fmt.Errorf("merge: creating %s: %w", filepath.Join(dir, sub), err))
			continue
		}
		b := raw[r.Dir]
		write(filepath.Join(sub, "results.json"), func(w io.Writer) error { _, err := w.Write(b); return err })
	}
	write("results.json", func(w io.Writer) error {
		b, err := m.Marshal()
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	write("report.md", func(w io.Writer) error { return report.WriteMergedMarkdown(w, m) })
	write("report.html", func(w io.Writer) error { return report.WriteMergedHTML(w, m) })
	write("junit.xml", func(w io.Writer) error { return report.WriteJUnit(w, runs) })
	return errors.Join(errs...)
}
