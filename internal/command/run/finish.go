package run

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/slogate/slogate/internal/assert"
	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/judge"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/views"
	"github.com/slogate/slogate/internal/vocab"
)

// finishConfig is what finish needs once one server has been measured.
type finishConfig struct {
	Spec     *spec.Spec
	Server   *spec.Server
	Results  *result.Results // measured; Verdicts are filled in here
	Baseline *result.Results // nil unless -baseline was given
	// Policy is how Results is compared with Baseline.
	Policy compare.Policy
	// OutDir receives results.json, report.md, report.html and junit.xml;
	// "" writes no files.
	OutDir string
	Stream report.TestStream
	// Keep selects the verdicts to report by full test name (-run); nil keeps all.
	Keep func(test string) bool
	// Getenv reads the environment (os.Getenv when nil). The CI conveniences
	// read GITHUB_STEP_SUMMARY and GITHUB_ACTIONS through it.
	Getenv func(string) string
	// Stdout and Stderr receive GitHub Actions annotations: Stdout normally,
	// Stderr under -json (JSON is true), so the event stream stays pure.
	// Either may be nil: no annotations are printed then.
	Stdout, Stderr io.Writer
	JSON           bool
}

// finish evaluates the spec's assert/expect blocks and the baseline
// comparison against the measured results, streams each verdict as a test,
// writes results.json (with the verdicts), report.md, report.html and
// junit.xml into OutDir, and serves the CI conveniences (GitHub step summary,
// ::error annotations). It returns the merged outcome of the verdicts; the
// error is an infrastructure error (exit 3) when a report could not be
// written, and the verdicts are streamed and saved as far as possible anyway.
// Its steps follow in order: decide the verdicts, print them, save the
// results and render the report, annotate, and give the exit code.
func finish(fc finishConfig) (vocab.Outcome, error) {
	res := fc.Results
	getenv := fc.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}

	// Decide the verdicts: the conditions' first (they read the
	// comparison's correctness figures, so it is made before them), then
	// the baseline's, then the correctness blocks' (against the baseline's
	// blocks through the same comparison, or as measured without one);
	// those -run keeps are the run's.
	comparison, baselineVerdicts, baselineErr := compareWithBaseline(fc)
	var verdicts []result.Verdict
	if fc.Spec != nil && fc.Server != nil {
		verdicts = append(verdicts, assert.Evaluate(fc.Spec, fc.Server, res, views.AssertWords{})...)
	}
	verdicts = append(verdicts, baselineVerdicts...)
	verdicts = append(verdicts, judge.Correctness(res, comparison, views.JudgeWords{})...)
	res.Verdicts = res.Verdicts[:0]
	for _, v := range verdicts {
		if fc.Keep == nil || fc.Keep(v.Test) {
			res.Verdicts = append(res.Verdicts, v)
		}
	}

	// Print them, one test each.
	if fc.Stream != nil {
		for _, v := range res.Verdicts {
			views.StreamVerdict(fc.Stream, v)
		}
	}

	// Save the results and render the report once, with the verdicts:
	// each file (report.md, report.html, the charts, the step summary)
	// lays it out.
	var rep *report.Model
	summary := getenv("GITHUB_STEP_SUMMARY")
	if fc.OutDir != "" || summary != "" {
		rep = report.NewModel(res)
	}
	var errs []error
	if fc.OutDir != "" {
		errs = append(errs, writeReports(fc.OutDir, res, rep))
	}
	if summary != "" {
		if err := appendStepSummary(summary, rep); err != nil && fc.Stream != nil {
			// A summary is a convenience: warn, never fail the run for it.
			fc.Stream.Log(views.StepSummaryWarning(err))
		}
	}

	// Annotate the failures for GitHub Actions.
	if getenv("GITHUB_ACTIONS") == "true" {
		w := fc.Stdout
		if fc.JSON {
			w = fc.Stderr
		}
		if w != nil {
			views.WriteAnnotations(w, res.Verdicts)
		}
	}

	// The exit code: an unwritten file is an infrastructure error.
	if err := errors.Join(errs...); err != nil {
		return res.Outcome(), exit.With(exit.Infra, err)
	}
	return res.Outcome(), baselineErr
}

// compareWithBaseline makes the one comparison of this run with its
// baseline, when there is one: its verdicts, and its view's console notes
// (logged here), or the refusal of settings that differ (no verdicts
// then: numbers measured differently are not compared; the refusal is a
// usage error, exit 2). It records the comparison in the
// results (the reports' comparison table and charts). All three are nil
// without a baseline.
func compareWithBaseline(fc finishConfig) (*compare.Comparison, []result.Verdict, error) {
	if fc.Baseline == nil {
		return nil, nil, nil
	}
	res := fc.Results
	if fc.OutDir != "" {
		// The traffic cells are compared request for request: this run's
		// requests are in its requests.jsonl, closed by now.
		if err := res.ReadRequests(fc.OutDir); err != nil && fc.Stream != nil {
			fc.Stream.Log(views.RequestsUnreadLine(err))
		}
	}
	policy := fc.Policy
	if fc.Spec != nil {
		// This run's verdicts come after its comparison: its spec says
		// which metrics they will read.
		policy.Asserted = fc.Spec.AssertedMetrics()
	}
	bv := views.Baseline{C: compare.Build(fc.Baseline, res, policy)}
	res.Comparison = bv.C.Record()
	verdicts, refusal := judge.Baseline(bv.C, views.JudgeWords{}), bv.Refusal()
	for _, n := range bv.Notes() {
		if fc.Stream != nil {
			fc.Stream.Log(n)
		}
	}
	return bv.C, verdicts, refusal
}

// writeReports writes results.json, junit.xml and rep (res's report:
// report.md, report.html and each rate search's chart, search-NAME.svg,
// which report.md links to) into dir, each atomically; it tries every
// file and joins the errors.
func writeReports(dir string, res *result.Results, rep *report.Model) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	var errs []error
	if err := res.Write(filepath.Join(dir, "results.json")); err != nil {
		errs = append(errs, fmt.Errorf("writing results.json: %w", err))
	}
	errs = append(errs,
		result.RenderFileAtomic(dir, "report.md", func(w io.Writer) error { return rep.WriteMarkdown(w) }),
		result.RenderFileAtomic(dir, "report.html", func(w io.Writer) error { return rep.WriteHTML(w) }),
		result.RenderFileAtomic(dir, "junit.xml", func(w io.Writer) error { return rep.WriteJUnit(w) }))
	for _, c := range rep.SearchCharts() {
		errs = append(errs, result.RenderFileAtomic(dir, c.File, func(w io.Writer) error { _, err := w.Write(c.SVG); return err }))
	}
	return errors.Join(errs...)
}

// writeJUnitFile writes one JUnit document covering every server of every
// spec of the run (-junit FILE). An unwritable path is an infrastructure
// error (exit 3) naming the file.
func writeJUnitFile(path string, runs []*result.Results) error {
	var b bytes.Buffer
	if err := report.WriteJUnit(&b, runs); err != nil {
		return exit.Infraf("rendering JUnit: %v", err)
	}
	if err := result.WriteFileAtomic(path, b.Bytes()); err != nil {
		return exit.Infraf("writing -junit file %s: %v (does its folder exist?)", path, err)
	}
	return nil
}

// appendStepSummary appends the Markdown summary of rep to the GitHub
// Actions job summary file.
func appendStepSummary(path string, rep *report.Model) error {
	var b bytes.Buffer
	if err := rep.WriteSummary(&b); err != nil {
		return err
	}
	return result.AppendFile(path, b.Bytes())
}
