package views

// This file is the run view's live lines: what `slogate run` prints of
// each cell, probe and search as the runner reports them (the runner's
// events, rendered on a report.TestStream).

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/judge"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// RunObserver adapts the runner's events to a report.TestStream: each
// cell is a test, PASS when measured, SKIP when over capacity, ERROR when
// it could not be measured. It formats each finished cell's one-line
// summary (event.Observer, event.TrafficObserver, event.SearchObserver).
type RunObserver struct {
	stream  report.TestStream
	server  string
	verbose bool
	// open are the tests announced and not yet ended, with when each
	// started (a cell measured more than once is announced only when it
	// ends: its repeats interleave with other cells', docs/method.md#repeats).
	open map[string]time.Time
	// warned are the warnings already printed, by text: the test that
	// printed each and how many cells have carried it.
	warned map[string]*warned
}

// warned is a warning the console printed: under which test, and in how
// many cells in all so far.
type warned struct {
	test, last string // the first test that carried it, and the latest
	cells      int
}

// NewRunObserver returns the observer of server's cells, streaming to
// stream; verbose adds every cell's full metric line.
func NewRunObserver(stream report.TestStream, server string, verbose bool) *RunObserver {
	return &RunObserver{stream: stream, server: server, verbose: verbose, open: map[string]time.Time{}, warned: map[string]*warned{}}
}

// CellStart announces the cell as a running test.
func (o *RunObserver) CellStart(ref vocab.CellRef) {
	test := ref.TestName(o.server)
	o.open[test] = time.Now()
	o.stream.Run(test)
}

// Progress streams the live state of the running cell.
func (o *RunObserver) Progress(p event.Progress) {
	o.stream.Progress(report.Progress{Test: p.Cell.TestName(o.server), Elapsed: p.Elapsed, Window: p.Window,
		Stage: p.Stage, TPS: p.TPS, CellsDone: p.CellsDone, Cells: p.Cells, ETA: p.ETA})
}

// PrefillDone ends a prefill cell's test with its summary line (a cell
// measured more than once, not announced, is announced here).
func (o *RunObserver) PrefillDone(c result.PrefillCell, elapsed time.Duration) {
	test := c.Ref().TestName(o.server)
	if _, open := o.open[test]; !open {
		o.stream.Run(test)
	}
	switch c.Status {
	case vocab.StatusError:
		o.stream.Output(test, "error: "+c.Reason)
		o.end(test, vocab.Error, elapsed)
		return
	case vocab.StatusUnmeasurable:
		// As a decode cell's (decodeLines): not gated, the reason last.
		o.stream.Output(test, "not gated: "+report.PrefillLine(&c))
		o.stream.Output(test, "unmeasurable: "+c.Reason)
		o.end(test, vocab.Inconclusive, elapsed)
		return
	}
	o.stream.Output(test, report.PrefillLine(&c))
	if line := excludedLine(c.Excluded, c.Repeats); line != "" {
		o.stream.Output(test, line)
	}
	if why := RepeatStopText(c.Design); why != "" {
		o.stream.Output(test, fmt.Sprintf("%d repeats (auto): %s", c.Repeats, why))
	}
	if o.verbose {
		o.stream.Output(test, report.PrefillMetrics(&c))
	}
	o.end(test, vocab.Pass, elapsed)
}

// DecodeDone ends a decode cell's test with its summary line (over-capacity
// cells, never announced, are announced here and skipped, as are cells
// measured more than once, whose repeats interleave with other cells':
// announced here, so that each test's RUN line is followed by its own
// result, as go test prints one test after another).
func (o *RunObserver) DecodeDone(c result.DecodeCell, elapsed time.Duration) {
	test, out := o.decodeLines(c)
	if out == vocab.Skip {
		elapsed = 0
	}
	o.end(test, out, elapsed)
}

// decodeLines announces decode cell c when it was not (over capacity),
// writes its summary lines and returns its test name and outcome: Skip
// over capacity, Error when it could not be measured, Pass otherwise.
func (o *RunObserver) decodeLines(c result.DecodeCell) (string, vocab.Outcome) {
	test := c.Ref().TestName(o.server)
	if _, open := o.open[test]; !open { // over-capacity cells are announced here
		o.stream.Run(test)
	}
	switch c.Status {
	case vocab.StatusOverCapacity:
		o.stream.Output(test, "over capacity, not run: "+c.Reason)
		return test, vocab.Skip
	case vocab.StatusError:
		o.stream.Output(test, "error: "+c.Reason)
		return test, vocab.Error
	case vocab.StatusUnmeasurable:
		// Neither passed nor failed (docs/method.md#unmeasurable): its
		// figures are shown for the record, the reason last, as the recap
		// quotes it.
		o.stream.Output(test, "not gated: "+report.DecodeLine(&c))
		o.warnings(test, warning.Strings(c.Warnings))
		o.stream.Output(test, "unmeasurable: "+c.Reason)
		return test, vocab.Inconclusive
	}
	o.stream.Output(test, report.DecodeLine(&c))
	if line := excludedLine(c.Excluded, c.Repeats); line != "" {
		o.stream.Output(test, line)
	}
	o.settled(test, c.SettleS)
	if why := RepeatStopText(c.Design); why != "" {
		o.stream.Output(test, fmt.Sprintf("%d repeats (auto): %s", c.Repeats, why))
	}
	if o.verbose {
		o.stream.Output(test, report.DecodeMetrics(&c))
	}
	o.warnings(test, warning.Strings(c.Warnings))
	return test, vocab.Pass
}

// TrafficDone ends a traffic cell's test with its summary line
// (event.TrafficObserver).
func (o *RunObserver) TrafficDone(c result.TrafficCell, elapsed time.Duration) {
	test := c.Ref().TestName(o.server)
	if _, open := o.open[test]; !open {
		o.stream.Run(test)
	}
	if c.Status == vocab.StatusError {
		o.stream.Output(test, "error: "+c.Reason)
		o.end(test, vocab.Error, elapsed)
		return
	}
	if c.Status == vocab.StatusUnmeasurable {
		o.stream.Output(test, "unmeasurable: "+c.Reason)
		o.end(test, vocab.Inconclusive, elapsed)
		return
	}
	if c.Status == vocab.StatusSaturated {
		// Stopped early past the server's capacity: its figures, of the
		// part of the window run, for the record; the evidence last.
		o.stream.Output(test, "not gated: "+report.TrafficSummary(&c))
		o.warnings(test, warning.Strings(c.Warnings))
		o.stream.Output(test, "saturated: "+report.CellReasonText(c.Reasons, c.Reason))
		outcome, _ := judge.Decide(result.FindingSaturated)
		o.end(test, outcome, elapsed)
		return
	}
	o.stream.Output(test, report.TrafficSummary(&c))
	o.settled(test, c.SettleS)
	if o.verbose {
		o.stream.Output(test, report.TrafficMetrics(&c))
	}
	o.warnings(test, warning.Strings(c.Warnings))
	o.end(test, vocab.Pass, elapsed)
}

// settled says, under a cell's summary, how long the cell first waited
// for the server to finish the requests an earlier cell had closed
// (docs/method.md#settle); nothing when it did not wait.
func (o *RunObserver) settled(test string, s float64) {
	if s > 0 {
		o.stream.Output(test, fmt.Sprintf("waited %s s before its first request for the server to finish those an earlier cell had closed", numfmt.Fixed(s, 1)))
	}
}

// warnings prints a cell's warnings under its test: each text once per
// server, at the first cell that carries it; a later cell repeating it
// word for word gets one short line naming that test and counting the
// cells (every cell of a dataset block repeated its dataset's warnings).
func (o *RunObserver) warnings(test string, ws []string) {
	for _, w := range ws {
		first, seen := o.warned[w]
		if !seen {
			o.warned[w] = &warned{test: test, last: test, cells: 1}
			o.stream.Output(test, "warning: "+w)
			continue
		}
		if first.last == test {
			continue // the same cell again
		}
		first.cells, first.last = first.cells+1, test
		o.stream.Output(test, fmt.Sprintf("warning: as under %s (%s)", first.test, ordinalCells(first.cells)))
	}
}

// ordinalCells is "2nd cell", "3rd cell", "11th cell".
func ordinalCells(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprintf("the %d%s cell with it", n, suffix)
}

func (o *RunObserver) end(test string, out vocab.Outcome, elapsed time.Duration) {
	o.stream.End(test, out, elapsed)
	delete(o.open, test)
}

// Abort closes the tests that were running when the run stopped with err.
func (o *RunObserver) Abort(err error) {
	if len(o.open) == 0 || err == nil {
		return
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	for _, test := range slices.Sorted(maps.Keys(o.open)) {
		o.stream.Output(test, "not measured: "+msg)
		o.end(test, vocab.Error, time.Since(o.open[test]))
	}
}

// ProbeDone ends a search probe's test: the cell's summary line as for a
// decode cell, then whether it met the objective (docs/method.md#search).
// A probe that met it passes; one that missed it, or was over capacity,
// is skipped: a search finds its bound by probes that miss, so such a
// probe fails no test, and it did not pass either (probeOutcome). One
// that could not be measured is an error.
func (o *RunObserver) ProbeDone(p result.SearchProbe, elapsed time.Duration) {
	if p.Traffic != nil {
		o.rateProbeDone(p, elapsed)
		return
	}
	test, out := o.decodeLines(p.Cell)
	switch {
	case out == vocab.Skip:
		o.stream.Output(test, "objective not met: over capacity")
		elapsed = 0
	case out == vocab.Error:
	case p.Passed:
		o.stream.Output(test, "objective met")
	case p.Reason != "":
		o.stream.Output(test, "objective not met: "+p.Reason)
	default:
		o.stream.Output(test, "objective not met")
	}
	if out == vocab.Pass {
		if out = probeOutcome(p); out == vocab.Skip {
			o.stream.Output(test, probeMissed)
		}
	}
	o.end(test, out, elapsed)
}

// probeMissed is the last line of a probe skipped for missing its
// objective: why it is no failure.
const probeMissed = "skipped, not failed: a search takes a probe that misses its objective as a bound (docs/method.md#search)"

// probeOutcome is the outcome of a measured probe's test: Pass when the
// search took it as meeting the objective, Skip when not (docs/method.md#search).
func probeOutcome(p result.SearchProbe) vocab.Outcome {
	if p.Passed {
		return vocab.Pass
	}
	return vocab.Skip
}

// rateProbeDone ends a rate search's probe test
// (docs/method.md#rate-search): its last window's summary line as for a
// traffic cell, how many windows were pooled, then its decision and the
// bounds behind it. It passes when the search took it as meeting the
// objective and is skipped when not (probeOutcome), as is a probe the
// client could not drive (unmeasurable: the search answers below it);
// one that could not be measured otherwise is an error.
func (o *RunObserver) rateProbeDone(p result.SearchProbe, elapsed time.Duration) {
	c := p.Traffic
	test, why := c.Ref().TestName(o.server), report.ProbeReason(&p)
	if _, open := o.open[test]; !open {
		o.stream.Run(test)
	}
	switch {
	case p.Decision == result.DecisionUnmeasurable:
		o.stream.Output(test, "unmeasurable: "+why)
		o.end(test, vocab.Skip, elapsed)
		return
	case c.Status == vocab.StatusError:
		o.stream.Output(test, "error: "+c.Reason)
		o.end(test, vocab.Error, elapsed)
		return
	}
	o.stream.Output(test, report.TrafficSummary(c))
	o.settled(test, c.SettleS)
	if o.verbose {
		o.stream.Output(test, report.TrafficMetrics(c))
	}
	o.warnings(test, warning.Strings(c.Warnings))
	if p.Windows > 1 {
		o.stream.Output(test, fmt.Sprintf("%d windows pooled (the line above is the last)", p.Windows))
	}
	switch p.Decision {
	case result.DecisionMet:
		o.stream.Output(test, "objective met: "+why)
	case result.DecisionUndecided:
		o.stream.Output(test, "objective undecided: "+why)
	case result.DecisionFailed:
		o.stream.Output(test, "objective not met: "+why)
	default:
		o.stream.Output(test, "not judged: "+why)
	}
	out := probeOutcome(p)
	if out == vocab.Skip {
		o.stream.Output(test, probeMissed)
	}
	o.end(test, out, elapsed)
}

// SearchDone logs a search's one-line summary.
func (o *RunObserver) SearchDone(s result.Search) {
	o.stream.Log(searchSummary(o.server, s))
}

// searchSummary is the one line that tells a search's outcome:
//
//	search qwen/search/max_users: concurrency 23 meets the objective at ctx=8K (24 fails; 9 probes in 52s)
func searchSummary(server string, s result.Search) string {
	head := fmt.Sprintf("search %s: ", vocab.TestID{Server: server, Kind: vocab.KindSearch, Block: s.Name}.Name())
	tail := fmt.Sprintf("%d probes in %s", len(s.Probes), time.Duration(s.ElapsedS*float64(time.Second)).Round(time.Second))
	if s.IsRate() {
		return rateSearchSummary(head, tail, s)
	}
	var line string
	switch {
	case s.Error != "":
		line = head + "no answer: " + s.Error + " (" + tail + ")"
	case !s.Found:
		line = fmt.Sprintf("%sno concurrency in [%d, %d] meets the objective at ctx=%s (%d fails; %s)", head, s.Range[0], s.Range[1], vocab.FormatTokens(s.Context), s.Range[0], tail)
	case s.ConfirmedBy == 0:
		line = fmt.Sprintf("%sconcurrency %d meets the objective at ctx=%s: the whole range [%d, %d] passes (%s)", head, s.Concurrency, vocab.FormatTokens(s.Context), s.Range[0], s.Range[1], tail)
	default:
		line = fmt.Sprintf("%sconcurrency %d meets the objective at ctx=%s (%d fails; %s)", head, s.Concurrency, vocab.FormatTokens(s.Context), s.ConfirmedBy, tail)
	}
	if !s.Monotone {
		line += "; not monotone: a probe passed above a failing one"
	}
	return line
}

// rateSearchSummary is a rate search's summary line:
//
//	search qwen/search/capacity: 4.53 req/s meets the objective (95% bounds 4.2 to 4.9 req/s; 7 probes, 9 windows in 3m10s)
func rateSearchSummary(head, tail string, s result.Search) string {
	windows := 0
	for _, p := range s.Probes {
		windows += p.Windows
	}
	tail = strings.Replace(tail, " probes in ", fmt.Sprintf(" probes, %d windows in ", windows), 1)
	lo, hi := vocab.FormatRate(s.RateRange[0]), vocab.FormatRate(s.RateRange[1])
	conf := numfmt.Percent(s.Confidence)
	var line string
	switch {
	case s.Error != "":
		line = head + "no answer: " + s.Error + " (" + tail + ")"
	case !s.Found:
		line = fmt.Sprintf("%snone meets the objective at lo = %s req/s (rates [%s, %s] searched; %s)", head, lo, lo, hi, tail)
	case s.RateUpper == 0 && failedAbove(s) > 0:
		line = fmt.Sprintf("%s%s req/s meets the objective (%s lower bound %s req/s; no upper bound: the probe at %s req/s was not shown to meet it; %s)",
			head, rateText(s.Rate), conf, rateText(s.RateLower), rateText(failedAbove(s)), tail)
	case s.RateUpper == 0:
		line = fmt.Sprintf("%s%s req/s meets the objective: the whole range [%s, %s] req/s meets it (%s lower bound %s req/s, no upper bound; %s)",
			head, rateText(s.Rate), lo, hi, conf, rateText(s.RateLower), tail)
	default:
		line = fmt.Sprintf("%s%s req/s meets the objective (%s bounds %s to %s req/s; %s)", head, rateText(s.Rate), conf, rateText(s.RateLower), rateText(s.RateUpper), tail)
	}
	if s.ClientLimit > 0 {
		line += fmt.Sprintf("; the client could not drive %s req/s: the answer is within the rates it could", rateText(s.ClientLimit))
	}
	if !s.Monotone {
		line += "; not monotone: a probe met the objective above a failing one"
	}
	return line
}

// failedAbove is the lowest rate above the answer whose probe was taken as
// failing, 0 when none was: a search without an upper bound then did not
// show the whole range to meet the objective, only that no probe failed
// it decidedly.
func failedAbove(s result.Search) float64 {
	var r float64
	for _, p := range s.Probes {
		if !p.Passed && p.Rate > s.Rate && (r == 0 || p.Rate < r) {
			r = p.Rate
		}
	}
	return r
}

// rateText is a request rate as a summary shows it: three significant
// digits, so that a bisection's midpoint (4.527…) reads 4.53.
func rateText(r float64) string {
	if r >= 1000 {
		return strconv.FormatFloat(math.Round(r), 'f', -1, 64)
	}
	return strconv.FormatFloat(r, 'g', 3, 64)
}

// excludedLine says which runs of a repeated cell (its excluded runs, and
// repeats the runs that counted) were left out of its figures and why (docs/method.md#unmeasurable): "1 of 5 runs left out:
// run 2: the machine moved during the run: …"; "" when none was.
func excludedLine(excluded []result.ExcludedRun, repeats int) string {
	if len(excluded) == 0 {
		return ""
	}
	parts := make([]string, 0, len(excluded))
	for _, x := range excluded {
		parts = append(parts, fmt.Sprintf("run %d: %s", x.Repeat, x.Reason))
	}
	return fmt.Sprintf("%d of %d runs left out: %s", len(excluded), len(excluded)+max(repeats, 1), strings.Join(parts, "; "))
}
