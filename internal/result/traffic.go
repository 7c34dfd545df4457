package result

import (
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// TrafficCell is one traffic measurement: an open loop's requests launched
// at the arrival times of one rate, whatever the server's completions do,
// or a closed loop keeping Concurrency requests in flight.
type TrafficCell struct {
	Traffic string `json:"traffic"` // the traffic block's label
	// Search names the rate search a probe cell belongs to (a cell of the
	// traffic block at the probe's rate); "" for the block's own cells.
	Search string `json:"search,omitempty"`
	// Context is the prompt length; 0 when the workload sets its own.
	Context int     `json:"context"`
	Rate    float64 `json:"rate"` // configured requests per second; 0 in a closed loop
	// Concurrency is a closed loop's requests in flight; 0 in an open loop.
	Concurrency int `json:"concurrency,omitempty"`
	// Arrivals is the arrival process ("poisson", "constant", "gamma"),
	// Burstiness its gamma shape (0 unless gamma) and Seed the seed of the
	// schedule, so that the same schedule can be drawn again.
	Arrivals   string       `json:"arrivals"`
	Burstiness float64      `json:"burstiness,omitempty"`
	Seed       int64        `json:"seed"`
	Status     vocab.Status `json:"status"`
	Reason     string       `json:"reason,omitempty"`
	// Reasons are Reason as values (result.CellReason), in order; nil
	// in results.json written before them, which hold Reason alone.
	Reasons []CellReason `json:"reasons,omitempty"`

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
	ElapsedS float64 `json:"elapsed_s,omitempty"`
	// SettleS is how long the cell waited, before its first request, for
	// the server to finish the requests an earlier cell had closed (an
	// engine that notices a closed request late; docs/method.md#settle).
	SettleS float64 `json:"settle_s,omitempty"`
	// Warnings are the cell's typed warnings, as a decode cell's.
	Warnings []warning.Warning `json:"warnings,omitempty"`
	// Workload is the named workload the cell sent ("" for the unnamed
	// one) and Prompts how its prompts went on the wire: "one user message
	// on /v1/chat/completions, templated by the server", "raw text on
	// /v1/completions, untemplated" or "token IDs on /v1/completions".
	Workload string `json:"workload,omitempty"`
	Prompts  string `json:"prompts,omitempty"`
	// PrefixHitRateDial is the prefix-cache hit rate the cell's workload
	// dialled (prefix = { hit_rate, block }; docs/spec.md#prefix-hit-rate),
	// to read beside the server's measured prefix_cache_hit_rate; nil
	// for a workload without the dial.
	PrefixHitRateDial *float64 `json:"prefix_hit_rate_dial,omitempty"`
	// Sessions are the agentic sessions whose first call the window sent,
	// in the order they started (docs/spec.md#agentic-sessions); nil
	// outside an agentic trace.
	Sessions []AgentSession `json:"sessions,omitempty"`
	// Polling is how long the window's /metrics scrapes took; nil when it
	// took none.
	Polling *Polling `json:"polling,omitempty"`
	// Rejected is the window's requests the server refused at admission
	// (docs/method.md#rejections), RejectedShare their share of Launched:
	// launched, never good; 0 in results written before rejections were
	// counted.
	Rejected      int     `json:"rejected,omitempty"`
	RejectedShare float64 `json:"rejected_share,omitempty"`
	// Rejections are the cell's refused requests as the client and the
	// server counted them over the whole cell, warm-up and drain included
	// (docs/method.md#rejections); nil when neither counted any.
	Rejections *Rejections `json:"rejections,omitempty"`
	// Schedule is what determined the cell's requests and arrivals, with
	// its Hash; nil in a cell recorded before schedules were, or one that
	// errored before its requests were planned.
	Schedule *Schedule `json:"schedule,omitempty"`
	// LagMsP50, LagMsP99 and LagMsMax are the median, the 99th percentile
	// and the maximum of the
	// client's lag behind its schedule over the window's arrivals: actual
	// minus planned send time, less what the outstanding cap held them
	// (RequestRecord.HeldMs: the server's share), docs/method.md#client-lag;
	// 0 in a closed loop, which has no planned times.
	LagMsP50 float64 `json:"lag_ms_p50,omitempty"`
	LagMsP99 float64 `json:"lag_ms_p99,omitempty"`
	LagMsMax float64 `json:"lag_ms_max,omitempty"`
	// SLO is the block's per-request limits a request met to count in
	// goodput (docs/method.md#goodput); nil in a cell recorded before
	// they were, or a block without limits (every completed request is
	// good).
	SLO *TrafficSLO `json:"slo,omitempty"`
	// Requests are the cell's traffic requests, read from requests.jsonl
	// beside results.json (ReadRequests), not written to results.json: a
	// comparison pairs them with the baseline's. Nil when that file was
	// missing or has none of the cell's.
	Requests []RequestRecord `json:"-"`
}

// TrafficSLO is a traffic block's per-request limits in ms; a nil limit
// does not apply.
type TrafficSLO struct {
	TTFTMs *float64 `json:"ttft_ms,omitempty"`
	TBTMs  *float64 `json:"tbt_ms,omitempty"`
	E2EMs  *float64 `json:"e2e_ms,omitempty"`
}

// Met reports whether request r met every limit of s
// (docs/method.md#goodput): it finished, and its own TTFT, mean time
// between tokens (0 for a request of one token) and e2e latency are each
// at most the limit. A nil s only asks that it finished.
func (s *TrafficSLO) Met(r *RequestRecord) bool {
	if r.Status != RequestFinished {
		return false
	}
	if s == nil {
		return true
	}
	ttft, tbt := 0.0, 0.0
	if r.TTFTMs != nil {
		ttft = *r.TTFTMs
	}
	if r.TPOTMs != nil {
		tbt = *r.TPOTMs
	}
	within := func(limit *float64, v float64) bool { return limit == nil || v <= *limit }
	return within(s.TTFTMs, ttft) && within(s.TBTMs, tbt) && within(s.E2EMs, r.E2EMs)
}

// Ref returns the reference that names this cell.
func (c *TrafficCell) Ref() vocab.CellRef {
	return vocab.CellRef{Phase: vocab.PhaseTraffic, Matrix: c.Traffic, Search: c.Search, Context: c.Context, Rate: c.Rate, Concurrency: c.Concurrency}
}

func trafficField[T number](f func(*TrafficCell) *T) cellField {
	return cellField{traffic: func(c *TrafficCell) slot { return slotOf(f(c)) }, integer: isInteger[T]()}
}

// trafficLatency is a traffic cell's latency statistic: measured only when
// at least one request completed in the window (e2e, TBT and goodput are
// over completed requests; a cell without one keeps 0 in the field).
func trafficLatency(f func(*TrafficCell) *float64) cellField {
	field := trafficField(f)
	field.measuredIn = func(c *TrafficCell) bool { return c.Completed > 0 }
	return field
}

// trafficShare is a traffic cell's share of its launched requests: measured
// only when the window launched at least one.
func trafficShare(f func(*TrafficCell) *float64) cellField {
	field := trafficField(f)
	field.measuredIn = func(c *TrafficCell) bool { return c.Launched > 0 }
	return field
}
