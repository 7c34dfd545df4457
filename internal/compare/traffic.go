package compare

import (
	"fmt"
	"strings"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// trafficMetrics are what a traffic line sets side by side: the rate the
// server kept up, the share of it meeting the SLO, and the latencies a
// team's SLO is written in.
var trafficMetrics = []string{metric.AchievedRPS, metric.GoodputRPS, metric.TTFTMsP99, metric.E2EMs, metric.TBTMs}

// TrafficNote is the line heading Traffic's lines: why they never gate.
const TrafficNote = "traffic cells (one window each, not repeated: informs, never gates; docs/method.md#comparing-traffic):"

// Traffic lines up the traffic cells of a and b by their key (the traffic
// label, the context when the block has one, and the rate or concurrency:
// vocab.CellRef) and returns one line per key either run recorded, in a's
// order, then b's new ones. A traffic cell is one window of one boot, never
// repeated, so there is no interval to decide a change with: a line shows
// each side's values and Δ, and nothing here is a verdict
// (docs/method.md#comparing-traffic).
func Traffic(a, b *result.Results) []string {
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
	var out []string
	for _, ref := range order {
		ca, _ := a.TrafficCell(ref)
		cb, _ := b.TrafficCell(ref)
		out = append(out, ref.Name()+": "+trafficLine(ca, cb))
	}
	return out
}

// trafficLine is what one key's cells say: each metric A → B with Δ when
// both measured, else which side has what.
func trafficLine(a, b *result.TrafficCell) string {
	switch {
	case a == nil:
		return "only B (no baseline cell): " + statusText(b)
	case b == nil:
		return "only A (not measured by B): " + statusText(a)
	case !a.Status.Measured() || !b.Status.Measured():
		return statusText(a) + " → " + statusText(b)
	}
	// A side that completed nothing has no latencies (its zeros are not
	// fast requests): only the rates are set side by side then.
	latencies := a.Completed > 0 && b.Completed > 0
	var parts []string
	for _, name := range trafficMetrics {
		m := metric.Must(vocab.PhaseTraffic, name)
		if m.Unit == "ms" && !latencies {
			continue
		}
		va, okA := a.Value(m)
		vb, okB := b.Value(m)
		if !okA || !okB {
			continue
		}
		p := fmt.Sprintf("%s %s → %s", name, numfmt.Value(va), numfmt.Value(vb))
		if m.Unit != "" {
			p += " " + m.Unit
		}
		if va != 0 {
			p += " (" + numfmt.Delta((vb-va)/va) + ")"
		}
		parts = append(parts, p)
	}
	line := strings.Join(parts, ", ")
	if !latencies {
		line += fmt.Sprintf(" (completed %d → %d: no latencies to compare)", a.Completed, b.Completed)
	}
	// A named workload is not among the compared settings (only the
	// unnamed one's record is): what the cells sent is said when it differs.
	if a.Workload != b.Workload || a.Prompts != b.Prompts {
		line += fmt.Sprintf(" (sent differently: %s → %s)", sentText(a), sentText(b))
	}
	return line
}

// statusText is a traffic cell's status and, when it has numbers, none
// of them: "valid", "error: stream stalled".
func statusText(c *result.TrafficCell) string {
	if c.Reason != "" {
		return string(c.Status) + ": " + c.Reason
	}
	return string(c.Status)
}

// sentText is what a traffic cell sent: `workload "replay", raw text on
// /v1/completions, untemplated`, or "the unnamed workload".
func sentText(c *result.TrafficCell) string {
	if c.Workload == "" {
		return "the unnamed workload"
	}
	return fmt.Sprintf("workload %q, %s", c.Workload, c.Prompts)
}
