package report

// The charts are hand-written SVG rather than gonum/plot: the report must be
// one self-contained file with text that stays selectable and crisp at any
// zoom, gonum/plot's SVG backend embeds its own font handling and draws text
// as paths with a fixed canvas size, and the charts we need (line charts on
// a log2 axis) are a few hundred lines of straightforward geometry with no
// dependency to keep current. The decode matrix's heat map is its HTML
// table, each cell shaded (matrixShades): a drawing of the same numbers
// beside the table would repeat it.

import (
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// palette is a colour-blind-friendly qualitative palette (Okabe–Ito, then
// Tableau) for one line per context.
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
	"#4E79A7", "#F28E2B", "#59A14F", "#E15759"}

// viridis stops for the decode matrix's shading, low to high.
var viridis = [][3]float64{{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}}

func viridisAt(f float64) string {
	f = math.Max(0, math.Min(1, f))
	pos := f * float64(len(viridis)-1)
	i := int(pos)
	if i >= len(viridis)-1 {
		i = len(viridis) - 2
	}
	t := pos - float64(i)
	c := func(k int) int { return int(math.Round(viridis[i][k] + t*(viridis[i+1][k]-viridis[i][k]))) }
	return fmt.Sprintf("#%02x%02x%02x", c(0), c(1), c(2))
}

// textOn picks black or white text for a viridis background.
func textOn(f float64) string {
	if f > 0.55 {
		return "#000"
	}
	return "#fff"
}

// niceTicks returns about n round tick values from 0 to at least hi.
func niceTicks(hi float64, n int) []float64 {
	if hi <= 0 || math.IsNaN(hi) || math.IsInf(hi, 0) {
		hi = 1
	}
	raw := hi / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []float64
	for v := 0.0; v < hi+step*0.999; v += step {
		ticks = append(ticks, v)
	}
	return ticks
}

// tickLabel is a compact axis label: "6K", "500", "1.5K".
func tickLabel(v float64) string {
	if v >= 1000 {
		return numfmt.Thousands(v)
	}
	return numfmt.Shortest(v)
}

type svgBuilder struct{ strings.Builder }

func (b *svgBuilder) f(format string, a ...any) { fmt.Fprintf(&b.Builder, format, a...) }

// text writes an escaped SVG <text> element.
func (b *svgBuilder) text(x, y float64, anchor, class, s string) {
	b.f(`<text x="%.1f" y="%.1f" text-anchor="%s" class="%s">%s</text>`, x, y, anchor, class, html.EscapeString(s))
}

// series is one line of a chart: points at x positions (already mapped to
// log2 axis values) with a y value; hollow marks queued points. Dash (an
// SVG dash array, "" solid), Width (0: 2) and Marker tell lines apart that
// may coincide; series are drawn in order, the last on top.
type series struct {
	Name   string
	Color  string
	Points []point
	Dash   string
	Width  float64
	Marker marker
}

// marker is the mark drawn at each point of a series.
type marker int

// Markers.
const (
	markerCircle marker = iota
	markerSquare
	markerNone
)

// mark draws marker k at (x, y), filled with fill, with a tooltip.
func (b *svgBuilder) mark(k marker, x, y float64, fill, stroke, tooltip string) {
	switch k {
	case markerNone:
		if tooltip != "" {
			b.f(`<circle cx="%.1f" cy="%.1f" r="5" fill="transparent"><title>%s</title></circle>`, x, y, html.EscapeString(tooltip))
		}
	case markerSquare:
		b.f(`<rect x="%.1f" y="%.1f" width="9" height="9" fill="%s" stroke="%s" stroke-width="1.5"><title>%s</title></rect>`,
			x-4.5, y-4.5, fill, stroke, html.EscapeString(tooltip))
	default:
		b.f(`<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s" stroke="%s" stroke-width="1.5"><title>%s</title></circle>`,
			x, y, fill, stroke, html.EscapeString(tooltip))
	}
}

type point struct {
	X, Y   float64 // X in axis units (log2 of the concurrency or context)
	Hollow bool
	Label  string // tooltip
}

// lineChart draws series on a log2 x axis with the given tick labels.
func lineChart(title, yTitle string, xTicks []float64, xLabels []string, xTitle string, ss []series, legend bool) string {
	const W, H = 640.0, 340.0
	left, right, top, bottom := 64.0, 24.0, 36.0, 48.0
	if legend {
		right = 120
		for _, s := range ss {
			// A legend entry is a 32 px sample and its name at about 6.6 px a character.
			right = math.Max(right, 48+6.6*float64(len([]rune(s.Name))))
		}
	}
	pw, ph := W-left-right, H-top-bottom
	ymax := 0.0
	for _, s := range ss {
		for _, p := range s.Points {
			ymax = math.Max(ymax, p.Y)
		}
	}
	yt := niceTicks(ymax*1.05, 5)
	ytop := yt[len(yt)-1]
	xmin, xmax := xTicks[0], xTicks[len(xTicks)-1]
	if xmax == xmin {
		xmin, xmax = xmin-1, xmax+1
	}
	px := func(x float64) float64 { return left + (x-xmin)/(xmax-xmin)*pw }
	py := func(y float64) float64 { return top + ph - y/ytop*ph }

	var b svgBuilder
	b.f(`<svg class="chart" viewBox="0 0 %.0f %.0f" style="max-width:%.0fpx" role="img" aria-label="%s">`, W, H, W*1.25, html.EscapeString(title))
	b.text(left, 20, "start", "ctitle", title)
	for _, v := range yt {
		y := py(v)
		b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="grid"/>`, left, y, left+pw, y)
		b.text(left-8, y+4, "end", "tick", tickLabel(v))
	}
	lastLabel := math.Inf(-1)
	for i, x := range xTicks {
		b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="grid"/>`, px(x), top, px(x), top+ph)
		// Ticks closer than a label's width (251K next to 256K) keep
		// their grid line but share the first label.
		if px(x)-lastLabel >= 34 {
			b.text(px(x), top+ph+18, "middle", "tick", xLabels[i])
			lastLabel = px(x)
		}
	}
	b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="axis"/>`, left, top+ph, left+pw, top+ph)
	b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="axis"/>`, left, top, left, top+ph)
	b.text(left+pw/2, H-8, "middle", "atitle", xTitle)
	b.f(`<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle" class="atitle">%s</text>`, top+ph/2, html.EscapeString(yTitle))
	for i, s := range ss {
		var pts []string
		for _, p := range s.Points {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(p.X), py(p.Y)))
		}
		width, dash := s.Width, ""
		if width == 0 {
			width = 2
		}
		if s.Dash != "" {
			dash = fmt.Sprintf(` stroke-dasharray="%s"`, s.Dash)
		}
		if len(pts) > 1 {
			b.f(`<polyline points="%s" fill="none" stroke="%s" stroke-width="%.1f"%s/>`, strings.Join(pts, " "), s.Color, width, dash)
		}
		for _, p := range s.Points {
			fill := s.Color
			if p.Hollow {
				fill = "#fff"
			}
			b.mark(s.Marker, px(p.X), py(p.Y), fill, s.Color, p.Label)
		}
		if legend {
			ly := top + 6 + float64(i)*18
			b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%.1f"%s/>`, W-right+8, ly, W-right+36, ly, s.Color, math.Min(width, 3), dash)
			b.mark(s.Marker, W-right+22, ly, s.Color, s.Color, "")
			b.text(W-right+42, ly+4, "start", "tick", s.Name)
		}
	}
	if legend && hollowNote(ss) {
		ly := top + 6 + float64(len(ss))*18 + 8
		b.f(`<circle cx="%.1f" cy="%.1f" r="3.5" fill="#fff" stroke="#555" stroke-width="1.5"/>`, W-right+22, ly)
		b.text(W-right+42, ly+4, "start", "tick", "queued")
	}
	b.f(`</svg>`)
	return b.String()
}

// hollowNote reports whether any point is drawn hollow (queued).
func hollowNote(ss []series) bool {
	for _, s := range ss {
		for _, p := range s.Points {
			if p.Hollow {
				return true
			}
		}
	}
	return false
}

// decodeChart is total tok/s against concurrency, one line per context;
// with a -baseline comparison (base), each context's baseline too, dashed
// in the same colour.
func decodeChart(m matrixView, base *result.Comparison) string {
	var xt []float64
	var xl []string
	for _, c := range m.Concurrency {
		xt = append(xt, math.Log2(float64(c)))
		xl = append(xl, fmt.Sprint(c))
	}
	var ss []series
	for i, mr := range m.Rows() {
		s := series{Name: mr.Context(), Color: palette[i%len(palette)]}
		for j, c := range m.Cells[i] {
			if c == nil || !c.Status.Measured() {
				continue
			}
			s.Points = append(s.Points, point{X: math.Log2(float64(c.Concurrency)), Y: c.TotalTPS,
				Hollow: c.Status == vocab.StatusQueued,
				Label:  fmt.Sprintf("%s × %d: %s", s.Name, c.Concurrency, mr.Cells[j].Line())})
		}
		ss = append(ss, s)
		if bs := decodeBaseline(m, i, base, s); len(bs.Points) > 0 {
			ss = append(ss, bs)
		}
	}
	// The legend names each baseline line ("8K baseline"): the title
	// stays the one that fits.
	return lineChart("Decode throughput by concurrency (one line per context)", "total tok/s",
		xt, xl, "simultaneous requests (log₂ scale)", ss, true)
}

// decodeBaseline is the baseline's series of row i of m (the context of
// s): its total tok/s at each concurrency it measured, dashed.
func decodeBaseline(m matrixView, i int, base *result.Comparison, s series) series {
	bs := series{Name: s.Name + " baseline", Color: s.Color, Dash: "6 4", Marker: markerSquare}
	ctx := m.Contexts[i]
	for _, conc := range m.Concurrency {
		if v, ok := baselineValue(base, vocab.PhaseDecode, m.Label, ctx, conc, "total_tps"); ok {
			bs.Points = append(bs.Points, point{X: math.Log2(float64(conc)), Y: v,
				Label: fmt.Sprintf("%s × %d: baseline %s tok/s", s.Name, conc, numfmt.Value(v))})
		}
	}
	return bs
}

// prefillChart is cold prefill tok/s against context length; with a
// -baseline comparison, the baseline's too, dashed. rows are the
// Prefill table's rows of res's prefill cells, which word them.
func prefillChart(res *result.Results, rows []prefillRow) string {
	var xt []float64
	var xl []string
	s := series{Name: "prefill", Color: palette[0]}
	for i, c := range res.Prefill {
		x := math.Log2(float64(c.Context))
		xt = append(xt, x)
		xl = append(xl, rows[i].Context())
		if c.Status.Measured() {
			s.Points = append(s.Points, point{X: x, Y: c.TPS,
				Label: fmt.Sprintf("%s: %s tok/s, %s TTFT", rows[i].Context(), rows[i].TPS(), rows[i].TTFT())})
		}
	}
	ss := []series{s}
	bs := series{Name: "baseline", Color: palette[0], Dash: "6 4", Marker: markerSquare}
	for i, c := range res.Prefill {
		if v, ok := baselineValue(res.Comparison, vocab.PhasePrefill, "", c.Context, 0, "tps"); ok {
			bs.Points = append(bs.Points, point{X: math.Log2(float64(c.Context)), Y: v,
				Label: fmt.Sprintf("%s: baseline %s tok/s", rows[i].Context(), numfmt.Value(v))})
		}
	}
	if len(bs.Points) > 0 {
		ss = append(ss, bs)
	}
	return lineChart("Prefill throughput by context length (cold request)", "prompt tok/s", xt, xl,
		"context length (log₂ scale)", ss, len(ss) > 1)
}

// svgID makes a matrix label safe inside an id attribute.
func svgID(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
