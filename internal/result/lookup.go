package result

import (
	"slices"

	"github.com/slogate/slogate/internal/vocab"
)

// PrefillCell returns the prefill cell at ctx, if measured or recorded.
func (r *Results) PrefillCell(ctx int) (*PrefillCell, bool) {
	return find(r.Prefill, func(c *PrefillCell) bool { return c.Context == ctx })
}

// DecodeCell returns the decode cell of matrix at ctx × conc, if recorded.
func (r *Results) DecodeCell(matrix string, ctx, conc int) (*DecodeCell, bool) {
	if matrix == "" {
		matrix = "decode"
	}
	return find(r.Decode, func(c *DecodeCell) bool {
		return c.Matrix == matrix && c.Context == ctx && c.Concurrency == conc
	})
}

// MatrixLabels lists the labels of the decode matrices r has cells of, in
// order of first appearance.
func (r *Results) MatrixLabels() []string {
	return labelsOf(r.Decode, func(c *DecodeCell) string { return c.Ref().MatrixLabel() })
}

// TrafficCell returns the traffic cell ref names (its label, context, and
// rate or concurrency), if recorded.
func (r *Results) TrafficCell(ref vocab.CellRef) (*TrafficCell, bool) {
	return find(r.Traffic, func(c *TrafficCell) bool { return c.Ref() == ref })
}

// TrafficLabels lists the labels of the traffic blocks r has cells of, in
// order of first appearance.
func (r *Results) TrafficLabels() []string {
	return labelsOf(r.Traffic, func(c *TrafficCell) string { return c.Traffic })
}

// RateProbe returns the probe at rate, if the rate search measured one.
func (s *Search) RateProbe(rate float64) (*SearchProbe, bool) {
	return find(s.Probes, func(p *SearchProbe) bool { return p.Traffic != nil && p.Rate == rate })
}

// Probe returns the probe at concurrency c, if the search measured one.
func (s *Search) Probe(c int) (*SearchProbe, bool) {
	return find(s.Probes, func(p *SearchProbe) bool { return p.Concurrency == c })
}

// SearchByName returns the search called name, if r holds it.
func (r *Results) SearchByName(name string) (*Search, bool) {
	return find(r.Search, func(s *Search) bool { return s.Name == name })
}

// find returns the first of cells that match accepts, by pointer into
// cells so that a caller may update the cell in place. The lookups of
// Results and of a Search above are each this loop with their own key.
func find[C any](cells []C, match func(*C) bool) (*C, bool) {
	for i := range cells {
		if match(&cells[i]) {
			return &cells[i], true
		}
	}
	return nil, false
}

// labelsOf lists the distinct labels of cells in order of first appearance
// (MatrixLabels, TrafficLabels).
func labelsOf[C any](cells []C, label func(*C) string) []string {
	var out []string
	for i := range cells {
		if l := label(&cells[i]); !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}
