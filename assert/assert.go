// Package assert turns a spec's assert and expect blocks, and baseline
// comparisons, into Verdicts over measured Results.
package assert

import (
	"github.com/slogate/slogate/result"
	"github.com/slogate/slogate/spec"
)

// Evaluate checks every assert and expect block of sp against res (the
// results of server srv) and returns one verdict per test, in spec order.
//
// TODO(issue 5): not implemented yet; returns no verdicts.
func Evaluate(sp *spec.Spec, srv *spec.Server, res *result.Results) []result.Verdict {
	return nil
}

// CompareBaseline compares every decode and prefill cell of res with the same
// cell of base and returns one verdict per compared cell, named
// "<server>/baseline/decode/ctx=8K/conc=64". tolerance is a fraction (0.05).
//
// TODO(issue 5): not implemented yet; returns no verdicts.
func CompareBaseline(base, res *result.Results, tolerance float64) []result.Verdict {
	return nil
}
