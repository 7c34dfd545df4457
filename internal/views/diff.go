package views

import (
	"fmt"
	"io"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/exit"
)

// Diff is the view of `slogate diff A.json B.json`: the comparison c of the
// runs read from PathA and PathB.
type Diff struct {
	PathA, PathB string
	C            *compare.Comparison
}

// Refusal is the usage error (exit 2) of a diff whose runs were measured
// with different settings, each difference on a line; nil unless the
// comparison was refused.
func (d Diff) Refusal() error {
	if !d.C.Refused {
		return nil
	}
	return exit.Usagef("diff: %s and %s were measured with different settings, so their numbers are not comparable:\n  %s\nmeasure B like A, or pass -allow-settings-change to compare anyway",
		d.PathA, d.PathB, JoinDifferences(d.C.Settings, "\n  "))
}

// Text writes the diff as the console reads it: the header (the settings
// that differ when compared anyway, each run, the server differences), per
// metric the matrices of both runs with the relative change (and its
// bounds) per cell, the cells B lost and the inconclusive ones, a legend,
// the method, the counts, the traffic cells decided, the rate searches'
// capacity compared, the correctness blocks, and the engine
// rule's note when the engines differ.
func (d Diff) Text(w io.Writer) error {
	c := d.C
	writeHeader(w, d.PathA, d.PathB, c)
	if len(c.Tables) == 0 && len(c.Traffic) == 0 && len(c.Correctness) == 0 && len(c.Capacity) == 0 {
		_, err := fmt.Fprintln(w, "no cells to compare: neither run has measured cells")
		return err
	}
	if len(c.Tables) > 0 {
		if err := writeTables(w, c); err != nil {
			return err
		}
		writeSummary(w, c)
	}
	if len(c.Traffic) > 0 {
		fmt.Fprintln(w, "\n"+TrafficNote)
		for _, l := range TrafficLines(c.Traffic, c.Policy.Tolerance) {
			fmt.Fprintln(w, "  "+l)
		}
	}
	if lines := CapacityLines(c); len(lines) > 0 {
		fmt.Fprintln(w, "\n"+CapacityNote)
		for _, l := range lines {
			fmt.Fprintln(w, "  "+l)
		}
	}
	if lines := CorrectnessLines(c); len(lines) > 0 {
		fmt.Fprintln(w, "\nCorrectness (greedy outputs and accuracy, docs/method.md#correctness):")
		for _, l := range lines {
			fmt.Fprintln(w, "  "+l)
		}
	}
	if c.EngineChanged {
		_, err := fmt.Fprintln(w, EngineNote(c))
		return err
	}
	return nil
}
