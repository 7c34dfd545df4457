package compare

import (
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/vocab"
)

// Finding is a cell A measured and B did not: lost (over capacity, absent,
// not run) or errored.
type Finding struct {
	Ref    vocab.CellRef
	Change Change // Lost or Errored
	// Metric is the first metric compared and Was A's value of it.
	Metric metric.Metric
	Was    float64
	// B is the cell in B: absent (not Present), or its status and its own
	// reason (the capacity arithmetic of an over-capacity cell, the error).
	B Side
}

// Findings lists the lost and errored cells of the tables, each once (from
// the first table that decided it), in table order.
func Findings(tables []Table) []Finding {
	seen := map[vocab.CellRef]bool{}
	var out []Finding
	for _, t := range tables {
		for _, c := range t.Cells {
			if (c.Change != Lost && c.Change != Errored) || seen[c.Ref] {
				continue
			}
			seen[c.Ref] = true
			out = append(out, Finding{Ref: c.Ref, Change: c.Change, Metric: t.Metric, Was: c.A.Value, B: c.B})
		}
	}
	return out
}

// Method says how the cells measured on both sides were decided: by the
// interval of the change, or by the tolerance alone because a side had too
// few samples to attain α.
type Method struct {
	// Tested and Untested count the cells (× metrics) decided with and
	// without an interval.
	Tested, Untested int
	// RepeatsA and RepeatsB are the fewest runs per cell among the
	// untested cells of each side.
	RepeatsA, RepeatsB int
	// Confidence is the lowest one-sided confidence of a bound among the
	// tested cells, and SizeA, SizeB the sample sizes that attained it.
	Confidence   float64
	SizeA, SizeB int
	// Alpha is the level asked; RepeatsNeeded the measure.repeat with
	// which an interval can be had at it (0: more than 50).
	Alpha         float64
	RepeatsNeeded int
}

// methodOf counts how the tables' cells were decided at level alpha.
func methodOf(tables []Table, alpha float64) Method {
	m := Method{Alpha: alpha}
	for _, t := range tables {
		for _, c := range t.Cells {
			if !c.A.HasValue || !c.B.HasValue {
				continue
			}
			if c.Test != nil {
				if m.Tested == 0 || c.Test.Confidence() < m.Confidence {
					m.Confidence, m.SizeA, m.SizeB = c.Test.Confidence(), c.Test.NA, c.Test.NB
				}
				m.Tested++
				continue
			}
			if m.Untested == 0 {
				m.RepeatsA, m.RepeatsB = c.A.Repeats, c.B.Repeats
			}
			m.Untested++
			m.RepeatsA, m.RepeatsB = min(m.RepeatsA, c.A.Repeats), min(m.RepeatsB, c.B.Repeats)
		}
	}
	m.RepeatsNeeded = repeatsNeeded(m.Alpha)
	return m
}

// Statistical reports whether every cell compared was decided by an
// interval.
func (m Method) Statistical() bool { return m.Untested == 0 }

// repeatsNeeded is the fewest repeats a side, the same on both runs, with
// which a comparison can be statistical at alpha (3 at α = 0.05, where
// 3 + 3 attains 0.05 at the extreme; 4 at 0.02); 0 beyond 50 repeats.
func repeatsNeeded(alpha float64) int {
	for n := 1; n <= 50; n++ {
		if _, _, ok := attainable(n, n, alpha); ok {
			return n
		}
	}
	return 0
}
