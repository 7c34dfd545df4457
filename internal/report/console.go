package report

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// ConsoleOptions configures NewConsole.
type ConsoleOptions struct {
	// Color turns on ANSI colours for PASS/FAIL/SKIP and the final line.
	Color bool
	// Progress turns on the live progress line, redrawn in place.
	Progress bool
}

// ConsoleOptionsFor decides the options for writing to w the way go test
// users expect: colour and a live progress line only on a terminal; no
// colour when NO_COLOR is set; no progress line when CI is set. getenv is
// os.Getenv when nil.
func ConsoleOptionsFor(w io.Writer, getenv func(string) string) ConsoleOptions {
	if getenv == nil {
		getenv = os.Getenv
	}
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
	}
	return consoleOptions(tty, getenv)
}

// consoleOptions is ConsoleOptionsFor once it is known whether the output is
// a terminal.
func consoleOptions(tty bool, getenv func(string) string) ConsoleOptions {
	return ConsoleOptions{
		Color:    tty && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb",
		Progress: tty && getenv("CI") == "",
	}
}

// console is the go test-style TestStream for people.
type console struct {
	mu       sync.Mutex
	w        io.Writer
	pkg      string
	opts     ConsoleOptions
	pass     *color.Color
	fail     *color.Color
	skip     *color.Color
	dim      *color.Color
	progress string // the progress line currently drawn ("" = none)
	lastDraw time.Time
	// ended counts the tests ended; failed are those that failed,
	// inconclusive or errored, in order, each with the last line it
	// printed (its message), which Finish recaps; last is that line of
	// each test still running.
	ended  int
	failed []failedTest
	last   map[string]string
}

// failedTest is a test the closing recap names: its outcome and why.
type failedTest struct {
	test    string
	outcome vocab.Outcome
	why     string
}

// NewConsole returns a TestStream that prints go test-style lines to w:
// "=== RUN   name", indented detail lines, "--- PASS: name (1.23s)", and the
// final "ok  <spec> 12.3s" or "FAIL <spec> 12.3s". pkg is the spec path.
func NewConsole(w io.Writer, pkg string, opts ConsoleOptions) TestStream {
	mk := func(a ...color.Attribute) *color.Color {
		c := color.New(a...)
		if opts.Color {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
		return c
	}
	return &console{w: w, pkg: pkg, opts: opts,
		pass: mk(color.FgGreen), fail: mk(color.FgRed, color.Bold), skip: mk(color.FgYellow), dim: mk(color.Faint)}
}

// print writes s, first erasing the progress line and then drawing it again.
func (c *console) print(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearProgress()
	io.WriteString(c.w, s)
	c.drawProgress()
}

func (c *console) clearProgress() {
	if c.progress != "" {
		io.WriteString(c.w, "\r\033[K")
	}
}

func (c *console) drawProgress() {
	if c.progress != "" {
		io.WriteString(c.w, c.dim.Sprint(c.progress))
	}
}

// Run prints "=== RUN   name".
func (c *console) Run(test string) { c.print(runLine(test)) }

// Output prints an indented detail line.
func (c *console) Output(test, line string) {
	c.mu.Lock()
	if c.last == nil {
		c.last = map[string]string{}
	}
	c.last[test] = strings.TrimSpace(line)
	c.mu.Unlock()
	c.print(detailLine(line))
}

// End prints "--- PASS: name (1.23s)" (or SKIP/FAIL) and removes the
// progress line of that test.
func (c *console) End(test string, o vocab.Outcome, elapsed time.Duration) {
	line := endLine(test, o, elapsed)
	word := endWord(o)
	col := c.pass
	switch o {
	case vocab.Skip:
		col = c.skip
	case vocab.Inconclusive, vocab.Fail, vocab.Error:
		col = c.fail
	}
	line = strings.Replace(line, word, col.Sprint(word), 1)
	c.mu.Lock()
	c.ended++
	if o.Failed() {
		c.failed = append(c.failed, failedTest{test, o, c.last[test]})
	}
	delete(c.last, test)
	c.clearProgress()
	c.progress = ""
	io.WriteString(c.w, line)
	c.mu.Unlock()
}

// Log prints a line that belongs to no test.
func (c *console) Log(line string) { c.print(line + "\n") }

// Progress redraws the live progress line (at most ten times a second).
func (c *console) Progress(p Progress) {
	if !c.opts.Progress {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.lastDraw) < 100*time.Millisecond {
		return
	}
	c.lastDraw = time.Now()
	c.clearProgress()
	line := progressLine(p)
	// A line wider than the terminal would wrap, and "\r" then redraws
	// only its last part: keep it short.
	if r := []rune(line); len(r) > progressWidth {
		line = string(r[:progressWidth-1]) + "…"
	}
	c.progress = line
	c.drawProgress()
}

// progressWidth bounds the progress line (terminals are at least 80 wide;
// the common cell names fit in 100).
const progressWidth = 100

// progressLine renders the live state of a cell on one line: cell,
// stage elapsed/window, tok/s so far, cells done/total, ETA.
func progressLine(p Progress) string {
	var b strings.Builder
	b.WriteString(p.Test)
	if p.Stage != "" {
		b.WriteString("  " + string(p.Stage))
	}
	if p.Window > 0 && p.Stage == result.StageMeasuring {
		fmt.Fprintf(&b, " %.1fs/%s", p.Elapsed.Seconds(), p.Window.Round(100*time.Millisecond))
	} else if p.Elapsed > 0 {
		fmt.Fprintf(&b, " %.1fs", p.Elapsed.Seconds())
	}
	if p.TPS > 0 {
		b.WriteString("  " + metricText(metric.Must(vocab.PhaseDecode, metric.TotalTPS), p.TPS) + " tok/s")
	}
	if p.Cells > 0 {
		fmt.Fprintf(&b, "  cells %d/%d", p.CellsDone, p.Cells)
	}
	if p.ETA > 0 {
		b.WriteString("  ETA " + p.ETA.Round(time.Second).String())
	}
	return b.String()
}

// Finish prints "PASS"/"FAIL" and "ok  \tspec\t12.3s" or "FAIL\tspec\t12.3s",
// after a failed run first what failed and why (recapLines), so that the
// closing lines tell the outcome without scrolling back.
func (c *console) Finish(o vocab.Outcome, elapsed time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearProgress()
	c.progress = ""
	for i, l := range recapLines(c.ended, c.failed) {
		if i == 0 {
			l = c.fail.Sprint(strings.TrimSuffix(l, "\n")) + "\n"
		}
		io.WriteString(c.w, l)
	}
	for _, l := range finishLines(c.pkg, o, elapsed) {
		switch {
		case strings.HasPrefix(l, "ok"):
			l = c.pass.Sprint("ok") + l[2:]
		case strings.HasPrefix(l, "FAIL"):
			l = c.fail.Sprint("FAIL") + l[4:]
		case strings.HasPrefix(l, "PASS"):
			l = c.pass.Sprint("PASS") + l[4:]
		}
		io.WriteString(c.w, l)
	}
}

// maxRecap is how many failed tests the closing recap names.
const maxRecap = 10

// recapLines are the console's closing recap of a run whose tests failed:
// how many of the ended tests failed, errored or were inconclusive, then
// each failed test with the last line it printed (its message: the
// author's error_message, the comparison's summary, the error), at most
// maxRecap of them; none when nothing failed:
//
//	2 of 8 tests failed:
//	    qwen/baseline/decode/ctx=8K/conc=1: total_tps and ttft_ms regressed beyond 5% against the baseline
func recapLines(ended int, failed []failedTest) []string {
	if len(failed) == 0 {
		return nil
	}
	var n [vocab.Error + 1]int
	for _, f := range failed {
		n[f.outcome]++
	}
	var parts []string
	for _, w := range []struct {
		o    vocab.Outcome
		word string
	}{{vocab.Error, "errored"}, {vocab.Fail, "failed"}, {vocab.Inconclusive, "inconclusive"}} {
		switch k := n[w.o]; {
		case k == 0:
		case len(parts) == 0:
			parts = append(parts, fmt.Sprintf("%d of %d %s %s", k, ended, plural(ended, "test", "tests"), w.word))
		default:
			parts = append(parts, fmt.Sprintf("%d %s", k, w.word))
		}
	}
	lines := []string{strings.Join(parts, ", ") + ":\n"}
	for i, f := range failed {
		if i == maxRecap {
			lines = append(lines, detailLine(fmt.Sprintf("… and %d more above", len(failed)-i)))
			break
		}
		line := f.test
		if f.outcome != vocab.Fail {
			line += " (" + f.outcome.String() + ")"
		}
		if f.why != "" {
			line += ": " + f.why
		}
		lines = append(lines, detailLine(line))
	}
	return lines
}
