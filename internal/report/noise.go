package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/engine/registry"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// NoiseOptions say what the noise figures are computed for: the
// tolerance a comparison allows and its one-sided level (0: compare's
// defaults), and the repeats a side the smallest detectable change is
// given for (0: each cell's own).
type NoiseOptions struct {
	Tolerance, Alpha float64
	Repeats          int
}

func (o NoiseOptions) withDefaults() NoiseOptions {
	if o.Tolerance <= 0 {
		o.Tolerance = compare.DefaultTolerance
	}
	if o.Alpha <= 0 {
		o.Alpha = compare.DefaultAlpha
	}
	return o
}

// NoiseRow is the measured noise of one gated metric of one cell
// (docs/method.md#noise).
type NoiseRow struct {
	Cell   vocab.CellRef
	Metric string
	// Repeats is how many samples the cell has; Boots over how many boots.
	Repeats, Boots int
	// Noise is the run-to-run noise: the coefficient of variation over
	// the repeats, measured as the standard deviation of their log values
	// (compare.LogNoise); NaN with fewer than two repeats.
	Noise float64
	// N is the repeats a side SmallestChange is for; SmallestChange the
	// smallest relative change N repeats a side would catch at the level
	// with power 0.9 (NaN when N + N cannot attain it).
	N              int
	SmallestChange float64
	// RepeatsFor is the repeats a side the tolerance needs at this noise
	// (0: more than compare.MaxRepeatsEstimate).
	RepeatsFor int
	// Levels are the boot-level components, when measured over boots.
	Levels *result.Levels
}

// Noise is the noise of every measured cell's gated metrics
// (compare.DefaultMetrics), prefill cells first, in results order.
func Noise(res *result.Results, opt NoiseOptions) []NoiseRow {
	opt = opt.withDefaults()
	var rows []NoiseRow
	add := func(ref vocab.CellRef, phase vocab.Phase, samples map[string][]float64, value func(metric.Metric) (float64, bool), d *result.RepeatDesign) {
		for _, m := range compare.DefaultMetrics(phase) {
			xs := samples[m.Name]
			if len(xs) == 0 {
				if v, ok := value(m); ok {
					xs = []float64{v}
				} else {
					continue
				}
			}
			r := NoiseRow{Cell: ref, Metric: m.Name, Repeats: len(xs), Boots: 1, Noise: math.NaN(), SmallestChange: math.NaN(), N: opt.Repeats}
			if r.N == 0 {
				r.N = len(xs)
			}
			if d != nil && len(d.Boots) > 0 {
				r.Boots = d.Boots[len(d.Boots)-1]
				if lv, ok := d.Levels[m.Name]; ok {
					r.Levels = &lv
				}
			}
			if len(xs) >= 2 {
				r.Noise = compare.LogNoise(xs)
				r.SmallestChange = compare.SmallestChange(r.Noise, r.N, opt.Alpha)
				r.RepeatsFor = compare.RepeatsFor(r.Noise, opt.Tolerance, opt.Alpha)
			}
			rows = append(rows, r)
		}
	}
	for i := range res.Prefill {
		c := &res.Prefill[i]
		if c.Status.Measured() {
			add(c.Ref(), vocab.PhasePrefill, c.Samples, func(m metric.Metric) (float64, bool) { return c.Value(m) }, c.Design)
		}
	}
	for i := range res.Decode {
		c := &res.Decode[i]
		if c.Status.Measured() && c.Search == "" {
			add(c.Ref(), vocab.PhaseDecode, c.Samples, func(m metric.Metric) (float64, bool) { return c.Value(m) }, c.Design)
		}
	}
	return rows
}

// noiseTable is the Noise rows as a table: its header, rows and the note
// under it (for the console, report.md and report.html alike).
func noiseTable(rows []NoiseRow, opt NoiseOptions) (head []string, body [][]string, note string) {
	opt = opt.withDefaults()
	n := "N"
	if opt.Repeats > 0 {
		n = strconv.Itoa(opt.Repeats)
	}
	head = []string{"Cell", "Metric", "Repeats", "Noise (CV)", "Smallest change, " + n + " a side", "Repeats for ±" + numfmt.Percent(opt.Tolerance)}
	boots := false
	for _, r := range rows {
		boots = boots || r.Levels != nil
	}
	if boots {
		head = append(head, "Boots: within σ / between σ", "Suggested")
	}
	for _, r := range rows {
		line := []string{r.Cell.Name(), r.Metric, strconv.Itoa(r.Repeats), dash, dash, dash}
		if r.Boots > 1 {
			line[2] += fmt.Sprintf(" (%d boots)", r.Boots)
		}
		if !math.IsNaN(r.Noise) {
			line[3] = fmt.Sprintf("%.2f%%", r.Noise*100)
			if math.IsNaN(r.SmallestChange) {
				line[4] = fmt.Sprintf("none at %d (not statistical)", r.N)
			} else {
				line[4] = fmt.Sprintf("%.1f%% (N = %d)", r.SmallestChange*100, r.N)
			}
			line[5] = strconv.Itoa(r.RepeatsFor)
			if r.RepeatsFor == 0 {
				line[5] = fmt.Sprintf("more than %d", compare.MaxRepeatsEstimate)
			}
		}
		if boots {
			line = append(line, dash, dash)
			if lv := r.Levels; lv != nil {
				line[6] = fmt.Sprintf("%.2f%% / %.2f%%", math.Sqrt(lv.Within)*100, math.Sqrt(lv.Between)*100)
				line[7] = "one boot, more repeats (boots add nothing seen)"
				if lv.RepeatsPerBoot > 0 {
					line[7] = fmt.Sprintf("%d a boot × %d boots", lv.RepeatsPerBoot, lv.BootsFor)
				}
			}
		}
		body = append(body, line)
	}
	note = fmt.Sprintf("Noise is the coefficient of variation over a cell's repeats (the standard deviation of their log values). "+
		"The smallest change N repeats a side would catch is at one-sided α = %s with power 0.9; the repeats for ±%s decide an unchanged server within the tolerance with power 0.9 (docs/method.md#noise).",
		strconv.FormatFloat(opt.Alpha, 'g', -1, 64), numfmt.Percent(opt.Tolerance))
	if boots {
		note += " Boots: the Kalibera–Jones components within a boot and between boots, and the repeats a boot × boots a side they suggest for the tolerance (docs/method.md#boots)."
	}
	return head, body, note
}

// WriteNoise prints `slogate noise`: the header line naming the run, the
// noise table, and its note.
func WriteNoise(w io.Writer, path string, res *result.Results, opt NoiseOptions) error {
	rows := Noise(res, opt)
	fmt.Fprintf(w, "noise of %s: %s\n\n", path, res.Describe("2006-01-02 15:04 UTC", registry.Title))
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "no measured cell")
		return err
	}
	head, body, note := noiseTable(rows, opt)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range body {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%s\n", note)
	return err
}

// noiseView is the Noise section: the noise of each measured cell's
// gated metrics at compare's defaults (Noise), which its methods word as
// noiseTable does.
type noiseView struct{ rows []NoiseRow }

// Header is the Noise table's header.
func (n *noiseView) Header() []string {
	head, _, _ := noiseTable(n.rows, NoiseOptions{})
	return head
}

// Rows are the Noise table's rows, a cell's metric each.
func (n *noiseView) Rows() [][]string {
	_, body, _ := noiseTable(n.rows, NoiseOptions{})
	return body
}

// Note is the sentence under the Noise table.
func (n *noiseView) Note() string {
	_, _, note := noiseTable(n.rows, NoiseOptions{})
	return note
}

// noiseSection is the Noise section; nil when no cell was repeated.
func noiseSection(res *result.Results) *noiseView {
	rows := Noise(res, NoiseOptions{})
	if !repeated(rows) {
		return nil
	}
	return &noiseView{rows: rows}
}

// repeated says whether any noise row has the repeats to measure noise.
func repeated(rows []NoiseRow) bool {
	for _, r := range rows {
		if r.Repeats >= 2 {
			return true
		}
	}
	return false
}
