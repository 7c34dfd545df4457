// Package report renders Results and Verdicts for people and tools: the go
// test-style console, test2json events, JUnit XML, Markdown and HTML reports.
//
// It is the run's view: it renders what runner, assert and compare decided
// and decides nothing, and the rule of views (internal/layers/views_test.go:
// user-facing lines are formatted only in views) counts it as one. It keeps
// its path, one layer below internal/views, because the commands' views
// write on its TestStream and console (colour, test2json) rather than the
// reverse: the stream is the shared surface every view prints through.
package report

import (
	"time"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestStream receives a run as a go test-shaped stream of tests: one test per
// measured cell and one per verdict, grouped under a package (the spec file).
// The console and the test2json (-json) writers implement it.
type TestStream interface {
	// Run announces a test ("=== RUN   qwen/decode/ctx=8K/conc=64").
	Run(test string)
	// Output adds one detail line to a test (indented under it on the console).
	Output(test, line string)
	// End closes a test: "--- PASS", "--- SKIP" or "--- FAIL" (an Error
	// outcome is shown as FAIL; its detail lines say why).
	End(test string, o vocab.Outcome, elapsed time.Duration)
	// Log prints a line that belongs to no test (server start, warnings).
	Log(line string)
	// Progress updates the live progress line; a no-op unless on a TTY.
	Progress(p Progress)
	// Finish prints the package's final "ok" or "FAIL" line.
	Finish(o vocab.Outcome, elapsed time.Duration)
}

// Progress is the live state of the cell being measured.
type Progress struct {
	Test      string        // cell test name
	Elapsed   time.Duration // time into the window (or warm-up)
	Window    time.Duration // the window's length
	Stage     result.Stage  // prefill, warm-up or measuring
	TPS       float64       // tokens/s so far
	CellsDone int           // cells finished so far
	Cells     int           // cells in the server's plan
	ETA       time.Duration // estimated time left for the whole server
}
