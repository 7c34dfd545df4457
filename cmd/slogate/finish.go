package main

import (
	"time"

	"github.com/slogate/slogate/assert"
	"github.com/slogate/slogate/report"
	"github.com/slogate/slogate/result"
	"github.com/slogate/slogate/spec"
)

// finishConfig is what finishServer needs once one server has been measured.
type finishConfig struct {
	Spec     *spec.Spec
	Server   *spec.Server
	Results  *result.Results // measured; Verdicts are filled in here
	Baseline *result.Results // nil unless -baseline was given
	// Tolerance for baseline comparisons, as a fraction.
	Tolerance float64
	OutDir    string
	Stream    report.TestStream
}

// finishServer evaluates the spec's assert/expect blocks and the baseline
// comparison against the measured results, streams each verdict as a test,
// and writes the reports into OutDir. It returns the merged outcome.
func finishServer(fc finishConfig) (result.Outcome, error) {
	res := fc.Results
	res.Verdicts = assert.Evaluate(fc.Spec, fc.Server, res)
	if fc.Baseline != nil {
		res.Verdicts = append(res.Verdicts, assert.CompareBaseline(fc.Baseline, res, fc.Tolerance)...)
	}
	for _, v := range res.Verdicts {
		fc.Stream.Run(v.Test)
		for _, d := range v.Details {
			fc.Stream.Output(v.Test, d)
		}
		if v.Message != "" && v.Outcome >= result.Fail {
			fc.Stream.Output(v.Test, "    "+v.Message)
		}
		fc.Stream.End(v.Test, v.Outcome, 0*time.Second)
	}
	return res.Outcome(), nil
}
