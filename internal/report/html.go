package report

import (
	_ "embed"
	"html/template"
	"io"
	"strings"

	"github.com/slogate/slogate/internal/result"
)

//go:embed report.html.tmpl
var htmlSource string

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"lower": strings.ToLower,
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

type htmlMatrix struct {
	matrixView
	Lines, Heat template.HTML
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
		d.MatrixCharts = append(d.MatrixCharts, htmlMatrix{matrixView: m, Lines: template.HTML(decodeChart(m, res.Comparison)), Heat: template.HTML(heatMap(m))})
	}
	if len(res.Prefill) > 0 {
		d.Charts = append(d.Charts, htmlChart{Title: "Prefill", SVG: template.HTML(prefillChart(res, v.Prefill))})
	}
	d.Charts = append(d.Charts, trafficCharts(v.blocks)...)
	d.LatencyIntro = latencyIntro
	for _, sv := range v.searches {
		// searchChart and rateSearchChart escape every text they write,
		// as svg.go does.
		d.Searches = append(d.Searches, htmlSearch{searchView: sv, Chart: template.HTML(sv.chart)})
	}
	return htmlTemplate.Execute(w, d)
}
