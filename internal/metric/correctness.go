package metric

import "github.com/slogate/slogate/internal/vocab"

// The figures of a correctness block that conditions read as
// correctness["NAME"].<name> (docs/method.md#correctness). They are not
// in Table: no cell stores them; results.json keeps them in its
// correctness records.

// Names of the correctness figures.
const (
	CorrectnessPrompts       = "prompts"
	CorrectnessErrors        = "errors"
	CorrectnessAccuracy      = "accuracy"
	CorrectnessAccuracyLower = "accuracy_lower"
	CorrectnessAccuracyUpper = "accuracy_upper"
	CorrectnessElapsedS      = "elapsed_s"
	CorrectnessGPUSeconds    = "gpu_seconds"
	AgreementRate            = "agreement_rate"
	NearTieRate              = "near_tie_rate"
	MismatchRate             = "mismatch_rate"
	Mismatches               = "mismatches"
	AccuracyChange           = "accuracy_change"
)

// Correctness lists the correctness figures, the run's first, then those
// of the comparison with the baseline (Baseline set).
var Correctness = []CorrectnessFigure{
	{Metric: Metric{Name: CorrectnessPrompts, Phase: vocab.PhaseCorrectness, Label: "Prompts", Unit: "prompts", HigherIsBetter: true,
		Doc: "dataset lines sent", integer: true}},
	{Metric: Metric{Name: CorrectnessErrors, Phase: vocab.PhaseCorrectness, Label: "Failed requests", Unit: "requests",
		Doc: "requests that failed", integer: true}},
	{Metric: Metric{Name: CorrectnessAccuracy, Phase: vocab.PhaseCorrectness, Label: "Accuracy", HigherIsBetter: true, Precision: 3,
		Doc: "outputs the scorer found right ÷ outputs scored"}, Scored: true},
	{Metric: Metric{Name: CorrectnessAccuracyLower, Phase: vocab.PhaseCorrectness, Label: "Accuracy, lower bound", HigherIsBetter: true, Precision: 3,
		Doc: "the lower bound of the accuracy's 95% Wilson interval"}, Scored: true},
	{Metric: Metric{Name: CorrectnessAccuracyUpper, Phase: vocab.PhaseCorrectness, Label: "Accuracy, upper bound", HigherIsBetter: true, Precision: 3,
		Doc: "the upper bound of the accuracy's 95% Wilson interval"}, Scored: true},
	{Metric: Metric{Name: CorrectnessElapsedS, Phase: vocab.PhaseCorrectness, Label: "Wall time", Unit: "s", Precision: 1,
		Doc: "the block's wall time, apart from the speed cells'"}},
	{Metric: Metric{Name: CorrectnessGPUSeconds, Phase: vocab.PhaseCorrectness, Label: "GPU time", Unit: "GPU-s", Precision: 1,
		Doc: "the block's wall time × the server's GPUs"}},
	{Metric: Metric{Name: AgreementRate, Phase: vocab.PhaseCorrectness, Label: "Agreement", HigherIsBetter: true, Precision: 3,
		Doc: "prompts whose greedy tokens equal the baseline's ÷ prompts compared"}, Baseline: true},
	{Metric: Metric{Name: NearTieRate, Phase: vocab.PhaseCorrectness, Label: "Near ties", Precision: 3,
		Doc: "prompts that diverge from the baseline at a near tie ÷ prompts compared"}, Baseline: true},
	{Metric: Metric{Name: MismatchRate, Phase: vocab.PhaseCorrectness, Label: "Mismatches", Precision: 3,
		Doc: "prompts that mismatch the baseline ÷ prompts compared"}, Baseline: true},
	{Metric: Metric{Name: Mismatches, Phase: vocab.PhaseCorrectness, Label: "Mismatched prompts", Unit: "prompts",
		Doc: "prompts that mismatch the baseline", integer: true}, Baseline: true},
	{Metric: Metric{Name: AccuracyChange, Phase: vocab.PhaseCorrectness, Label: "Accuracy change", HigherIsBetter: true, Precision: 3,
		Doc: "the accuracy minus the baseline's on the same items"}, Baseline: true, Scored: true},
}

// CorrectnessFigure is one correctness figure: a metric, and what it
// needs: a comparison with the baseline (Baseline), a scorer (Scored).
type CorrectnessFigure struct {
	Metric
	Baseline, Scored bool
}

// CorrectnessNames are the figures' names, in the table's order.
func CorrectnessNames() []string {
	var out []string
	for _, f := range Correctness {
		out = append(out, f.Name)
	}
	return out
}
