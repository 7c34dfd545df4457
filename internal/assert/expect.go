package assert

import (
	"fmt"

	"github.com/slogate/slogate/internal/judge"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
)

// prefillMatrix is the Expect.Matrix value that makes an expect block a
// prefill row set (one value per context).
const prefillMatrix = "prefill"

// evalExpect evaluates one expect block: one verdict per cell that has a
// non-null expected value.
func (sc *scope) evalExpect(e *spec.Expect) []result.Verdict {
	phase := vocab.PhaseDecode
	label := e.Matrix
	if label == "" {
		label = "decode"
	}
	if label == prefillMatrix {
		phase = vocab.PhasePrefill
	}
	block := vocab.TestID{Server: sc.server, Kind: vocab.KindExpect, Block: e.Name}
	base := block.Name()
	cellTest := func(ref vocab.CellRef) string {
		id := block
		id.Cell = &ref
		return id.Name()
	}
	expected, ok := metric.Lookup(phase, e.Metric)
	if !ok {
		return []result.Verdict{invalid(result.Verdict{
			Test: base, Kind: vocab.KindExpect,
			File: e.DeclRange.Filename, Line: e.DeclRange.Start.Line,
			Message: sc.words.ExpectWhy(result.ExpectWhy{Rule: result.ExpectUnknownMetric, Block: e.Name, Metric: e.Metric, Phase: string(phase)}),
		})}
	}
	var concs []int
	if phase == vocab.PhaseDecode {
		for _, m := range sc.sp.Matrices {
			if m.Label == label {
				concs = m.Concurrency
			}
		}
		if concs == nil {
			return []result.Verdict{invalid(result.Verdict{
				Test: base, Kind: vocab.KindExpect,
				File: e.DeclRange.Filename, Line: e.DeclRange.Start.Line,
				Message: sc.words.ExpectWhy(result.ExpectWhy{Rule: result.ExpectNoMatrix, Block: e.Name, Matrix: label}),
			})}
		}
	}
	var out []result.Verdict
	for _, row := range e.Rows {
		for i, want := range row.Values {
			if want == nil {
				continue
			}
			ref := vocab.CellRef{Phase: phase, Context: row.Context}
			if phase == vocab.PhaseDecode {
				if i >= len(concs) {
					out = append(out, invalid(result.Verdict{
						// Named after the row: the value has no concurrency level.
						Test: cellTest(ref), Kind: vocab.KindExpect,
						File: row.Range.Filename, Line: row.Range.Start.Line,
						Message: sc.words.ExpectWhy(result.ExpectWhy{Rule: result.ExpectRowTooLong, Block: e.Name, Matrix: label,
							Context: row.Context, Values: len(row.Values), Levels: len(concs)}),
					}))
					break
				}
				ref.Matrix, ref.Concurrency = label, concs[i]
			}
			out = append(out, sc.expectCell(cellTest(ref), ref, expected, *want, e.Tolerance, row))
		}
	}
	return out
}

// invalid records on v, an expect test that cannot be checked as written,
// the judge's outcome for an invalid rule.
func invalid(v result.Verdict) result.Verdict {
	judge.Rule(&v, result.FindingInvalidRule)
	return v
}

// expectCell checks one expected value against the measured cell.
func (sc *scope) expectCell(test string, ref vocab.CellRef, m metric.Metric, want, tol float64, row spec.ExpectRow) result.Verdict {
	v := result.Verdict{
		Test: test, Kind: vocab.KindExpect,
		File: row.Range.Filename, Line: row.Range.Start.Line,
		Cells: []vocab.CellRef{ref},
	}
	// A throughput may fall to want × (1 − tol), a latency rise to want × (1 + tol).
	op, sign, limit := ">=", "-", want*(1-tol)
	breached := func(got float64) bool { return got < limit }
	if !m.HigherIsBetter {
		op, sign, limit = "<=", "+", want*(1+tol)
		breached = func(got float64) bool { return got > limit }
	}
	v.Rule = fmt.Sprintf("%s %s %s (%s %s %s)", m.Name, op, numfmt.Value(limit), numfmt.Value(want), sign, numfmt.Percent(tol))

	got, status, why, found := sc.measured(ref, m.Name)
	switch {
	case !found || !status.Measured():
		// Over capacity fails with the arithmetic; errored or absent errs.
		sc.unmeasuredVerdict(&v, []unmeasured{unmeasuredRead(ref, status, why, sc.res)}, nil, nil)
		return v
	case got == nil:
		judge.Rule(&v, result.FindingNotReported)
		v.Message = sc.words.ExpectWhy(result.ExpectWhy{Rule: result.ExpectNotReported, Metric: m.Name, Cell: ref})
		return v
	}
	miss := 0.0
	if want != 0 {
		miss = (*got - want) / want
	}
	v.Details = sc.words.ReadingLines([]result.Reading{{Subject: m.Name, Value: numfmt.Value(*got), Op: op, Threshold: numfmt.Value(limit),
		Against: numfmt.Value(want) + " " + sign + " " + numfmt.Percent(tol), Held: !breached(*got), Gap: miss, HasGap: true, FromExpected: true}})
	if !breached(*got) {
		judge.Rule(&v, result.FindingHeld)
		return v
	}
	judge.Rule(&v, result.FindingNotHeld)
	v.Message = sc.words.ExpectWhy(result.ExpectWhy{Rule: result.ExpectMissed, Metric: m.Name, Cell: ref, Expected: want, Tolerance: tol, Above: !m.HigherIsBetter})
	return v
}

// measured returns a metric of the cell ref: found is false when the
// results have no such cell; val is nil for an optional metric the server
// did not report.
func (sc *scope) measured(ref vocab.CellRef, metric string) (val *float64, status vocab.Status, why string, found bool) {
	var (
		x  float64
		ok bool
	)
	if ref.Phase == vocab.PhasePrefill {
		c, f := sc.res.PrefillCell(ref.Context)
		if !f {
			return nil, "", "", false
		}
		x, ok = c.Metric(metric)
		status, why = c.Status, c.Reason
	} else {
		c, f := sc.res.DecodeCell(ref.Matrix, ref.Context, ref.Concurrency)
		if !f {
			return nil, "", "", false
		}
		x, ok = c.Metric(metric)
		status, why = c.Status, c.Reason
	}
	if !ok {
		return nil, status, why, true
	}
	return &x, status, why, true
}
