package views

// This file is the run's and merge's own lines: the header that opens a
// server's run, what it says when nothing matches -run or a folder is
// replaced, its GPU time, each verdict as a test on the console, the
// GitHub annotations of its verdicts, merge's
// table of runs, and the warnings of a convenience that failed (packages
// command/run and command/merge decide; these functions write).

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// RunHeader is what the line that opens a server's run tells.
type RunHeader struct {
	Server    string
	Sim       bool // on the built-in simulator: the line says so before any number
	Cells     int  // the cells to measure
	Resumed   bool // with -resume: Cells are those left of the plan's Of
	Of        int
	Estimated time.Duration // the estimated measuring time, server start-up excluded
	OutDir    string        // where the results go
}

// RunHeaderLine is the line that opens a server's run:
//
//	qwen (simulated): 12 cells left of 20, estimated 1m30s (server start-up not included); results in DIR
func RunHeaderLine(h RunHeader) string {
	name := h.Server
	if h.Sim {
		name += " (simulated)"
	}
	left := ""
	if h.Resumed {
		left = fmt.Sprintf(" left of %d", h.Of)
	}
	return fmt.Sprintf("%s: %d cells%s, estimated %s (server start-up not included); results in %s",
		name, h.Cells, left, h.Estimated.Round(time.Second), h.OutDir)
}

// NoMatchLine says that server has nothing -run's pattern keeps, so that
// it is not started (as go test's "no tests to run").
func NoMatchLine(server, pattern string) string {
	return fmt.Sprintf("%s: no cell or assertion matches -run %q; the server is not started", server, pattern)
}

// ReplacingLine says that server's run replaces folder out, which held a
// run that measured nothing; was is that run's first error line ("" when
// none was recorded).
func ReplacingLine(server, out, was string) string {
	if was != "" {
		was = " (" + was + ")"
	}
	return fmt.Sprintf("%s: %s held a run that measured nothing%s: replacing it", server, out, was)
}

// GPUTimeLine is server's GPU time once its run ended.
func GPUTimeLine(server string, g *result.GPUTime) string {
	return fmt.Sprintf("%s: GPU time %s", server, report.GPUTimeText(g))
}

// SaturationSavedLine is what server's run saved by stopping saturated
// traffic cells and rate probes early (docs/method.md#saturation): "qwen:
// saturation saved 57.0 s of windows not run (0.032 GPU-hours on 2
// GPUs)"; "" when none stopped, or the run recorded no GPU time.
func SaturationSavedLine(server string, res *result.Results) string {
	saved := report.SaturationSavedS(res)
	if saved <= 0 || res.GPUTime == nil {
		return ""
	}
	return server + ": saturation saved " + report.SaturationSavedText(saved, res.GPUTime)
}

// SearchCostLines are server's searches' costs at their answers once its
// run ended (docs/method.md#cost): "qwen: search capacity: $0.561 per
// million output tokens at 16.5 req/s (1 GPU × $3.50 an hour ÷ 1,733.3
// output tok/s)"; none without a price.
func SearchCostLines(server string, res *result.Results) []string {
	var out []string
	for _, c := range report.SearchCosts(res) {
		out = append(out, fmt.Sprintf("%s: search %s: %s", server, c.Search, c.Cost))
	}
	return out
}

// StepSummaryWarning is the line that says the GitHub step summary could
// not be written (a convenience: the run goes on).
func StepSummaryWarning(err error) string {
	return "slogate: warning: GITHUB_STEP_SUMMARY: " + err.Error()
}

// WriteStepSummaryWarning writes StepSummaryWarning's line on w.
func WriteStepSummaryWarning(w io.Writer, err error) {
	fmt.Fprintln(w, StepSummaryWarning(err))
}

// WriteLatestNotMoved warns on w that the link latest was not moved to
// the run's folder out.
func WriteLatestNotMoved(w io.Writer, latest, out string, err error) {
	fmt.Fprintf(w, "slogate: warning: %s not moved to %s: %v\n", latest, out, err)
}

// WriteMerged writes merge's table on w: a line per run merged (its
// outcome, folder, spec, exit code and source), then the merged one's.
func WriteMerged(w io.Writer, m *result.Merged, outDir string) {
	for _, r := range m.Runs {
		fmt.Fprintf(w, "%-5s %s\t%s\texit %d\t%s\n", endWord(r.Outcome), r.Dir, r.Results.Spec, r.ExitCode, r.Source)
	}
	fmt.Fprintf(w, "%-5s merged %d runs into %s (exit %d)\n", endWord(m.Outcome), len(m.Runs), outDir, m.ExitCode)
}

// endWord is go test's word for an outcome: ok when it did not fail the
// gate (a run whose worst test was skipped passed, as a go test package
// with skipped tests is ok), else FAIL.
func endWord(o vocab.Outcome) string {
	if !o.Failed() {
		return "ok"
	}
	return "FAIL"
}

// StreamVerdict streams one verdict as a test: its detail lines (the first
// one prefixed with the rule's file:line when the test did not pass, as go
// test prefixes t.Errorf), the author's message indented below, then the end.
func StreamVerdict(s report.TestStream, v result.Verdict) {
	s.Run(v.Test)
	details := v.Details
	if v.Outcome.Failed() {
		switch where := v.Where(); {
		case where == "":
		case len(details) == 0:
			details = []string{where + ": " + v.Rule}
		default:
			details = append([]string{where + ": " + details[0]}, details[1:]...)
		}
	}
	for _, d := range details {
		s.Output(v.Test, d)
	}
	if v.Message != "" && v.Outcome >= vocab.Skip && !anyContains(details, v.Message) {
		s.Output(v.Test, "    "+v.Message)
	}
	s.End(v.Test, v.Outcome, 0)
}

// WriteAnnotations writes a GitHub Actions ::error command for every
// failed, inconclusive or errored verdict, pointing at the rule's file and
// line.
func WriteAnnotations(w io.Writer, verdicts []result.Verdict) {
	for _, v := range verdicts {
		if !v.Outcome.Failed() {
			continue
		}
		var props []string
		if v.File != "" {
			props = append(props, "file="+ghProperty(v.File))
			if v.Line > 0 {
				props = append(props, "line="+strconv.Itoa(v.Line))
			}
		}
		props = append(props, "title="+ghProperty(v.Test))
		msg := append([]string(nil), v.Details...)
		if v.Message != "" && !anyContains(msg, v.Message) {
			msg = append(msg, v.Message)
		}
		if len(msg) == 0 {
			msg = []string{v.Outcome.String()}
		}
		fmt.Fprintf(w, "::error %s::%s\n", strings.Join(props, ","), ghData(strings.Join(msg, "\n")))
	}
}

// anyContains reports whether one of lines contains s.
func anyContains(lines []string, s string) bool {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// ghData escapes a workflow command's message (GitHub's escapeData).
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// ghProperty escapes a workflow command property (GitHub's escapeProperty).
func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
