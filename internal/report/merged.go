package report

import (
	"bufio"
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// WriteMergedMarkdown renders a merged results set (`slogate merge`) as one
// report.md: an index of the runs (server, spec, outcome, exit code), for
// each model more than one server measured the same cells side by side (a
// column per server, its engine named), then each run's report.md as a
// section, its headings one level down.
func WriteMergedMarkdown(w io.Writer, m *result.Merged) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "Speed test matrix\n\n# slogate: %s across %d %s\n\n", outcomeWord(m.Outcome), len(m.Runs), plural(len(m.Runs), "server", "servers"))
	writeMergedIndex(b, m)
	writeSideBySide(b, m)
	for _, r := range m.Runs {
		var one bytes.Buffer
		if err := WriteMarkdown(&one, r.Results); err != nil {
			return err
		}
		fmt.Fprintf(b, "---\n\nServer **%s** of %s: %s, exit %d\n\n", mdText(r.Dir), mdText(r.Results.Spec), outcomeWord(r.Outcome), r.ExitCode)
		b.WriteString(demoteHeadings(strings.TrimPrefix(one.String(), "Speed test matrix\n\n")))
	}
	return b.Flush()
}

// WriteMergedSummary renders the short Markdown summary of a merged results
// set for a CI job page ($GITHUB_STEP_SUMMARY): the index of the runs, the
// side-by-side comparisons, then each run's summary (WriteSummary).
func WriteMergedSummary(w io.Writer, m *result.Merged) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "### slogate merge: %s across %d %s\n\n", outcomeWord(m.Outcome), len(m.Runs), plural(len(m.Runs), "server", "servers"))
	writeMergedIndex(b, m)
	writeSideBySide(b, m)
	for _, r := range m.Runs {
		if err := WriteSummary(b, r.Results); err != nil {
			return err
		}
	}
	return b.Flush()
}

// writeMergedIndex is the table of the runs at the top of a merged report.
func writeMergedIndex(b *bufio.Writer, m *result.Merged) {
	mdTable(b, []string{"Server", "Spec", "Outcome", "Exit", "Verdicts", "Model", "Engine"}, func(row func(...string)) {
		for _, r := range m.Runs {
			row(r.Dir, r.Results.Spec, outcomeWord(r.Outcome), strconv.Itoa(r.ExitCode), verdictCounts(r.Results), r.Results.Server.Model, engineHeader(&r.Results.Server))
		}
	})
	fmt.Fprintln(b)
	ended := false
	for _, r := range m.Runs {
		if r.Results.Error != "" {
			fmt.Fprintf(b, "- **%s** ended early: %s\n", mdText(r.Dir), mdText(r.Results.Error))
			ended = true
		}
	}
	if ended {
		fmt.Fprintln(b)
	}
}

// verdictCounts says how many verdicts of each outcome a run has: "3 pass,
// 1 fail"; "none" without verdicts.
func verdictCounts(res *result.Results) string {
	var n [vocab.Error + 1]int
	for _, v := range res.Verdicts {
		if v.Outcome >= vocab.Pass && v.Outcome <= vocab.Error {
			n[v.Outcome]++
		}
	}
	var parts []string
	for o := vocab.Pass; o <= vocab.Error; o++ {
		if n[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[o], o))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// demoteHeadings moves every ATX heading ("# x", "## x") one level down,
// leaving fenced code blocks alone, so a run's report nests under the
// merged report's title.
func demoteHeadings(md string) string {
	lines := strings.SplitAfter(md, "\n")
	fence := ""
	for i, l := range lines {
		trimmed := strings.TrimRight(l, "\n")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, "`") == "" {
				fence = ""
			}
		case strings.HasPrefix(trimmed, "```"):
			fence = trimmed[:len(trimmed)-len(strings.TrimLeft(trimmed, "`"))]
		case strings.HasPrefix(trimmed, "#"):
			lines[i] = "#" + l
		}
	}
	return strings.Join(lines, "")
}

// mergedHTMLTemplate is the page around the runs' reports: report.html's
// style, an index, then each run's report as a section.
var mergedHTMLTemplate = template.Must(template.New("merged").Funcs(template.FuncMap{
	"lower": strings.ToLower,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>slogate: {{.Outcome}} across {{len .Runs}} servers</title>
<style>{{.Style}}
  section.run { border-top: 3px solid var(--line); margin-top: 40px; padding-top: 8px; }
</style>
</head>
<body>
<main>
<p class="kicker">Speed test matrix · merged</p>
<h1>slogate: {{.Outcome}} across {{len .Runs}} servers <span class="badge {{lower .Outcome}}">{{.Outcome}}</span></h1>
<table>
<tr><th class="left">Server</th><th class="left">Spec</th><th class="left">Outcome</th><th>Exit</th><th class="left">Verdicts</th><th class="left">Model</th><th class="left">Engine</th></tr>
{{range .Runs}}<tr><td class="left"><a href="#{{.ID}}">{{.Server}}</a></td><td class="left">{{.Spec}}</td><td class="left outcome-{{lower .Outcome}}">{{.Outcome}}</td><td>{{.Exit}}</td><td class="left">{{.Verdicts}}</td><td class="left">{{.Model}}</td><td class="left">{{.Engine}}</td></tr>
{{end}}</table>
{{range .Sides}}<h2>Side by side: {{.Model}}</h2>
<table>
<tr><th class="left">Cell</th>{{range .Heads}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr><td class="left">{{.Cell}}</td>{{range .Texts}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
<p class="legend">{{$.SideLegend}}</p>
{{end}}{{range .Runs}}<section class="run" id="{{.ID}}">
{{.Body}}
</section>
{{end}}</main>
</body>
</html>
`))

type mergedHTMLRun struct {
	ID, Server, Spec, Outcome, Exit, Verdicts, Model, Engine string
	Body                                                     template.HTML
}

// mergedHTMLSide is one side-by-side comparison on the merged page.
type mergedHTMLSide struct {
	Model string
	Heads []string
	Rows  []struct {
		Cell  string
		Texts []string
	}
}

// htmlSides are the merged set's comparisons (sideBySides) for the page.
func htmlSides(m *result.Merged) []mergedHTMLSide {
	var out []mergedHTMLSide
	for _, s := range sideBySides(m) {
		h := mergedHTMLSide{Model: s.model}
		for _, r := range s.runs {
			h.Heads = append(h.Heads, sideHeader(r))
		}
		for _, r := range s.rows {
			h.Rows = append(h.Rows, struct {
				Cell  string
				Texts []string
			}{r.cell, r.texts})
		}
		out = append(out, h)
	}
	return out
}

// WriteMergedHTML renders a merged results set as one self-contained
// report.html: report.html's style once, an index of the runs, then each
// run's report.html content as a section.
func WriteMergedHTML(w io.Writer, m *result.Merged) error {
	data := struct {
		Outcome    string
		Style      template.CSS
		Runs       []mergedHTMLRun
		Sides      []mergedHTMLSide
		SideLegend string
	}{Outcome: outcomeWord(m.Outcome), Sides: htmlSides(m), SideLegend: strings.ReplaceAll(legendSideBySide, "`", "")}
	for i, r := range m.Runs {
		var one bytes.Buffer
		if err := WriteHTML(&one, r.Results); err != nil {
			return err
		}
		style, body, err := htmlParts(one.String())
		if err != nil {
			return err
		}
		data.Style = template.CSS(style)
		id := "run-" + strconv.Itoa(i+1) + "-" + svgID(r.Results.Server.Name)
		// Each report names its chart patterns by matrix label: prefix
		// them with the run so the ids stay unique on the merged page.
		// Text never holds these sequences raw: the template escapes quotes.
		body = strings.NewReplacer(`id="`, `id="`+id+"-", `url(#`, `url(#`+id+"-").Replace(body)
		data.Runs = append(data.Runs, mergedHTMLRun{
			ID: id, Server: r.Dir, Spec: r.Results.Spec,
			Outcome: outcomeWord(r.Outcome), Exit: strconv.Itoa(r.ExitCode), Verdicts: verdictCounts(r.Results), Model: r.Results.Server.Model, Engine: engineHeader(&r.Results.Server),
			// body is the inside of <main> as WriteHTML rendered it: its
			// template escaped every piece of text in it.
			Body: template.HTML(body),
		})
	}
	return mergedHTMLTemplate.Execute(w, data)
}

// htmlParts cuts a page WriteHTML rendered into its style sheet and the
// content of its <main>. report.html.tmpl has exactly one of each.
func htmlParts(page string) (style, body string, err error) {
	between := func(s, open, close string) (string, bool) {
		_, after, ok := strings.Cut(s, open)
		if !ok {
			return "", false
		}
		inside, _, ok := strings.Cut(after, close)
		return inside, ok
	}
	style, okStyle := between(page, "<style>", "</style>")
	body, okMain := between(page, "<main>", "</main>")
	if !okStyle || !okMain {
		return "", "", fmt.Errorf("report.html template has no <style> or <main> to merge")
	}
	return style, body, nil
}
