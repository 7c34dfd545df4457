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
)

// judgeConfig is what judging needs once one server has been measured.
type judgeConfig struct {
	Spec     *spec.Spec
	Server   *spec.Server
	Results  *result.Results // measured; Verdicts are filled in here
	Baseline *result.Results // nil unless -baseline was given
	// Policy is how Results is compared with Baseline.
	Policy compare.Policy
	// OutDir holds this run's requests.jsonl, which a comparison of
	// traffic cells reads request for request; "" when nothing is saved.
	OutDir string
	// Stream receives the comparison's console notes; nil drops them.
	Stream report.TestStream
	// Keep selects the verdicts to report by full test name (-run); nil keeps all.
	Keep func(test string) bool
}

// judgeRun decides the verdicts of one measured server and records them
// in Results.Verdicts: the spec's conditions first (they read the
// comparison's correctness figures, so it is made before them), then the
// baseline comparison's, then the correctness blocks' (against the
// baseline's blocks through the same comparison, or as measured without
// one); those -run keeps are the run's. It decides only: publish prints,
// saves and lays them out. Its error is the baseline's refusal (settings
// measured differently, a usage error, exit 2), or nil.
func judgeRun(jc judgeConfig) error {
	res := jc.Results
	comparison, baselineVerdicts, refusal := compareWithBaseline(jc)
	var verdicts []result.Verdict
	if jc.Spec != nil && jc.Server != nil {
		verdicts = append(verdicts, assert.Evaluate(jc.Spec, jc.Server, res, views.AssertWords{})...)
	}
	verdicts = append(verdicts, baselineVerdicts...)
	verdicts = append(verdicts, judge.Correctness(res, comparison, views.JudgeWords{})...)
	res.Verdicts = res.Verdicts[:0]
	for _, v := range verdicts {
		if jc.Keep == nil || jc.Keep(v.Test) {
			res.Verdicts = append(res.Verdicts, v)
		}
	}
	return refusal
}

// publishConfig is where the verdicts of one judged server go.
type publishConfig struct {
	Results *result.Results // judged: its Verdicts are in
	// OutDir receives results.json, report.md, report.html and junit.xml;
	// "" writes no files.
	OutDir string
	// Stream receives each verdict as a test; nil prints none.
	Stream report.TestStream
	// Getenv reads the environment (os.Getenv when nil). The CI conveniences
	// read GITHUB_STEP_SUMMARY and GITHUB_ACTIONS through it.
	Getenv func(string) string
	// Stdout and Stderr receive GitHub Actions annotations: Stdout normally,
	// Stderr under -json (JSON is true), so the event stream stays pure.
	// Either may be nil: no annotations are printed then.
	Stdout, Stderr io.Writer
	JSON           bool
}

// publish gives the judged verdicts to their readers: it streams each as
// a test, writes results.json (with the verdicts), report.md, report.html
// and junit.xml into OutDir, and serves the CI conveniences (GitHub step
// summary, ::error annotations). Its error is an infrastructure error
// (exit 3) when a file could not be written; everything else is streamed
// and saved as far as possible anyway.
func publish(pc publishConfig) error {
	res := pc.Results
	getenv := pc.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if pc.Stream != nil {
		for _, v := range res.Verdicts {
			views.StreamVerdict(pc.Stream, v)
		}
	}

	// Save the results and render the report once, with the verdicts:
	// each file (report.md, report.html, the charts, the step summary)
	// lays it out.
	var rep *report.Model
	summary := getenv("GITHUB_STEP_SUMMARY")
	if pc.OutDir != "" || summary != "" {
		rep = report.NewModel(res)
	}
	var errs []error
	if pc.OutDir != "" {
		errs = append(errs, writeReports(pc.OutDir, res, rep))
	}
	if summary != "" {
		if err := appendStepSummary(summary, rep); err != nil && pc.Stream != nil {
			// A summary is a convenience: warn, never fail the run for it.
			pc.Stream.Log(views.StepSummaryWarning(err))
		}
	}

	// Annotate the failures for GitHub Actions.
	if getenv("GITHUB_ACTIONS") == "true" {
		w := pc.Stdout
		if pc.JSON {
			w = pc.Stderr
		}
		if w != nil {
			views.WriteAnnotations(w, res.Verdicts)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return exit.With(exit.Infra, err)
	}
	return nil
}

// compareWithBaseline makes the one comparison of this run with its
// baseline, when there is one: its verdicts, and its view's console notes
// (logged here), or the refusal of settings that differ (no verdicts
// then: numbers measured differently are not compared; the refusal is a
// usage error, exit 2). It records the comparison in the
// results (the reports' comparison table and charts). All three are nil
// without a baseline.
func compareWithBaseline(jc judgeConfig) (*compare.Comparison, []result.Verdict, error) {
	if jc.Baseline == nil {
		return nil, nil, nil
	}
	res := jc.Results
	if jc.OutDir != "" {
		// The traffic cells are compared request for request: this run's
		// requests are in its requests.jsonl, closed by now.
		if err := res.ReadRequests(jc.OutDir); err != nil && jc.Stream != nil {
			jc.Stream.Log(views.RequestsUnreadLine(err))
		}
	}
	policy := jc.Policy
	if jc.Spec != nil {
		// This run's verdicts come after its comparison: its spec says
		// which metrics they will read.
		policy.Asserted = jc.Spec.AssertedMetrics()
	}
	bv := views.Baseline{C: compare.Build(jc.Baseline, res, policy)}
	res.Comparison = bv.C.Record()
	verdicts, refusal := judge.Baseline(bv.C, views.JudgeWords{}), bv.Refusal()
	for _, n := range bv.Notes() {
		if jc.Stream != nil {
			jc.Stream.Log(n)
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
