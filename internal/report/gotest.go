package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/vocab"
)

// The lines below are the exact text `go test -v` prints. The console and
// the test2json stream both use them, so `-json` Output events carry the
// same text a person sees.

// runLine is "=== RUN   name\n".
func runLine(test string) string { return "=== RUN   " + test + "\n" }

// detailLine is a detail line of a test, indented under it: "    line\n".
func detailLine(line string) string { return "    " + line + "\n" }

// endLine is "--- PASS: name (1.23s)\n" ("--- FAIL" for Inconclusive, Fail and Error,
// "--- SKIP" for Skip).
func endLine(test string, o vocab.Outcome, elapsed time.Duration) string {
	return fmt.Sprintf("--- %s: %s (%s)\n", endWord(o), test, elapsedSeconds(elapsed))
}

// finishLines are the package's last lines: "PASS\nok  \tspec\t1.234s\n" or
// "FAIL\nFAIL\tspec\t1.234s\n".
func finishLines(pkg string, o vocab.Outcome, elapsed time.Duration) []string {
	if o.Failed() {
		return []string{"FAIL\n", fmt.Sprintf("FAIL\t%s\t%.3fs\n", pkg, elapsed.Seconds())}
	}
	return []string{"PASS\n", fmt.Sprintf("ok  \t%s\t%.3fs\n", pkg, elapsed.Seconds())}
}

// endWord is the word of a test's end line: PASS, SKIP, or FAIL (for Fail
// and Error, as go test has no error outcome).
func endWord(o vocab.Outcome) string {
	switch o {
	case vocab.Pass:
		return "PASS"
	case vocab.Skip:
		return "SKIP"
	}
	return "FAIL"
}

// action is the test2json Action that ends a test with outcome o.
func action(o vocab.Outcome) string { return strings.ToLower(endWord(o)) }

// elapsedSeconds renders a duration as go test does: "1.23s".
func elapsedSeconds(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }
