package views

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/vocab"
)

// Verdict is the diff's outcome on one line: "FAIL (exit 1): 6 regressed,
// 0 improved, …", then the rate searches' decisions ("capacity: 1
// regressed, 1 within"); across engines it says the comparison informs
// only.
func (d Diff) Verdict() string {
	c := d.C
	s := fmt.Sprintf("%s (exit %d)", strings.ToUpper(c.Outcome.String()), c.ExitCode())
	switch {
	case len(c.Tables) > 0:
		s += ": " + summaryText(c)
	case len(c.Traffic) == 0:
		s += ": no decode or prefill cells to compare"
	}
	if t := trafficSummary(c.Traffic); t != "" {
		s += "; " + t
	}
	if len(c.Capacity) > 0 {
		s += "; capacity: " + capacitySummary(c.Capacity)
	}
	if c.EngineChanged && c.Outcome != vocab.Error {
		s += "; the engines differ: informs only, never gates"
	}
	return s
}

// Markdown writes the diff for a pull-request comment or the GitHub step
// summary: the verdict on one line on top, the runs and their
// differences, a table per cell and metric (baseline, now, change,
// bounds, outcome; report.WriteComparisonTable), the cells B lost and the
// inconclusive ones, the cells whose server refused requests at admission,
// the rate searches' capacity compared, the
// correctness blocks, the traffic cells and how the decisions were made.
func (d Diff) Markdown(w io.Writer) error {
	c := d.C
	b := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("**slogate diff: %s**\n\n", md(d.Verdict()))
	p("- A (baseline): %s — %s\n", mdCode(d.PathA), md(c.A.Describe("2006-01-02 15:04 UTC")))
	p("- B: %s — %s\n", mdCode(d.PathB), md(c.B.Describe("2006-01-02 15:04 UTC")))
	if h := ServerHeader(c.Server); h != "" {
		p("- Server: %s\n", md(h))
	}
	if len(c.Settings) > 0 {
		p("- Settings differ (-allow-settings-change): %s\n", md(JoinDifferences(c.Settings, "; ")))
	}
	p("- Tolerance %s, α = %s, -inconclusive %s\n\n", md(numfmt.Percent(c.Policy.Tolerance)), md(numfmt.Shortest(c.Policy.Alpha)), compare.InconclusivePolicies[c.Policy.Inconclusive])
	if rec := c.Record(); rec != nil && len(rec.Rows) > 0 {
		b.Flush()
		if err := report.WriteComparisonTable(w, rec); err != nil {
			return err
		}
		p("\n")
	}
	if len(c.Lost) > 0 {
		p("Cells A measured and B did not:\n\n")
		for _, f := range c.Lost {
			p("- %s\n", md(FindingText(f)))
		}
		p("\n")
	}
	if lines := InconclusiveLines(c); len(lines) > 0 {
		p("Inconclusive: neither regressed nor shown within %s:\n\n", md(numfmt.Percent(c.Policy.Tolerance)))
		for _, l := range lines {
			p("- %s\n", md(l))
		}
		p("\n")
	}
	if lines := RejectedLines(c); len(lines) > 0 {
		p("%s\n\n", md(RejectedNote))
		for _, l := range lines {
			p("- %s\n", md(l))
		}
		p("\n")
	}
	if lines := CapacityLines(c); len(lines) > 0 {
		p("%s\n\n", md(CapacityNote))
		for _, l := range lines {
			p("- %s\n", md(l))
		}
		p("\n")
	}
	if lines := CorrectnessLines(c); len(lines) > 0 {
		p("Correctness (greedy outputs and accuracy):\n\n")
		for _, l := range lines {
			indent := ""
			if strings.HasPrefix(l, "  ") {
				indent = "  "
			}
			p("%s- %s\n", indent, md(strings.TrimSpace(l)))
		}
		p("\n")
	}
	if len(c.Traffic) > 0 {
		p("%s\n\n", md(strings.TrimSuffix(TrafficNote, ":")+":"))
		for _, l := range TrafficLines(c.Traffic, c.Policy.Tolerance) {
			indent := ""
			if strings.HasPrefix(l, "  ") {
				indent = "  "
			}
			p("%s- %s\n", indent, md(strings.TrimSpace(l)))
		}
		p("\n")
	}
	if note := MethodNote(c.Method); note != "" {
		p("%s\n", md(note))
	}
	if c.EngineChanged {
		p("\n%s\n", md(EngineNote(c)))
	}
	return b.Flush()
}

// md escapes text for a Markdown paragraph or list item: no HTML, no
// table pipes, one line.
func md(s string) string {
	s = strings.ReplaceAll(s, "\r", "")
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.NewReplacer("<", "&lt;", ">", "&gt;", "|", `\|`).Replace(s)
}

// mdCode wraps s in a code span long enough to hold any backticks in it.
func mdCode(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}
