package report

import (
	_ "embed"
	"html/template"
	"io"
	"strings"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

//go:embed report.html.tmpl
var htmlSource string

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"lower": strings.ToLower,
}).Parse(htmlSource))

// htmlCell is one decode matrix cell for the HTML table.
type htmlCell struct {
	TPS, TTFT, Word, Class string
	Queued                 bool
}

func newHTMLCell(c *result.DecodeCell) htmlCell {
	tps, queued, ttft, word := cellParts(c)
	return htmlCell{TPS: tps, Queued: queued, TTFT: ttft, Word: word, Class: cellClass(c)}
}

func cellClass(c *result.DecodeCell) string {
	if c == nil {
		return "none"
	}
	return string(c.Status)
}

// htmlData is what report.html.tmpl renders.
type htmlData struct {
	*view
	AllHeader    []string
	LegendTTFT   string
	LegendMatrix string
	LegendMedian string
	Charts       []htmlChart
	MatrixCharts []htmlMatrix
	Searches     []htmlSearch
	LatencyIntro string
}

// htmlSearch is one search's section: its table and chart.
type htmlSearch struct {
	searchView
	Chart template.HTML
}

type htmlMatrix struct {
	matrixView
	Rows        []htmlRow
	Lines, Heat template.HTML
}

type htmlRow struct {
	Context string
	Cells   []htmlCell
}

type htmlChart struct {
	Title string
	SVG   template.HTML
}

// WriteHTML renders res as a self-contained report.html: the content of
// report.md plus inline SVG charts (decode tok/s against concurrency per
// context, prefill tok/s against context, and a heat map of each matrix).
// It references nothing outside the file: no scripts, fonts or images.
func WriteHTML(w io.Writer, res *result.Results) error { return NewModel(res).WriteHTML(w) }

// writeHTML lays v out as report.html (WriteHTML); the correctness,
// traffic, latency and comparison sections are v's, as in report.md.
func writeHTML(w io.Writer, v *view) error {
	res := v.Res
	d := htmlData{view: v, AllHeader: allHeader(), LegendTTFT: legendTTFT, LegendMatrix: legendMatrix, LegendMedian: legendMedians}
	// The SVG strings are built by svg.go, which escapes every piece of
	// text it writes; that is what makes the template.HTML conversion safe.
	for _, m := range v.Matrices {
		hm := htmlMatrix{matrixView: m, Lines: template.HTML(decodeChart(m, res.Comparison)), Heat: template.HTML(heatMap(m))}
		for i, ctx := range m.Contexts {
			row := htmlRow{Context: vocab.FormatTokens(ctx)}
			for _, c := range m.Cells[i] {
				row.Cells = append(row.Cells, newHTMLCell(c))
			}
			hm.Rows = append(hm.Rows, row)
		}
		d.MatrixCharts = append(d.MatrixCharts, hm)
	}
	if len(res.Prefill) > 0 {
		d.Charts = append(d.Charts, htmlChart{Title: "Prefill", SVG: template.HTML(prefillChart(res))})
	}
	d.Charts = append(d.Charts, trafficCharts(res)...)
	d.LatencyIntro = latencyIntro
	for _, sv := range v.searches {
		// searchChart and rateSearchChart escape every text they write,
		// as svg.go does.
		d.Searches = append(d.Searches, htmlSearch{searchView: sv, Chart: template.HTML(sv.chart)})
	}
	return htmlTemplate.Execute(w, d)
}
