package views

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/bisection"
)

// BisectStep is the console line of one step of `slogate bisect`
// (docs/method.md#bisect): the build, its role, per cell the outcome
// with the changes against each endpoint, and its GPU time:
//
//	b07 (step 2): decode/ctx=8K/conc=4 bad (first bad at or before): total_tps -16.4% vs good, +0.3% vs bad; GPU time 12.3s
func BisectStep(r bisection.Record, n int) string {
	var b strings.Builder
	switch r.Role {
	case bisection.RoleCandidate:
		fmt.Fprintf(&b, "%s (step %d", r.Build, n)
		if r.Attempt > 1 {
			b.WriteString(", measured again with the most repeats")
		}
		b.WriteString("):")
	default:
		fmt.Fprintf(&b, "%s (the %s build", r.Build, r.Role)
		if r.Attempt > 1 {
			b.WriteString(", measured again with the most repeats: its comparison with good was inconclusive")
		}
		b.WriteString("): measured")
	}
	if r.Error != "" {
		msg, _, _ := strings.Cut(r.Error, "\n")
		fmt.Fprintf(&b, " skipped: %s", msg)
	}
	for i, c := range r.Cells {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %s %s", c.Cell, c.Outcome.Word())
		if c.Partial {
			b.WriteString(", a partial change (decided by the nearer endpoint)")
		}
		if c.Reason != "" {
			b.WriteString(": " + c.Reason)
		}
		for j, m := range c.Metrics {
			sep := ","
			if j == 0 {
				sep = ":"
			}
			fmt.Fprintf(&b, "%s %s %s vs good (%s), %s vs bad (%s)", sep, m.Metric, pct(m.VsGood), changeWord(m.GoodChange), pct(m.VsBad), changeWord(m.BadChange))
		}
	}
	fmt.Fprintf(&b, "; GPU time %s", seconds(r.GPUSeconds))
	return b.String()
}

// BisectAnswer writes the bisection's answer: a line `first bad: BUILD`
// per build some cells first regressed at, each cell's evidence (its
// change against good at that build and at the last good one), the cells
// left undecided with the builds their first bad may be, the budget when
// it ran out, and the cost.
func BisectAnswer(w io.Writer, r *bisection.Report) {
	byBuild := map[string][]bisection.CellAnswer{}
	var order []string
	for _, c := range r.Cells {
		if !c.Found {
			continue
		}
		if _, ok := byBuild[c.FirstBad]; !ok {
			order = append(order, c.FirstBad)
		}
		byBuild[c.FirstBad] = append(byBuild[c.FirstBad], c)
	}
	for _, build := range order {
		cells := byBuild[build]
		names := make([]string, len(cells))
		for i, c := range cells {
			names[i] = c.Cell
		}
		if len(order) == 1 && len(cells) == len(r.Cells) {
			fmt.Fprintf(w, "first bad: %s\n", build)
		} else {
			fmt.Fprintf(w, "first bad: %s (%s)\n", build, strings.Join(names, ", "))
		}
		for _, c := range cells {
			fmt.Fprintf(w, "  %s: %s; last good %s%s\n", c.Cell, evidence(c.AtFirstBad, c, build, r.Bad), c.LastGood, lastGoodEvidence(c, r.Good))
		}
	}
	for _, c := range r.Cells {
		if c.Found {
			continue
		}
		fmt.Fprintf(w, "undecided: %s: the first bad is one of %s (last good %s)\n", c.Cell, strings.Join(c.Candidates, ", "), c.LastGood)
	}
	if r.BudgetOut {
		fmt.Fprintf(w, "the GPU time budget ran out (-max-gpu-time): %s spent\n", seconds(r.GPUSeconds))
	}
	measured := map[string]bool{}
	for _, s := range r.Steps {
		measured[s.Build] = true
	}
	fmt.Fprintf(w, "%d builds measured of %d, %d steps; GPU time %s\n", len(measured), len(r.Builds), len(r.Steps), seconds(r.GPUSeconds))
}

// evidence is the cell's change against good at its first bad build.
func evidence(st *bisection.CellStep, c bisection.CellAnswer, build, bad string) string {
	var parts []string
	if st != nil {
		for _, m := range st.Metrics {
			parts = append(parts, fmt.Sprintf("%s %s against good at %s (%s)", m.Metric, pct(m.VsGood), build, changeWord(m.GoodChange)))
		}
	} else if build == bad {
		for i, m := range c.Metrics {
			v := c.Change[i]
			parts = append(parts, fmt.Sprintf("%s %s against good at %s (regressed)", m, pct(&v), build))
		}
	}
	if len(parts) == 0 {
		return "no change recorded"
	}
	return strings.Join(parts, ", ")
}

// lastGoodEvidence is the cell's change against good at its last good
// build; none when that is the good build itself.
func lastGoodEvidence(c bisection.CellAnswer, good string) string {
	if c.AtLastGood == nil || c.LastGood == good {
		return " (the good build)"
	}
	var parts []string
	for _, m := range c.AtLastGood.Metrics {
		parts = append(parts, fmt.Sprintf("%s %s", m.Metric, pct(m.VsGood)))
	}
	return " (" + strings.Join(parts, ", ") + " against good)"
}

// pct is a change as a signed percentage, "n/a" without one.
func pct(v *float64) string {
	if v == nil || math.IsNaN(*v) {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", *v*100)
}

// changeWord is a compare.Change key as the console writes it.
func changeWord(key string) string { return strings.ReplaceAll(key, "_", " ") }

// seconds is a GPU time as a duration, "12.3s".
func seconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(100 * time.Millisecond).String()
}

// WriteBisectResuming says on w that the bisection in dir continues, with
// the builds its log holds.
func WriteBisectResuming(w io.Writer, dir string, measured int) {
	fmt.Fprintf(w, "resuming the bisection in %s: %d build(s) measured are read back\n", dir, measured)
}

// WriteBisectStep writes BisectStep's line on w.
func WriteBisectStep(w io.Writer, r bisection.Record, n int) {
	fmt.Fprintln(w, BisectStep(r, n))
}

// WriteBisectStart writes the line that opens a bisection of builds
// builds from good to bad, its results in dir.
func WriteBisectStart(w io.Writer, builds int, good, bad, dir string) {
	fmt.Fprintf(w, "bisecting %d builds from %s (good) to %s (bad); results in %s\n", builds, good, bad, dir)
}

// WriteBisectNoRegression says on w that good is not better than bad on
// any cell: there is nothing to bisect (the comparison follows).
func WriteBisectNoRegression(w io.Writer, good, bad string) {
	fmt.Fprintf(w, "the good build %s is not better than the bad build %s on any cell: nothing to bisect\n", good, bad)
}
