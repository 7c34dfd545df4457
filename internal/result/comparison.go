package result

import "github.com/slogate/slogate/internal/vocab"

// Comparison is the record of a -baseline comparison in results.json
// (compare.Comparison.Record): per cell and metric the baseline's value and
// this run's, the change with its bounds, the decision and the outcome,
// which the reports' comparison table and charts show. Nil without a
// baseline.
type Comparison struct {
	// Baseline names the baseline run: server, model, engine and version,
	// start (Results.Describe).
	Baseline string `json:"baseline"`
	// Tolerance (a fraction) and Alpha (each bound's one-sided level) are
	// the policy's.
	Tolerance float64 `json:"tolerance"`
	Alpha     float64 `json:"alpha"`
	// InformsOnly: the engines differ, so the comparison never gates
	// (docs/method.md#comparing-engines).
	InformsOnly bool `json:"informs_only,omitempty"`
	// Outcome is the comparison's, the worst of its cells'.
	Outcome vocab.Outcome `json:"outcome"`
	// Rows are the cells either run recorded, each metric compared, in
	// order: prefill first, then each decode matrix row by row.
	Rows []ComparisonRow `json:"rows"`
}

// ComparisonRow is one cell and metric of a Comparison.
type ComparisonRow struct {
	// Cell names it ("decode/ctx=8K/conc=64"); Phase, Matrix, Context and
	// Concurrency are its key.
	Cell        string      `json:"cell"`
	Phase       vocab.Phase `json:"phase"`
	Matrix      string      `json:"matrix,omitempty"`
	Context     int         `json:"context"`
	Concurrency int         `json:"concurrency,omitempty"`
	// Metric is the metric's name, Unit its unit, HigherIsBetter its
	// direction.
	Metric         string `json:"metric"`
	Unit           string `json:"unit,omitempty"`
	HigherIsBetter bool   `json:"higher_is_better"`
	// Baseline and Now are the values; null when that run has none (see
	// the status: absent "", over_capacity, error, …).
	Baseline       *float64     `json:"baseline"`
	Now            *float64     `json:"now"`
	BaselineStatus vocab.Status `json:"baseline_status,omitempty"`
	NowStatus      vocab.Status `json:"now_status,omitempty"`
	// BaselineRepeats and NowRepeats are the runs behind each value.
	BaselineRepeats int `json:"baseline_repeats,omitempty"`
	NowRepeats      int `json:"now_repeats,omitempty"`
	// Change is the relative change of Now from Baseline (a fraction: the
	// Hodges–Lehmann estimate when an interval decided it); Lower and
	// Upper its bounds, each one-sided at Confidence; null when not known.
	Change     *float64 `json:"change"`
	Lower      *float64 `json:"lower"`
	Upper      *float64 `json:"upper"`
	Confidence *float64 `json:"confidence,omitempty"`
	// Decision is how the cell moved: unchanged, improved, regressed,
	// inconclusive, baseline_only, now_only, neither, lost, errored.
	Decision string `json:"decision"`
	// Outcome is what the cell and metric does to the gate.
	Outcome vocab.Outcome `json:"outcome"`
}
