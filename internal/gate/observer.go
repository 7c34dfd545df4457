package gate

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/runner"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// observer adapts the runner's events to a report.TestStream: each cell is
// a test, PASS when measured, SKIP when over capacity, ERROR when it could
// not be measured. It formats each finished cell's one-line summary.
type observer struct {
	stream  report.TestStream
	server  string
	verbose bool
	// open are the tests announced and not yet ended, with when each
	// started: the repeats of a context's cells are interleaved, so
	// several are open at once (docs/method.md#repeats).
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

// newObserver returns the observer of server's cells, streaming to stream;
// verbose adds every cell's full metric line.
func newObserver(stream report.TestStream, server string, verbose bool) *observer {
	return &observer{stream: stream, server: server, verbose: verbose, open: map[string]time.Time{}, warned: map[string]*warned{}}
}

// Log streams a line that belongs to no cell.
func (o *observer) Log(line string) { o.stream.Log(line) }

// CellStart announces the cell as a running test.
func (o *observer) CellStart(ref vocab.CellRef) {
	test := ref.TestName(o.server)
	o.open[test] = time.Now()
	o.stream.Run(test)
}

// Progress streams the live state of the running cell.
func (o *observer) Progress(p runner.Progress) {
	o.stream.Progress(report.Progress{Test: p.Cell.TestName(o.server), Elapsed: p.Elapsed, Window: p.Window,
		Stage: p.Stage, TPS: p.TPS, CellsDone: p.CellsDone, Cells: p.Cells, ETA: p.ETA})
}

// PrefillDone ends a prefill cell's test with its summary line.
func (o *observer) PrefillDone(c result.PrefillCell, elapsed time.Duration) {
	test := c.Ref().TestName(o.server)
	if c.Status == vocab.StatusError {
		o.stream.Output(test, "error: "+c.Reason)
		o.end(test, vocab.Error, elapsed)
		return
	}
	o.stream.Output(test, report.PrefillLine(&c))
	if d := c.Design; d != nil && d.StopReason != "" {
		o.stream.Output(test, fmt.Sprintf("%d repeats (auto): %s", c.Repeats, d.StopReason))
	}
	if o.verbose {
		o.stream.Output(test, report.PrefillMetrics(&c))
	}
	o.end(test, vocab.Pass, elapsed)
}

// DecodeDone ends a decode cell's test with its summary line (over-capacity
// cells, never announced, are announced here and skipped).
func (o *observer) DecodeDone(c result.DecodeCell, elapsed time.Duration) {
	test, out := o.decodeLines(c)
	if out == vocab.Skip {
		elapsed = 0
	}
	o.end(test, out, elapsed)
}

// decodeLines announces decode cell c when it was not (over capacity),
// writes its summary lines and returns its test name and outcome: Skip
// over capacity, Error when it could not be measured, Pass otherwise.
func (o *observer) decodeLines(c result.DecodeCell) (string, vocab.Outcome) {
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
	}
	o.stream.Output(test, report.DecodeLine(&c))
	if d := c.Design; d != nil && d.StopReason != "" {
		o.stream.Output(test, fmt.Sprintf("%d repeats (auto): %s", c.Repeats, d.StopReason))
	}
	if o.verbose {
		o.stream.Output(test, report.DecodeMetrics(&c))
	}
	o.warnings(test, warning.Strings(c.Warnings))
	return test, vocab.Pass
}

// TrafficDone ends a traffic cell's test with its summary line
// (runner.TrafficObserver).
func (o *observer) TrafficDone(c result.TrafficCell, elapsed time.Duration) {
	test := c.Ref().TestName(o.server)
	if _, open := o.open[test]; !open {
		o.stream.Run(test)
	}
	if c.Status == vocab.StatusError {
		o.stream.Output(test, "error: "+c.Reason)
		o.end(test, vocab.Error, elapsed)
		return
	}
	o.stream.Output(test, report.TrafficSummary(&c))
	if o.verbose {
		o.stream.Output(test, report.TrafficMetrics(&c))
	}
	o.warnings(test, warning.Strings(c.Warnings))
	o.end(test, vocab.Pass, elapsed)
}

// warnings prints a cell's warnings under its test: each text once per
// server, at the first cell that carries it; a later cell repeating it
// word for word gets one short line naming that test and counting the
// cells (every cell of a dataset block repeated its dataset's warnings).
func (o *observer) warnings(test string, ws []string) {
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

func (o *observer) end(test string, out vocab.Outcome, elapsed time.Duration) {
	o.stream.End(test, out, elapsed)
	delete(o.open, test)
}

// Abort closes the tests that were running when the run stopped with err.
func (o *observer) Abort(err error) {
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
