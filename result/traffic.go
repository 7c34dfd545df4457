package result

import (
	"strconv"
)

// PhaseTraffic names the cells of a `traffic` block: open-loop arrivals at
// one request rate (docs/method.md#traffic).
const PhaseTraffic Phase = "traffic"

// Arrival processes of a traffic block (docs/method.md#arrival-schedules).
const (
	ArrivalsPoisson  = "poisson"
	ArrivalsConstant = "constant"
	ArrivalsGamma    = "gamma"
)

// DefaultMaxOutstanding is the safety cap on a traffic cell's requests in
// flight when the spec sets none (docs/method.md#traffic).
const DefaultMaxOutstanding = 4096

// TrafficCell is one open-loop measurement: requests launched at the
// arrival times of one rate, whatever the server's completions do.
type TrafficCell struct {
	Traffic string  `json:"traffic"` // the traffic block's label
	Context int     `json:"context"`
	Rate    float64 `json:"rate"` // configured requests per second
	// Arrivals is the arrival process ("poisson", "constant", "gamma"),
	// Burstiness its gamma shape (0 unless gamma) and Seed the seed of the
	// schedule, so that the same schedule can be drawn again.
	Arrivals   string  `json:"arrivals"`
	Burstiness float64 `json:"burstiness,omitempty"`
	Seed       int64   `json:"seed"`
	Status     Status  `json:"status"`
	Reason     string  `json:"reason,omitempty"`

	AchievedRPS    float64 `json:"achieved_rps"`
	Launched       int     `json:"launched"`
	Completed      int     `json:"completed"`
	Unfinished     int     `json:"unfinished"`
	E2EMs          float64 `json:"e2e_ms"`
	E2EMsP90       float64 `json:"e2e_ms_p90"`
	E2EMsP99       float64 `json:"e2e_ms_p99"`
	E2EMsMean      float64 `json:"e2e_ms_mean"`
	TTFTMs         float64 `json:"ttft_ms"`
	TTFTMsP90      float64 `json:"ttft_ms_p90"`
	TTFTMsP99      float64 `json:"ttft_ms_p99"`
	TBTMs          float64 `json:"tbt_ms"`
	TBTMsP90       float64 `json:"tbt_ms_p90"`
	TBTMsP99       float64 `json:"tbt_ms_p99"`
	ConcurrencyAvg float64 `json:"concurrency_avg"`
	GoodputRPS     float64 `json:"goodput_rps"`
	GoodputShare   float64 `json:"goodput_share"`
	MeasuredS      float64 `json:"measured_s"`
	// CapHits counts the arrivals that found MaxOutstanding requests in
	// flight and were launched late, when a slot freed (0: never).
	CapHits        int `json:"cap_hits,omitempty"`
	MaxOutstanding int `json:"max_outstanding"`
	// Stats holds the latency statistics that are not fields, by metric
	// name (docs/method.md#metric-names): "ttft_ms_p95", "e2e_ms_count", ….
	Stats map[string]float64 `json:"stats,omitempty"`
	// ElapsedS is the wall time the cell took, warm-up and drain included.
	ElapsedS float64  `json:"elapsed_s,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Polling is how long the window's /metrics scrapes took; nil when it
	// took none.
	Polling *Polling `json:"polling,omitempty"`
}

// Ref returns the reference that names this cell.
func (c *TrafficCell) Ref() CellRef {
	return CellRef{Phase: PhaseTraffic, Matrix: c.Traffic, Context: c.Context, Rate: c.Rate}
}

// FormatRate spells a request rate as specs index it and test names show
// it: "4", "0.5" (the shortest decimal that reads back as the same number).
func FormatRate(rate float64) string { return strconv.FormatFloat(rate, 'f', -1, 64) }

// TrafficCell returns the cell of traffic block label at ctx and rate, if recorded.
func (r *Results) TrafficCell(label string, ctx int, rate float64) (*TrafficCell, bool) {
	return find(r.Traffic, func(c *TrafficCell) bool {
		return c.Traffic == label && c.Context == ctx && c.Rate == rate
	})
}

// TrafficLabels lists the labels of the traffic blocks r has cells of, in
// order of first appearance.
func (r *Results) TrafficLabels() []string {
	return labelsOf(r.Traffic, func(c *TrafficCell) string { return c.Traffic })
}

// Metric returns the named metric of a traffic cell; ok is false for an
// unknown name.
func (c *TrafficCell) Metric(name string) (v float64, ok bool) {
	m, ok := LookupMetric(PhaseTraffic, name)
	if !ok {
		return 0, false
	}
	return m.OfTraffic(c)
}

// OfTraffic returns the metric's value in traffic cell c; ok is false when
// m is not a traffic metric.
func (m Metric) OfTraffic(c *TrafficCell) (v float64, ok bool) {
	if m.field.traffic == nil {
		return 0, false
	}
	return m.field.traffic(c).get()
}

// SetTraffic stores v as the metric's value in traffic cell c (rounded to
// the nearest whole number for a count); it does nothing when m is not a
// traffic metric.
func (m Metric) SetTraffic(c *TrafficCell, v float64) {
	if m.field.traffic != nil {
		m.field.traffic(c).set(v)
	}
}

func trafficField[T number](f func(*TrafficCell) *T) cellField {
	return cellField{traffic: func(c *TrafficCell) slot { return slotOf(f(c)) }, integer: isInteger[T]()}
}

// trafficMetrics are the metrics of a traffic cell (docs/method.md#traffic),
// part of the one table Metrics.
var trafficMetrics = []Metric{
	{Name: "achieved_rps", Phase: PhaseTraffic, Label: "Achieved req/s",
		Unit: "req/s", HigherIsBetter: true, Precision: 2,
		Doc:   "requests launched inside the window ÷ window seconds",
		field: trafficField(func(c *TrafficCell) *float64 { return &c.AchievedRPS })},
	{Name: "goodput_rps", Phase: PhaseTraffic, Label: "Goodput req/s",
		Unit: "req/s", HigherIsBetter: true, Precision: 2,
		Doc:   "requests launched inside the window that completed meeting every SLO ÷ window seconds",
		field: trafficField(func(c *TrafficCell) *float64 { return &c.GoodputRPS })},
	{Name: "goodput_share", Phase: PhaseTraffic, Label: "Goodput share",
		Unit: "", HigherIsBetter: true, Precision: 3,
		Doc:   "share of the window's requests that completed meeting every SLO",
		field: trafficField(func(c *TrafficCell) *float64 { return &c.GoodputShare })},
	{Name: "launched", Phase: PhaseTraffic, Label: "Launched requests",
		Unit: "requests", HigherIsBetter: true, Precision: 0,
		Doc:   "requests launched inside the window",
		field: trafficField(func(c *TrafficCell) *int { return &c.Launched })},
	{Name: "completed", Phase: PhaseTraffic, Label: "Completed requests",
		Unit: "requests", HigherIsBetter: true, Precision: 0,
		Doc:   "requests launched inside the window that finished",
		field: trafficField(func(c *TrafficCell) *int { return &c.Completed })},
	{Name: "unfinished", Phase: PhaseTraffic, Label: "Unfinished requests",
		Unit: "requests", Precision: 0,
		Doc:   "requests launched inside the window still running at the drain timeout",
		field: trafficField(func(c *TrafficCell) *int { return &c.Unfinished })},
	{Name: "e2e_ms", Phase: PhaseTraffic, Label: "E2E latency",
		Unit: "ms", Precision: 0,
		Doc: "median end-to-end latency (launch to the stream's end) of the completed requests", Samples: "completed requests",
		field: trafficField(func(c *TrafficCell) *float64 { return &c.E2EMs })},
	{Name: "e2e_ms_p90", Phase: PhaseTraffic, Label: "E2E latency p90",
		Unit: "ms", Precision: 0, PercentileOf: "e2e_ms",
		Doc:   "90th percentile end-to-end latency",
		field: trafficField(func(c *TrafficCell) *float64 { return &c.E2EMsP90 })},
	{Name: "e2e_ms_p99", Phase: PhaseTraffic, Label: "E2E latency p99",
		Unit: "ms", Precision: 0, PercentileOf: "e2e_ms",
		Doc:   "99th percentile end-to-end latency",
		field: trafficField(func(c *TrafficCell) *float64 { return &c.E2EMsP99 })},
	{Name: "e2e_ms_mean", Phase: PhaseTraffic, Label: "E2E latency mean",
		Unit: "ms", Precision: 0,
		Doc:   "mean end-to-end latency (the W of Little's law)",
		field: trafficField(func(c *TrafficCell) *float64 { return &c.E2EMsMean })},
	{Name: "ttft_ms", Phase: PhaseTraffic, Label: "TTFT",
		Unit: "ms", Precision: 0,
		Doc: "median time to first token of the window's requests", Samples: "requests",
		field: trafficField(func(c *TrafficCell) *float64 { return &c.TTFTMs })},
	{Name: "ttft_ms_p90", Phase: PhaseTraffic, Label: "TTFT p90",
		Unit: "ms", Precision: 0, PercentileOf: "ttft_ms",
		Doc:   "90th percentile time to first token",
		field: trafficField(func(c *TrafficCell) *float64 { return &c.TTFTMsP90 })},
	{Name: "ttft_ms_p99", Phase: PhaseTraffic, Label: "TTFT p99",
		Unit: "ms", Precision: 0, PercentileOf: "ttft_ms",
		Doc:   "99th percentile time to first token",
		field: trafficField(func(c *TrafficCell) *float64 { return &c.TTFTMsP99 })},
	{Name: "tbt_ms", Phase: PhaseTraffic, Label: "Time between tokens",
		Unit: "ms", Precision: 1,
		Doc: "median over the window's completed requests of each one's TPOT (the older name of tpot_ms)", Samples: "completed requests",
		field: trafficField(func(c *TrafficCell) *float64 { return &c.TBTMs })},
	{Name: "tbt_ms_p90", Phase: PhaseTraffic, Label: "Time between tokens p90",
		Unit: "ms", Precision: 1, PercentileOf: "tbt_ms",
		Doc:   "90th percentile of the requests' mean time between tokens",
		field: trafficField(func(c *TrafficCell) *float64 { return &c.TBTMsP90 })},
	{Name: "tbt_ms_p99", Phase: PhaseTraffic, Label: "Time between tokens p99",
		Unit: "ms", Precision: 1, PercentileOf: "tbt_ms",
		Doc:   "99th percentile of the requests' mean time between tokens",
		field: trafficField(func(c *TrafficCell) *float64 { return &c.TBTMsP99 })},
	{Name: "tpot_ms", Phase: PhaseTraffic, Label: "TPOT",
		Unit: "ms", Precision: 1, Samples: "completed requests",
		Doc:   "median TPOT as vLLM defines it, (last token chunk − first chunk) ÷ (output tokens − 1), of the window's completed requests (tbt_ms holds the same)",
		field: statsField(PhaseTraffic, "tpot_ms")},
	{Name: "concurrency_avg", Phase: PhaseTraffic, Label: "Average in flight",
		Unit: "requests", Precision: 2,
		Doc:   "time-averaged number of requests in flight (launched, not ended) over the window",
		field: trafficField(func(c *TrafficCell) *float64 { return &c.ConcurrencyAvg })},
	{Name: "measured_s", Phase: PhaseTraffic, Label: "Measured for",
		Unit: "s", HigherIsBetter: true, Precision: 1,
		Doc:   "window length actually measured",
		field: trafficField(func(c *TrafficCell) *float64 { return &c.MeasuredS })},
}
