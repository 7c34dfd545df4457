package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/result"
)

// WriteMarkdown renders res as report.md in the layout of the seed reports,
// verdict first: title, summary, the outcome with what failed and why,
// Hardware / Engine / Run, launch command, Prefill, the
// Sustained decode matrix, All measurements, legends, the errors and the
// requests the server refused at admission, then the verdicts and any
// warnings.
func WriteMarkdown(w io.Writer, res *result.Results) error { return NewModel(res).WriteMarkdown(w) }

// writeMarkdown lays v out as report.md (WriteMarkdown).
func writeMarkdown(w io.Writer, v *view) error {
	b := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }

	p("Speed test matrix\n\n# %s\n\n%s\n\n", mdText(v.Title()), mdText(v.Summary()))
	if m := v.Measured(); m != "" {
		p("%s\n\n", m)
	}
	writeHead(b, v)
	for _, sec := range []struct {
		title string
		list  []kv
	}{{"Hardware", v.Hardware()}, {"Engine", v.Engine()}, {"Run", v.Run()}} {
		p("## %s\n\n", sec.title)
		for _, e := range sec.list {
			p("- %s: %s\n", e.Key, mdText(e.Value))
		}
		p("\n")
	}
	if l := v.Launch(); l != "" {
		p("## Launch command\n\n%s\n\n", fence("sh", l))
	}
	if len(v.Prefill) > 0 {
		p("## Prefill\n\nprompt tok/s by context length\n\n")
		mdTable(b, []string{"Context", "Prompt tok/s", "TTFT"}, func(row func(...string)) {
			for _, r := range v.Prefill {
				if r.Status() == "Valid" {
					row(r.Context(), r.TPS(), r.TTFT())
				} else {
					row(r.Context(), r.Status(), dash)
				}
			}
		})
		p("\n")
	}
	writeMatrices(b, v)
	writeTraffic(b, v.Traffic)
	writeSearches(b, v.searches)
	writeCorrectness(b, v.Correctness)
	writeLatency(b, v.Latency)
	if len(v.All) > 0 {
		p("## All measurements\n\n%s\n\n", legendMedians)
		mdTable(b, allHeader(), func(row func(...string)) {
			for _, r := range v.All {
				row(r.Texts()...)
			}
		})
		if l := v.StatusLegend(); l != "" {
			p("\n%s\n", l)
		}
		p("\n")
	}
	if len(v.Errors) > 0 {
		p("## Errors\n\n")
		for _, e := range v.Errors {
			p("- %s\n", mdText(e.String()))
		}
		p("\n")
	}
	if len(v.Unmeasurable) > 0 {
		p("## Unmeasurable\n\n")
		for _, e := range v.Unmeasurable {
			p("- %s\n", mdText(e.String()))
		}
		p("\n")
	}
	if len(v.Saturated) > 0 {
		p("## Saturated\n\n")
		for _, e := range v.Saturated {
			p("- %s\n", mdText(e.String()))
		}
		p("\n")
	}
	if len(v.Rejections) > 0 {
		p("## Rejected requests\n\n%s\n\n", v.RejectionsLegend)
		for _, r := range v.Rejections {
			p("- %s\n", mdText(r))
		}
		p("\n")
	}
	if n := v.Noise; n != nil {
		p("## Noise\n\n")
		mdTable(b, n.Header(), func(row func(...string)) {
			for _, r := range n.Rows() {
				row(r...)
			}
		})
		p("\n%s\n\n", mdText(n.Note()))
	}
	writeComparison(b, v.Comparison)
	writeVerdicts(b, v)
	if ws := v.Warnings(); len(ws) > 0 {
		p("## Warnings\n\n")
		for _, w := range ws {
			p("- %s\n", mdText(w))
		}
		p("\n")
	}
	return b.Flush()
}

// WriteSummary renders the short Markdown summary for a CI job page
// ($GITHUB_STEP_SUMMARY): title, outcome, what failed and why, the decode matrix, the
// -baseline comparison's table when there is one, and the verdicts.
func WriteSummary(w io.Writer, res *result.Results) error { return NewModel(res).WriteSummary(w) }

// writeSummary lays v out as the CI summary (WriteSummary).
func writeSummary(w io.Writer, v *view) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "### slogate %s: %s (%s)\n\n%s\n\n", v.Outcome(), mdText(v.Title()), mdText(v.Res.Spec), mdText(v.Summary()))
	writeHead(b, v)
	for _, warn := range v.Warnings() {
		fmt.Fprintf(b, "> %s\n\n", mdText(warn))
	}
	writeMatrices(b, v)
	writeSearches(b, v.searches)
	writeComparison(b, v.Comparison)
	writeVerdicts(b, v)
	return b.Flush()
}

func writeMatrices(b *bufio.Writer, v *view) {
	for _, m := range v.Matrices {
		fmt.Fprintf(b, "## %s\n\n%s\n\n", m.Title(), legendMatrix)
		head := []string{"Context"}
		for _, c := range m.Concurrency {
			head = append(head, strconv.Itoa(c))
		}
		mdTable(b, head, func(row func(...string)) {
			for _, mr := range m.Rows() {
				r := []string{mr.Context()}
				for _, c := range mr.Cells {
					r = append(r, c.Line())
				}
				row(r...)
			}
		})
		if l := v.StatusLegend(); l != "" {
			fmt.Fprintf(b, "\n%s\n", l)
		}
		fmt.Fprintf(b, "\n%s\n\n", legendTTFT)
	}
}

func writeVerdicts(b *bufio.Writer, v *view) {
	if len(v.Verdicts) == 0 {
		return
	}
	fmt.Fprintf(b, "## Verdicts\n\n")
	mdTable(b, []string{"Test", "Outcome", "Rule", "Measured"}, func(row func(...string)) {
		for _, r := range v.Verdicts {
			rule := r.Rule()
			if rule != "" {
				rule = mdCode(rule)
			}
			row(r.Test(), r.Outcome(), rule, r.Measured())
		}
	})
	fmt.Fprintln(b)
}

// writeHead writes what report.md and the CI summary open with: the
// outcome and the tests by outcome on one line, then what failed and why,
// a line each (verdictHead).
func writeHead(b *bufio.Writer, v *view) {
	fmt.Fprintf(b, "**%s**: %s.\n\n", v.Outcome(), mdText(v.Head.Tally()))
	for _, f := range v.Head.WhatFailed {
		line := "- **" + mdText(f.Subject()) + "** " + f.Outcome()
		if where := f.Where(); where != "" {
			line += " at " + mdCode(where)
		}
		fmt.Fprintln(b, line+": "+mdText(f.Why()))
	}
	if n := v.Head.MoreFailed; n > 0 {
		fmt.Fprintf(b, "- … and %d more: see Verdicts and Errors below\n", n)
	}
	if len(v.Head.WhatFailed) > 0 {
		fmt.Fprintln(b)
	}
}

// mdTable writes a pipe table in the seeds' syntax: "| a | b |" rows under a
// "|---|---|" rule. Cell text is escaped so a "|" never breaks the table.
func mdTable(b *bufio.Writer, head []string, rows func(row func(...string))) {
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + mdCell(c) + " |")
		}
		b.WriteString("\n")
	}
	line(head)
	b.WriteString(strings.Repeat("|---", len(head)) + "|\n")
	rows(func(cells ...string) { line(cells) })
}

// mdCell escapes text for a table cell: pipes escaped, newlines folded.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "\r", "")
	s = strings.ReplaceAll(s, "\n", "<br>")
	return strings.ReplaceAll(s, "|", `\|`)
}

// mdText keeps free text on one line; Markdown inline syntax is left alone
// on purpose (model names and versions contain no markup worth escaping
// except the characters handled here).
func mdText(s string) string {
	s = strings.ReplaceAll(s, "\r", "")
	s = strings.ReplaceAll(s, "\n", " ")
	r := strings.NewReplacer("<", "&lt;", ">", "&gt;")
	return r.Replace(s)
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

// fence wraps s in a fenced code block longer than any backtick run in it.
func fence(lang, s string) string {
	f := "```"
	for strings.Contains(s, f) {
		f += "`"
	}
	return f + lang + "\n" + s + "\n" + f
}
