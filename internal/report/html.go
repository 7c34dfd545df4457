package report

import (
	_ "embed"
	"html/template"
	"io"
	"math"
	"strings"

	"github.com/slogate/slogate/internal/result"
)

//go:embed report.html.tmpl
var htmlSource string

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"lower": strings.ToLower,
	// last says whether i is the last index of a row: a search table's
	// decision and its reason, which wraps (table.search td.wrap).
	"last": func(i int, row []string) bool { return i == len(row)-1 },
}).Parse(htmlSource))

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

// htmlMatrix is one decode matrix: its line chart, and Shades, each
// cell's background and text colour (matrixShades), row by row.
type htmlMatrix struct {
	matrixView
	Lines  template.HTML
	Shades [][]template.CSS
}

// matrixShades colours each measured cell of m by its total tok/s on the
// viridis scale, the matrix's highest yellow, with text that reads on it;
// cells without numbers keep their class's colours (""). The table is
// the heat map: a drawing beside it would repeat its numbers.
func matrixShades(m matrixView) [][]template.CSS {
	hi := 0.0
	for _, row := range m.Cells {
		for _, c := range row {
			if c != nil && c.Status.Measured() {
				hi = math.Max(hi, c.TotalTPS)
			}
		}
	}
	out := make([][]template.CSS, len(m.Cells))
	for i, row := range m.Cells {
		out[i] = make([]template.CSS, len(row))
		for j, c := range row {
			if c == nil || !c.Status.Measured() || hi <= 0 {
				continue
			}
			f := c.TotalTPS / hi
			// Two colours of the form #rrggbb, made here: safe as CSS.
			out[i][j] = template.CSS("background:" + viridisAt(f) + ";color:" + textOn(f))
		}
	}
	return out
}

type htmlChart struct {
	Title string
	SVG   template.HTML
}

// WriteHTML renders res as a self-contained report.html: the content of
// report.md, the outcome and what failed first, plus inline SVG charts
// (decode tok/s against concurrency per context, prefill tok/s against
// context, traffic and searches) and each decode matrix shaded as a heat
// map.
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
		d.MatrixCharts = append(d.MatrixCharts, htmlMatrix{matrixView: m, Lines: template.HTML(decodeChart(m, res.Comparison)), Shades: matrixShades(m)})
	}
	if len(res.Prefill) > 0 {
		d.Charts = append(d.Charts, htmlChart{Title: "Prefill", SVG: template.HTML(prefillChart(res, v.Prefill))})
	}
	d.Charts = append(d.Charts, trafficCharts(v.blocks)...)
	d.LatencyIntro = latencyIntro
	for _, sv := range v.searches {
		// searchChart and rateSearchChart escape every text they write,
		// as svg.go does.
		d.Searches = append(d.Searches, htmlSearch{searchView: sv, Chart: template.HTML(sv.chart())})
	}
	return htmlTemplate.Execute(w, d)
}
