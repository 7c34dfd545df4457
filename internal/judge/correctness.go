package judge

import (
	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// The checks of a correctness block against the baseline, the last part
// of their verdicts' names.
const (
	// CheckAgreement is greedy agreement with the baseline's outputs.
	CheckAgreement = "agreement"
	// CheckAccuracy is the paired task accuracy against the baseline.
	CheckAccuracy = "accuracy"
	// CheckLossless is speculative decoding's losslessness under greedy:
	// this run decoded speculatively, the baseline did not.
	CheckLossless = "lossless"
)

// Correctness is the verdicts of res's correctness blocks
// (docs/method.md#correctness). With a comparison (c, from -baseline),
// one verdict per check of each block (compare.CorrectnessResult), named
// "<server>/correctness/<name>/<check>": greedy agreement; speculative
// losslessness when this run decoded speculatively and the baseline did
// not; the paired accuracy when both blocks have a scorer. A block the
// comparison refused is one Error verdict "<server>/correctness/<name>".
// Without a comparison, or for a block the baseline lacks, one verdict
// per block, the block as measured: informational, a Skip (an accuracy
// with nothing to compare is no pass); an Error when a request failed.
// Each outcome is compare's (a compare.Check).
func Correctness(res *result.Results, c *compare.Comparison, w Words) []result.Verdict {
	by := map[string]*compare.CorrectnessResult{}
	if c != nil && !c.Refused {
		for i := range c.Correctness {
			by[c.Correctness[i].Name] = &c.Correctness[i]
		}
	}
	var out []result.Verdict
	for i := range res.Correctness {
		b := &res.Correctness[i]
		name := vocab.TestID{Server: res.Server.Name, Kind: vocab.KindCorrectness, Block: b.Name}.Name()
		verdict := func(test, check string, f result.Finding, cr *compare.CorrectnessResult, ch compare.Check) result.Verdict {
			v := result.Verdict{Test: test, Kind: vocab.KindCorrectness}
			compared(&v, f, ch.Outcome, ch.Infra)
			word(&v, w.Correctness(f, check, ch, b, cr, c))
			return v
		}
		cr := by[b.Name]
		switch {
		case cr == nil || cr.Outcome == vocab.Skip:
			// Nothing to compare with: informational, a Skip that says
			// why, never a Pass.
			out = append(out, verdict(name, "", result.FindingUncompared, cr, compare.UncomparedCheck(b)))
			continue
		case cr.Refusal != nil:
			out = append(out, verdict(name, "", result.FindingRefused, cr, cr.RefusalCheck()))
			continue
		}
		out = append(out, verdict(name+"/"+CheckAgreement, CheckAgreement, result.FindingCompared, cr, cr.AgreementCheck))
		if cr.Lossless {
			out = append(out, verdict(name+"/"+CheckLossless, CheckLossless, result.FindingCompared, cr, cr.AgreementCheck))
		}
		if cr.Accuracy != nil {
			out = append(out, verdict(name+"/"+CheckAccuracy, CheckAccuracy, result.FindingCompared, cr, cr.AccuracyCheck))
		}
	}
	return out
}
