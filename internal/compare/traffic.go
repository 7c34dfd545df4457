package compare

import (
	"math"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// trafficMetrics are what a traffic comparison sets side by side: the rate
// the server kept up, the share of it meeting the SLO, and the latencies a
// team's SLO is written in.
var trafficMetrics = []string{metric.AchievedRPS, metric.GoodputRPS, metric.TTFTMsP99, metric.E2EMs, metric.TBTMs}

// TrafficPair is one traffic key's cells side by side. A traffic cell is
// one window of one boot, never repeated, so there is no interval to decide
// a change with: it shows each side's values and Δ, and nothing here is a
// verdict (docs/method.md#comparing-traffic).
type TrafficPair struct {
	Ref vocab.CellRef
	// A and B are the cells; nil when that run has no such cell.
	A, B *result.TrafficCell
	// Values are the metrics both measured, in trafficMetrics' order; the
	// latencies only when both sides completed a request (Latencies).
	Values    []TrafficValue
	Latencies bool
	// SentDiffers: the cells sent a different named workload or prompt
	// form (a named workload is not among the compared settings).
	SentDiffers bool
}

// Measured reports whether both sides have a measured cell (Values are set).
func (p *TrafficPair) Measured() bool {
	return p.A != nil && p.B != nil && p.A.Status.Measured() && p.B.Status.Measured()
}

// TrafficValue is one metric of a traffic pair.
type TrafficValue struct {
	Metric metric.Metric
	A, B   float64
	// Delta is (B − A) ÷ A; NaN when A is 0.
	Delta float64
}

// Traffic lines up the traffic cells of a and b by their key (the traffic
// label, the context when the block has one, and the rate or concurrency:
// vocab.CellRef) and returns one pair per key either run recorded, in a's
// order, then b's new ones.
func Traffic(a, b *result.Results) []TrafficPair {
	var order []vocab.CellRef
	seen := map[vocab.CellRef]bool{}
	for _, r := range []*result.Results{a, b} {
		for i := range r.Traffic {
			if ref := r.Traffic[i].Ref(); !seen[ref] {
				seen[ref] = true
				order = append(order, ref)
			}
		}
	}
	var out []TrafficPair
	for _, ref := range order {
		ca, _ := a.TrafficCell(ref)
		cb, _ := b.TrafficCell(ref)
		out = append(out, trafficPair(ref, ca, cb))
	}
	return out
}

// trafficPair sets one key's cells side by side: each metric A → B with Δ
// when both measured.
func trafficPair(ref vocab.CellRef, a, b *result.TrafficCell) TrafficPair {
	p := TrafficPair{Ref: ref, A: a, B: b}
	if !p.Measured() {
		return p
	}
	// A side that completed nothing has no latencies (its zeros are not
	// fast requests): only the rates are set side by side then.
	p.Latencies = a.Completed > 0 && b.Completed > 0
	for _, name := range trafficMetrics {
		m := metric.Must(vocab.PhaseTraffic, name)
		if m.Unit == "ms" && !p.Latencies {
			continue
		}
		va, okA := a.Value(m)
		vb, okB := b.Value(m)
		if !okA || !okB {
			continue
		}
		v := TrafficValue{Metric: m, A: va, B: vb, Delta: math.NaN()}
		if va != 0 {
			v.Delta = (vb - va) / va
		}
		p.Values = append(p.Values, v)
	}
	p.SentDiffers = a.Workload != b.Workload || a.Prompts != b.Prompts
	return p
}
