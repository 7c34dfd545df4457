package assert

import (
	"fmt"
	"strings"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// CompareBaseline compares every decode and prefill cell of res with the same
// cell of base and returns one verdict per cell, named
// "<server>/baseline/decode/ctx=8K/conc=64", over the default metrics
// (total_tps, ttft_ms and tbt_ms for decode; tps for prefill), with
// opt.Tolerance (a fraction, 0.05) and opt.Alpha (compare.Compare decides,
// docs/method.md#comparing-runs). A cell fails when any metric regressed,
// and when the baseline measured it and this run lost it (over capacity,
// absent, not run); it is Inconclusive when a metric's comparison could not
// decide and none regressed (with opt.Inconclusive = pass it passes, unless
// the estimate is beyond the tolerance: a Fail); a cell the baseline
// measured and this run could not measure (an error) is an infrastructure
// Error; a cell the baseline did not measure is a Skip. The caller checks first that the runs' settings match
// (compare.Settings).
func CompareBaseline(base, res *result.Results, opt compare.Options) []result.Verdict {
	opt.Metrics = nil
	tables, err := compare.Compare(base, res, opt)
	if err != nil { // only for unknown metric names; the defaults are known
		panic(err)
	}
	lost := map[vocab.CellRef]compare.Finding{}
	for _, f := range compare.Findings(tables) {
		lost[f.Ref] = f
	}
	server := res.Server.Name
	type entry struct {
		ref   vocab.CellRef
		cells []compare.Cell
		mets  []metric.Metric
	}
	var order []vocab.CellRef
	byRef := map[vocab.CellRef]*entry{}
	for _, t := range tables {
		for _, c := range t.Cells {
			e := byRef[c.Ref]
			if e == nil {
				e = &entry{ref: c.Ref}
				byRef[c.Ref] = e
				order = append(order, c.Ref)
			}
			e.cells = append(e.cells, c)
			e.mets = append(e.mets, t.Metric)
		}
	}
	// order is already prefill first, then each decode matrix row by row:
	// the order of compare's tables and of their cells.
	var out []result.Verdict
	for _, ref := range order {
		e := byRef[ref]
		out = append(out, baselineVerdict(server, e.ref, e.cells, e.mets, opt.Tolerance, opt.Inconclusive, lost[e.ref]))
	}
	return out
}

// baselineVerdict merges the per-metric comparisons of one cell; lost is
// the cell's finding when the baseline measured it and this run did not.
func baselineVerdict(server string, ref vocab.CellRef, cells []compare.Cell, mets []metric.Metric, tol float64, policy compare.InconclusivePolicy, lost compare.Finding) result.Verdict {
	v := result.Verdict{
		Test:  vocab.TestID{Server: server, Kind: vocab.KindBaseline, Cell: &ref}.Name(),
		Kind:  vocab.KindBaseline,
		Rule:  "within " + numfmt.Percent(tol) + " of the baseline",
		Cells: []vocab.CellRef{ref},
	}
	a, b := cells[0].A, cells[0].B // the cell's presence and status are the same for every metric
	switch {
	case !a.Present || !a.Status.Measured():
		v.Outcome = vocab.Skip
		if !a.Present {
			v.Message = "not in the baseline"
		} else {
			v.Message = "baseline cell not measured: " + reasonFor(a.Status, a.Reason)
		}
		return v
	case b.Present && b.Status == vocab.StatusError:
		v.Outcome, v.Infra = vocab.Error, true
		v.Message = unmeasured{ref: ref, reason: reasonFor(b.Status, b.Reason)}.message()
		v.Details = []string{refExpr(ref) + ": " + v.Message + " (the baseline measured it)"}
		return v
	case !b.Present || !b.Status.Measured():
		// Lost capacity is a measured property of the new server, not an
		// infrastructure failure: a regression.
		v.Outcome = vocab.Fail
		v.Message = lost.Reason
		v.Details = []string{refExpr(ref) + ": " + lost.Reason + ": the baseline measured this cell, this run did not"}
		if lost.Detail != "" {
			v.Details = append(v.Details, lost.Detail)
		}
		return v
	}
	var regressed, beyond, inconclusive []string
	for i, c := range cells {
		m := mets[i]
		line := fmt.Sprintf("%s: baseline %s, now %s", m.Name, sideValue(c.A), sideValue(c.B))
		if c.A.HasValue && c.B.HasValue && c.Change != compare.Inconclusive {
			line += " (" + deltaOrNA(c.Delta)
			if c.Test != nil {
				line += fmt.Sprintf(", bounds %s at %.1f%% confidence each, %d+%d runs", compare.BoundsText(&c), c.Test.Confidence()*100, c.Test.NA, c.Test.NB)
			} else {
				line += fmt.Sprintf(", %d+%d runs: not statistical", c.A.Repeats, c.B.Repeats)
			}
			line += ")"
		}
		switch c.Change {
		case compare.Regressed:
			line += fmt.Sprintf(", regressed beyond %s (%s)", numfmt.Percent(tol), m.Direction())
			regressed = append(regressed, m.Name)
		case compare.Inconclusive:
			line += ": inconclusive, " + compare.InconclusiveText(&c, m.HigherIsBetter, tol, policy)
			if c.Outcome == vocab.Fail {
				beyond = append(beyond, m.Name)
			} else {
				inconclusive = append(inconclusive, m.Name)
			}
		case compare.Improved:
			line += ", improved"
		case compare.Unchanged:
			if c.Test != nil {
				line += fmt.Sprintf(", within %s", numfmt.Percent(tol))
			}
		}
		v.Details = append(v.Details, line)
		v.Outcome = vocab.Worst(v.Outcome, c.Outcome)
	}
	switch {
	case len(regressed) > 0:
		v.Message = fmt.Sprintf("%s regressed beyond %s against the baseline", joinAnd(regressed), numfmt.Percent(tol))
	case len(beyond) > 0:
		v.Message = fmt.Sprintf("%s inconclusive against the baseline, and estimated beyond %s: fails even with -inconclusive pass", joinAnd(beyond), numfmt.Percent(tol))
	case len(inconclusive) > 0 && v.Outcome == vocab.Inconclusive:
		v.Message = fmt.Sprintf("%s inconclusive against the baseline: neither regressed nor shown within %s; measure more (or -inconclusive pass)", joinAnd(inconclusive), numfmt.Percent(tol))
	}
	return v
}

func sideValue(s compare.Side) string {
	if !s.HasValue {
		return "n/a"
	}
	return numfmt.Value(s.Value)
}

func deltaOrNA(d float64) string {
	if d != d { // NaN: the baseline value was 0
		return "n/a"
	}
	return numfmt.Delta(d)
}

// joinAnd joins names as "a", "a and b", "a, b and c".
func joinAnd(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	s := names[0]
	for _, n := range names[1 : len(names)-1] {
		s += ", " + n
	}
	return s + " and " + names[len(names)-1]
}

// BaselineOptions configure the -baseline comparison.
type BaselineOptions struct {
	// Tolerance and Alpha decide each cell (compare.Options).
	Tolerance, Alpha float64
	// Inconclusive is what an inconclusive cell does (-inconclusive).
	Inconclusive compare.InconclusivePolicy
	// AllowSettingsChange compares runs measured with different settings
	// instead of refusing to.
	AllowSettingsChange bool
}

// WithBaseline checks that res was measured like base (CheckSettings),
// then compares them cell by cell (CompareBaseline). notes are lines for the
// console, in order: the settings that differ when allowed, the server
// differences ("vLLM 0.26.1 → 0.27.2; --max-num-seqs 32 → 64"), how the
// decisions were made when they were not all statistical, and the traffic
// cells side by side (compare.Traffic: information, no verdict). When the settings
// differ and opt does not allow it, err is CheckSettings' usage error and
// there are no verdicts: numbers measured differently are not compared.
func WithBaseline(base, res *result.Results, opt BaselineOptions) (verdicts []result.Verdict, notes []string, err error) {
	notes, err = CheckSettings(base, res, opt.AllowSettingsChange)
	if err != nil {
		return nil, nil, err
	}
	if h := compare.ServerHeader(compare.Server(base, res)); h != "" {
		notes = append(notes, "baseline: server "+h)
	}
	copt := compare.Options{Tolerance: opt.Tolerance, Alpha: opt.Alpha, Inconclusive: opt.Inconclusive}
	verdicts = CompareBaseline(base, res, copt)
	tables, _ := compare.Compare(base, res, copt)
	if m := compare.MethodOf(tables); !m.Statistical() {
		notes = append(notes, "baseline: "+m.Note())
	}
	if traffic := compare.Traffic(base, res); len(traffic) > 0 {
		notes = append(notes, "baseline: "+compare.TrafficNote)
		for _, l := range traffic {
			notes = append(notes, "baseline:   "+l)
		}
	}
	if compare.EngineChanged(base, res) {
		verdicts = InformOnly(verdicts)
		notes = append(notes, "baseline: "+compare.EngineNote(base, res))
	}
	return verdicts, notes, nil
}

// InformOnly turns the verdicts of a comparison across engines into
// information (docs/method.md#comparing-engines): a regression or an
// inconclusive cell passes, its lines kept and marked, since a baseline
// gates only a run of the same engine. An Error (a cell this run could not
// measure) stays an Error: an errored server is never reported as a fast
// or slow one.
func InformOnly(verdicts []result.Verdict) []result.Verdict {
	out := make([]result.Verdict, len(verdicts))
	for i, v := range verdicts {
		if v.Outcome == vocab.Fail || v.Outcome == vocab.Inconclusive {
			v.Details = append(append([]string(nil), v.Details...), "(informs only: "+v.Outcome.String()+" against a baseline of another engine, which never gates)")
			v.Outcome = vocab.Pass
		}
		out[i] = v
	}
	return out
}

// CheckSettings compares the measurement settings of res with those of the
// baseline (compare.Settings). When they differ it returns a usage error
// (exit 2) listing each difference ("window: 3s → 1s"), or, when allow is
// set, a note listing them.
func CheckSettings(base, res *result.Results, allow bool) (notes []string, err error) {
	settings := compare.Settings(base, res)
	if len(settings) == 0 {
		return nil, nil
	}
	var lines []string
	for _, d := range settings {
		lines = append(lines, d.String())
	}
	if !allow {
		return nil, exit.Usagef("-baseline: the baseline and this run are measured with different settings, so their numbers are not comparable:\n  %s\nmeasure like the baseline, or pass -allow-settings-change to compare anyway",
			strings.Join(lines, "\n  "))
	}
	return []string{"baseline: settings differ (-allow-settings-change): " + strings.Join(lines, "; ")}, nil
}
