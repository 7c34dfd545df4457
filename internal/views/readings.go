package views

// This file writes what an assert's condition read (result.Reading) as
// the lines of its verdict's details and of a search probe's objective,
// k6-style.

import (
	"fmt"
	"strings"

	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
)

// AssertWords are the words assert.Evaluate's verdicts quote (its
// assert.Words): the readings' lines and why a correctness block was not
// compared.
type AssertWords struct{}

// ReadingLines are readings rs' lines (ReadingLines).
func (AssertWords) ReadingLines(rs []result.Reading) []string { return ReadingLines(rs) }

// CorrectnessRefused says why correctness comparison cc was refused
// (report.CorrectnessRefused).
func (AssertWords) CorrectnessRefused(cc *result.CorrectnessComparison) string {
	return report.CorrectnessRefused(cc)
}

// ReadingLines are the detail lines of readings rs, one each.
func ReadingLines(rs []result.Reading) []string {
	if rs == nil {
		return nil
	}
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = ReadingLine(r)
	}
	return out
}

// ReadingLine is one reading's line: a comparison as
//
//	decode["8K"][64].total_tps = 5421.3, want >= 6000 (-9.6% from the threshold)
//	decode["8K"][64].ttft_ms.p95 = 180, want < 2 * prefill["8K"].ttft_ms (2 * prefill["8K"].ttft_ms): ok
//
// an expect's as
//
//	total_tps = 5421.3, want >= 5717.5 (6018.4 - 5%) (-9.9% from expected)
//
// and a value read outside one as `name = value`.
func ReadingLine(r result.Reading) string {
	if r.Op == "" {
		return r.Subject + " = " + r.Value
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s = %s, want %s %s", r.Subject, r.Value, r.Op, r.Threshold)
	if r.Against != "" {
		fmt.Fprintf(&b, " (%s)", r.Against)
	}
	switch {
	case r.FromExpected:
		fmt.Fprintf(&b, " (%s from expected)", numfmt.Delta(r.Gap))
	case r.Held:
		b.WriteString(": ok")
	case r.HasGap:
		fmt.Fprintf(&b, " (%s from the threshold)", numfmt.Delta(r.Gap))
	}
	return b.String()
}
