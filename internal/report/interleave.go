package report

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// Interleave is an interleaved comparison of two builds (`slogate
// interleave`, docs/method.md#interleaved) as its report.md shows it.
type Interleave struct {
	A, B, VarName string
	Seed          uint64
	// Order is each finished block's order, "AB" or "BA".
	Order         []string
	Blocks, Boots int
	ServerS       float64
	// Tolerance, Level and Inconclusive are the decision's: the change
	// allowed, the one-sided level each look decides at, and
	// -inconclusive's word.
	Tolerance, Level float64
	Inconclusive     string
	Outcome          vocab.Outcome
	// Partial is true when the design is not done; Stopped says why the
	// run ended early ("" when it did not).
	Partial bool
	Stopped string
	Cells   []compare.BlockCell
	// VerdictsA and VerdictsB are each side's asserts and expects, checked
	// on its boots pooled (ResultsA, ResultsB; nil for a side with no
	// finished boot): B's gate, A's are reported.
	VerdictsA, VerdictsB []result.Verdict
	ResultsA, ResultsB   *result.Results
}

// WriteInterleaveMarkdown renders an interleaved comparison as report.md:
// the outcome and the design, a row per cell and metric (A's and B's
// medians over the blocks, the change and its bounds, the blocks paired,
// the outcome) with the blocks each cell left out, B's verdicts, A's
// (reported), and each side's results report, its boots pooled, as a
// section.
func WriteInterleaveMarkdown(w io.Writer, x Interleave) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "# slogate interleave: %s\n\n", outcomeWord(x.Outcome))
	by := "container.image"
	if x.VarName != "" {
		by = "-var-name " + x.VarName
	}
	fmt.Fprintf(b, "B (%s) against A (%s), builds named by %s, measured in one run: %d %s of one boot of each in the order %s (drawn from seed %d), %d %s, %.1f s of server time.\n\n",
		mdCode(x.B), mdCode(x.A), mdCode(by), x.Blocks, plural(x.Blocks, "block", "blocks"), mdCode(strings.Join(x.Order, " ")), x.Seed, x.Boots, plural(x.Boots, "boot", "boots"), x.ServerS)
	switch {
	case x.Stopped != "":
		fmt.Fprintf(b, "**Partial**: the run stopped before its design was done (%s); the cells are decided on the %d finished %s.\n\n",
			mdText(strings.SplitN(x.Stopped, "\n", 2)[0]), x.Blocks, plural(x.Blocks, "block", "blocks"))
	case x.Partial:
		fmt.Fprintf(b, "**Partial**: more blocks are still to be measured; the cells are decided on the %d finished so far.\n\n", x.Blocks)
	}
	writeInterleaveCells(b, x)
	writeVerdictTable(b, "B's verdicts", "Checked on B's boots pooled; they gate beside the comparison.", x.VerdictsB)
	writeVerdictTable(b, "A's verdicts", "Checked on A's boots pooled; reported, they do not gate.", x.VerdictsA)
	for _, side := range []struct {
		name string
		res  *result.Results
	}{{"A", x.ResultsA}, {"B", x.ResultsB}} {
		if side.res == nil {
			continue
		}
		var one bytes.Buffer
		if err := WriteMarkdown(&one, side.res); err != nil {
			return err
		}
		fmt.Fprintf(b, "---\n\n## %s's results, its boots pooled\n\n", side.name)
		b.WriteString(demoteHeadings(demoteHeadings(strings.TrimPrefix(one.String(), "Speed test matrix\n\n"))))
	}
	return b.Flush()
}

// writeInterleaveCells is the comparison's table, then the blocks each
// cell left out of its pairs.
func writeInterleaveCells(b *bufio.Writer, x Interleave) {
	conf := ConfidenceWords(x.Level)
	fmt.Fprintf(b, "## Comparison\n\nChange = B ÷ A − 1, the Hodges–Lehmann estimate of the blocks' paired log differences; each bound one-sided at %s confidence or more (interleave.json keeps the level each attained); tolerance %s, -inconclusive %s.\n\n",
		conf, numfmt.Percent(tolerance(x.Tolerance)), x.Inconclusive)
	mdTable(b, []string{"Cell", "Metric", "A", "B", "Change", "Bounds (" + conf + " confidence)", "Blocks paired", "Outcome"}, func(row func(...string)) {
		for _, c := range x.Cells {
			switch {
			case c.Error != "":
				row(c.Name(), dash, dash, dash, dash, dash, dash, "ERROR: "+c.Error)
				continue
			case c.Lost != "":
				row(c.Name(), dash, dash, dash, dash, dash, dash, "FAIL: lost ("+c.Lost+")")
				continue
			}
			for _, m := range c.Metrics {
				t := m.Test
				bounds := dash
				if t.Level > 0 {
					bounds = strings.TrimSuffix(numfmt.Delta(t.Lower-1), "%") + "…" + numfmt.Delta(t.Upper-1)
				}
				change := dash
				if t.Ratio > 0 {
					change = numfmt.Delta(t.Ratio - 1)
				}
				o := m.Outcome.String()
				if m.Outcome.Failed() {
					o = strings.ToUpper(o)
				}
				if d := strings.ReplaceAll(t.Change.Key(), "_", " "); d != m.Outcome.String() {
					o += ": " + d
				}
				row(c.Name(), m.Metric.Name, numfmt.Value(m.ValueA), numfmt.Value(m.ValueB), change, bounds, fmt.Sprint(t.Blocks), o)
			}
		}
	})
	b.WriteString("\n")
	for _, c := range x.Cells {
		for _, l := range c.Left {
			fmt.Fprintf(b, "- %s: left out of the pairs: %s\n", mdCode(c.Name()), mdText(LeftBlockText(l)))
		}
	}
	b.WriteString("\n")
}

// writeVerdictTable is a section of verdicts, or nothing without any.
func writeVerdictTable(b *bufio.Writer, title, intro string, verdicts []result.Verdict) {
	if len(verdicts) == 0 {
		return
	}
	fmt.Fprintf(b, "## %s\n\n%s\n\n", title, intro)
	mdTable(b, []string{"Test", "Outcome", "Rule", "Measured"}, func(row func(...string)) {
		for _, v := range verdicts {
			rule := v.Rule
			if rule != "" {
				rule = mdCode(rule)
			}
			o := v.Outcome.String()
			if v.Outcome.Failed() {
				o = strings.ToUpper(o)
			}
			measured := strings.TrimSpace(strings.Join(v.Details, "; "))
			if measured == "" {
				measured = v.Message
			}
			row(v.Test, o, rule, measured)
		}
	})
	b.WriteString("\n")
}

// tolerance is t, or compare's default for 0.
func tolerance(t float64) float64 {
	if t == 0 {
		return compare.DefaultTolerance
	}
	return t
}

// LeftBlockText words a block left out of an interleaved cell's pairs
// (compare.LeftBlock): "block 3: B unmeasurable: …", "block 2: A
// undecided: no probe was decided to meet the objective with confidence".
func LeftBlockText(l compare.LeftBlock) string {
	return fmt.Sprintf("block %d: %s %s", l.Block, l.Side, LeftWhy(l))
}

// LeftWhy is why a block was left out, without its block and side.
func LeftWhy(l compare.LeftBlock) string {
	switch l.Rule {
	case compare.LeftClientLimit:
		return "unmeasurable: the client could not drive " + numfmt.Value(l.Rate) + " req/s, within the answer's bounds"
	case compare.LeftNoRate:
		return "met the objective at no rate (" + numfmt.Value(l.Rate) + " req/s decided failed)"
	case compare.LeftUndecided:
		return "undecided: no probe was decided to meet the objective with confidence"
	}
	return l.Status.Unmeasured(l.Reason)
}
