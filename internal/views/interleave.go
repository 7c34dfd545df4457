package views

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
)

// InterleaveDesign is what `slogate interleave` is about to do.
type InterleaveDesign struct {
	A, B, VarName string
	Seed          uint64
	// Min and Max are the blocks (equal for a fixed design); Repeats a
	// boot's repeats; Cells the decode and prefill cells compared.
	Min, Max, Repeats, Cells int
	OutDir                   string
}

// WriteInterleaveStart is the interleaved run's first line:
//
//	interleave: A = ./srv-old, B = ./srv-new (-var-name server_bin): 6 blocks of one boot each, order drawn from seed 1, 2 repeats a boot, 3 cells; results in slogate-out/interleave
func WriteInterleaveStart(w io.Writer, d InterleaveDesign) {
	by := "container.image"
	if d.VarName != "" {
		by = "-var-name " + d.VarName
	}
	blocks := fmt.Sprintf("%d blocks", d.Min)
	if d.Max > d.Min {
		blocks = fmt.Sprintf("%d to %d blocks (repeat = \"auto\")", d.Min, d.Max)
	}
	fmt.Fprintf(w, "interleave: A = %s, B = %s (%s): %s of one boot of each, the order drawn from seed %d, %s a boot, %s; results in %s\n",
		d.A, d.B, by, blocks, d.Seed, count(d.Repeats, "repeat"), count(d.Cells, "cell"), d.OutDir)
}

// InterleaveBoot is one boot measured.
type InterleaveBoot struct {
	Block       int
	Side, Build string
	Cells       int
	Elapsed     time.Duration
	Dir         string
}

// WriteInterleaveBoot is a boot's line once measured:
//
//	block 2: B (./srv-new) measured 3 cells in 14.2s → slogate-out/interleave/b/block-02
func WriteInterleaveBoot(w io.Writer, b InterleaveBoot) {
	fmt.Fprintf(w, "block %d: %s (%s) measured %s in %s → %s\n", b.Block, b.Side, b.Build, count(b.Cells, "cell"),
		b.Elapsed.Round(100*time.Millisecond), b.Dir)
}

// WriteInterleaveMore says that repeat = "auto" measures more blocks for
// the cells not yet decided.
func WriteInterleaveMore(w io.Writer, open, max int) {
	fmt.Fprintf(w, "interleave: %s not yet decided: more blocks, up to %d (repeat = \"auto\")\n", count(open, "cell"), max)
}

// WriteInterleaveCells writes each cell's verdict as -baseline does, B
// against A, one line a metric:
//
//	=== RUN   q/interleave/decode/ctx=1K/conc=1
//	    total_tps: A 246.1, B 221.5 (-10.0%, bounds -10.9…-9.1% at 95.3% confidence each, 6 blocks paired), regressed beyond 5% (higher is better)
//	--- FAIL: q/interleave/decode/ctx=1K/conc=1
//
// An undecided metric under -inconclusive pass says whether it was
// accepted or fails all the same, its estimate beyond the tolerance.
func WriteInterleaveCells(w io.Writer, server string, cells []compare.BlockCell, tolerance float64, policy compare.InconclusivePolicy) {
	if tolerance == 0 {
		tolerance = compare.DefaultTolerance
	}
	tol := numfmt.Percent(tolerance)
	for _, c := range cells {
		name := server + "/interleave/" + c.Name()
		fmt.Fprintf(w, "=== RUN   %s\n", name)
		if c.Error != "" {
			fmt.Fprintf(w, "    cell not measured: %s\n", c.Error)
		}
		switch {
		case c.Lost != "" && c.Search != "":
			fmt.Fprintf(w, "    lost: B met the objective at no rate where A had a capacity (%s): lost capacity is a regression\n", c.Lost)
		case c.Lost != "":
			fmt.Fprintf(w, "    lost: B cannot hold the cell A measured (%s): lost capacity is a regression\n", c.Lost)
		}
		for _, l := range c.Left {
			fmt.Fprintf(w, "    left out of the pairs: %s\n", report.LeftBlockText(l))
		}
		var regressed, undecided []string
		for _, m := range c.Metrics {
			t := m.Test
			line := fmt.Sprintf("    %s: A %s, B %s (%s", m.Metric.Name, numfmt.Value(m.ValueA), numfmt.Value(m.ValueB), numfmt.Delta(t.Shift.Change()))
			if t.Level > 0 {
				line += fmt.Sprintf(", bounds %s…%s%% at %s confidence each, %d blocks paired)", bound(t.Lower-1), bound(t.Upper-1), confidenceText(t.Confidence()), t.Blocks)
			} else {
				line += fmt.Sprintf(", %d blocks paired: too few for an interval at %s)", t.Blocks, numfmt.Shortest(t.Alpha))
			}
			switch t.Change {
			case compare.Regressed:
				line += fmt.Sprintf(", regressed beyond %s (%s)", tol, m.Metric.Direction())
				regressed = append(regressed, m.Metric.Name)
			case compare.Inconclusive:
				line += ": inconclusive"
				if t.Needed > 0 {
					line += fmt.Sprintf(", about %d blocks would decide it", t.Needed)
				}
				switch {
				case policy != compare.InconclusivePass:
					undecided = append(undecided, m.Metric.Name)
				case m.Outcome == vocab.Fail:
					line += fmt.Sprintf("; the estimate is beyond %s: fails even with -inconclusive pass", tol)
				default:
					line += "; accepted (-inconclusive pass)"
				}
			case compare.Improved:
				line += ", improved"
			default:
				line += ", within " + tol
			}
			fmt.Fprintln(w, line)
		}
		switch {
		case len(regressed) > 0:
			fmt.Fprintf(w, "        %s regressed beyond %s: B against A, paired by block\n", joinAnd(regressed), tol)
		case len(undecided) > 0:
			fmt.Fprintf(w, "        %s inconclusive: neither regressed nor shown within %s; more blocks (repeat = \"auto\", -max-blocks) would decide it\n", joinAnd(undecided), tol)
		}
		fmt.Fprintf(w, "--- %s: %s\n", interleaveWord(c.Outcome), name)
	}
}

// interleaveWord is a verdict's word as go test prints it.
func interleaveWord(o vocab.Outcome) string {
	switch o {
	case vocab.Fail, vocab.Error, vocab.Inconclusive:
		return "FAIL"
	case vocab.Skip:
		return "SKIP"
	}
	return "PASS"
}

// InterleaveVerdicts are the asserts and expects checked on each side's
// boots pooled: B's gate, A's are reported.
type InterleaveVerdicts struct {
	Server, A, B         string
	VerdictsA, VerdictsB []result.Verdict
}

// WriteInterleaveVerdicts writes B's verdicts as tests, as a run writes
// its own, named <server>/interleave/B/<test>, then A's in a line each,
// reported without gating:
//
//	=== RUN   s/interleave/B/assert/fast
//	    decode["1K"][1].total_tps = 900, want >= 950 (-5.3% from the threshold)
//	--- FAIL: s/interleave/B/assert/fast
//	A (1.0), its boots pooled, reported (A's asserts do not gate): assert/fast pass
func WriteInterleaveVerdicts(w io.Writer, v InterleaveVerdicts) {
	stream := report.NewConsole(w, "", report.ConsoleOptions{})
	for _, x := range v.VerdictsB {
		x.Test = interleaveTest(v.Server, "B", x.Test)
		StreamVerdict(stream, x)
	}
	if len(v.VerdictsA) == 0 {
		return
	}
	var parts []string
	for _, x := range v.VerdictsA {
		part := strings.TrimPrefix(x.Test, v.Server+"/") + " " + x.Outcome.String()
		if x.Outcome.Failed() && len(x.Details) > 0 {
			part += " (" + strings.TrimSpace(x.Details[0]) + ")"
		}
		parts = append(parts, part)
	}
	fmt.Fprintf(w, "A (%s), its boots pooled, reported (A's asserts do not gate): %s\n", v.A, strings.Join(parts, "; "))
}

// interleaveTest is a side's name of a run's test: s/assert/fast →
// s/interleave/B/assert/fast.
func interleaveTest(server, side, test string) string {
	return server + "/interleave/" + side + "/" + strings.TrimPrefix(test, server+"/")
}

// InterleaveSearchSkipped is the message of an assert an interleaved run
// cannot check: it reads a search, which the run does not measure.
func InterleaveSearchSkipped(searches []string) string {
	return fmt.Sprintf("reads search %s, which an interleaved run does not measure: run the spec for it", joinAnd(quoted(searches)))
}

// quoted is each string in double quotes.
func quoted(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}

// InterleaveSummary is the end of an interleaved run.
type InterleaveSummary struct {
	Outcome vocab.Outcome
	Cells   []compare.BlockCell
	// VerdictsB are B's asserts and expects, which gate beside the cells.
	VerdictsB     []result.Verdict
	Blocks, Boots int
	ServerS       float64
	OutDir        string
	// Stopped is why the run ended before its design was done ("" when
	// it did not): the cells are then decided on the finished blocks.
	Stopped string
}

// WriteInterleaveEnd is the run's closing lines: what failed, the cost in
// boots and server time, where both sides' results are, and the verdict.
func WriteInterleaveEnd(w io.Writer, s InterleaveSummary) {
	var failed []string
	for _, c := range s.Cells {
		if c.Outcome != vocab.Pass {
			failed = append(failed, c.Name()+" ("+c.Outcome.String()+")")
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "%d of %d cells failed: %s\n", len(failed), len(s.Cells), strings.Join(failed, ", "))
	}
	failed = nil
	for _, v := range s.VerdictsB {
		if v.Outcome.Failed() {
			failed = append(failed, v.Test+" ("+v.Outcome.String()+")")
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "%d of %d of B's asserts failed: %s\n", len(failed), len(s.VerdictsB), strings.Join(failed, ", "))
	}
	if s.Stopped != "" {
		fmt.Fprintf(w, "interleave: stopped before the design was done (%s): the cells above are decided on the %s finished\n",
			strings.SplitN(s.Stopped, "\n", 2)[0], count(s.Blocks, "block"))
	}
	fmt.Fprintf(w, "interleave: %s, %s, %.1f s of server time; A's results in %s/a/block-NN, B's in %s/b/block-NN, the comparison in %s/interleave.json\n",
		count(s.Blocks, "block"), count(s.Boots, "boot"), s.ServerS, s.OutDir, s.OutDir, s.OutDir)
	if !s.Outcome.Failed() && s.Stopped == "" {
		fmt.Fprintln(w, "PASS")
	} else {
		fmt.Fprintln(w, "FAIL")
	}
}

// count is n and the noun, plural but for one: "1 cell", "3 cells".
func count(n int, noun string) string {
	return fmt.Sprintf("%d %s", n, plural(n, noun, noun+"s"))
}

// InterleaveKept is what an interleaved run stopped half-way says it
// kept:
//
//	what 2 finished blocks decided is in ab/interleave.json, marked partial
func InterleaveKept(blocks int, path string) string {
	return fmt.Sprintf("what %s decided is in %s, marked partial", count(blocks, "finished block"), path)
}

// InterleaveSameServer is the refusal of two builds that launch the same
// server, each place the spec reads the build's variable named:
//
//	ab.hcl: interleave: -var-name prompt: A (article) and B (random) launch the same server: the variable changes only what is measured, not the server, and the comparison would read that as the build; it is used in:
//	  ab.hcl:14: workload.prompt
//	make the variable change the server (an executable, a flag, a model)
func InterleaveSameServer(specPath, varName, a, b string, uses []spec.VariableUse) string {
	var where []string
	for _, u := range uses {
		where = append(where, fmt.Sprintf("%s:%d: %s", u.Range.Filename, u.Range.Start.Line, u.Path))
	}
	s := fmt.Sprintf("%s: interleave: -var-name %s: A (%s) and B (%s) launch the same server: the variable changes only what is measured, not the server, and the comparison would read that as the build", specPath, varName, a, b)
	if len(where) == 0 {
		s += "; the spec does not read it"
	} else {
		s += "; it is used in:\n  " + strings.Join(where, "\n  ")
	}
	return s + "\nmake the variable change the server (an executable, a flag, a model)"
}
