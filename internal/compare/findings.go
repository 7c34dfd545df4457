package compare

import (
	"fmt"
	"strings"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/vocab"
)

// Finding is a cell A measured and B did not: lost (over capacity, absent,
// not run) or errored.
type Finding struct {
	Ref    vocab.CellRef
	Change Change // Lost or Errored
	// Reason is the decision in words, with A's value of the first metric
	// compared: "lost: over capacity (was 6,018.4 tok/s)", "error: stream
	// stalled (was 6,018.4 tok/s)".
	Reason string
	// Detail is B's own reason for the cell, when it gave one: the
	// capacity arithmetic of an over-capacity cell, the error.
	Detail string
}

// String is "decode/ctx=8K/conc=64: lost: over capacity (was 6,018.4
// tok/s); 64 × (8192 + 256) = 540672 tokens > KV cache 500000 tokens".
func (f Finding) String() string {
	s := f.Ref.Name() + ": " + f.Reason
	if f.Detail != "" && f.Change == Lost {
		s += "; " + f.Detail
	}
	return s
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
			out = append(out, finding(c, t.Metric))
		}
	}
	return out
}

// finding words the decision about one lost or errored cell.
func finding(c Cell, m metric.Metric) Finding {
	f := Finding{Ref: c.Ref, Change: c.Change, Detail: c.B.Reason}
	was := "was " + numfmt.Fixed(c.A.Value, m.Precision)
	if m.Unit != "" {
		was += " " + m.Unit
	}
	if c.Change == Errored {
		f.Reason = fmt.Sprintf("error: %s (%s)", orDefault(c.B.Reason, "not measured"), was)
		return f
	}
	var why string
	switch {
	case !c.B.Present:
		why = "not measured"
	case c.B.Status == vocab.StatusOverCapacity:
		why = "over capacity"
	default:
		why = strings.ReplaceAll(string(c.B.Status), "_", " ")
		if why == "" {
			why = "not run"
		}
	}
	f.Reason = fmt.Sprintf("lost: %s (%s)", why, was)
	return f
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
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

// MethodOf counts how the tables' cells were decided.
func MethodOf(tables []Table) Method {
	m := Method{Alpha: DefaultAlpha}
	for _, t := range tables {
		m.Alpha = t.Alpha
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

// Note is one sentence on how the decisions were made, for the end of a
// diff: statistical at α, or not, and then how many repeats would make them
// so. "" when no cell was measured on both sides.
func (m Method) Note() string {
	alpha := "α = " + numfmt.Shortest(m.Alpha)
	switch {
	case m.Tested+m.Untested == 0:
		return ""
	case m.Untested == 0:
		return fmt.Sprintf("Decisions are statistical: every cell's change has Hodges–Lehmann bounds, each one-sided at %s confidence or more (%s, the level %d+%d repeats attain); within tolerance means the worse bound is inside it, inconclusive that the bounds straddle its edge.",
			confidenceText(m.Confidence), alpha, m.SizeA, m.SizeB)
	}
	runs := func(n int) string {
		if n == 1 {
			return "1 run"
		}
		return fmt.Sprintf("%d runs", n)
	}
	var s strings.Builder
	if m.Tested > 0 {
		fmt.Fprintf(&s, "%d of %d cell metrics were decided by the tolerance alone, not statistically", m.Untested, m.Tested+m.Untested)
	} else {
		s.WriteString("Decisions are not statistical: the tolerance alone decided")
	}
	fmt.Fprintf(&s, " (%s per cell in A, %s in B: too few to attain %s)", runs(m.RepeatsA), runs(m.RepeatsB), alpha)
	if m.RepeatsNeeded > 0 {
		fmt.Fprintf(&s, "; measure.repeat = %d on both runs is the least that gives each cell an interval of its change at %s (docs/ci.md#sizing-repeats-and-tolerance says how many the noise needs).", m.RepeatsNeeded, alpha)
	} else {
		fmt.Fprintf(&s, "; no measure.repeat up to 50 gives an interval at %s.", alpha)
	}
	return s.String()
}
