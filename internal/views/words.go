package views

import (
	"fmt"
	"strings"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/engine/registry"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// FindingText is a lost or errored cell in words: "decode/ctx=8K/conc=64:
// lost: over capacity (was 6,018.4 tok/s); 64 × (8192 + 256) = 540672
// tokens > KV cache 500000 tokens".
func FindingText(f compare.Finding) string {
	s := f.Ref.Name() + ": " + findingReason(f)
	if f.B.Reason != "" && f.Change == compare.Lost {
		s += "; " + f.B.Reason
	}
	return s
}

// findingReason is the decision about a lost or errored cell in words,
// with A's value of the first metric compared: "lost: over capacity (was
// 6,018.4 tok/s)", "error: stream stalled (was 6,018.4 tok/s)".
func findingReason(f compare.Finding) string {
	was := "was " + numfmt.Fixed(f.Was, f.Metric.Precision)
	if f.Metric.Unit != "" {
		was += " " + f.Metric.Unit
	}
	if f.Change == compare.Errored {
		return fmt.Sprintf("error: %s (%s)", orDefault(f.B.Reason, "not measured"), was)
	}
	var why string
	switch {
	case !f.B.Present:
		why = "not measured"
	case f.B.Status == vocab.StatusOverCapacity:
		why = "over capacity"
	default:
		why = strings.ReplaceAll(string(f.B.Status), "_", " ")
		if why == "" {
			why = "not run"
		}
	}
	return fmt.Sprintf("lost: %s (%s)", why, was)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// MethodNote is one sentence on how the decisions were made, for the end
// of a diff: statistical at α, or not, and then how many repeats would make
// them so. "" when no cell was measured on both sides.
func MethodNote(m compare.Method) string {
	alpha := "α = " + numfmt.Shortest(m.Alpha)
	switch {
	case m.Tested+m.Untested == 0:
		return ""
	case m.Untested == 0:
		return fmt.Sprintf("Decisions are statistical: every cell's change has Hodges–Lehmann bounds, each one-sided at %s confidence or more (%s, the level %d+%d repeats attain); within tolerance means the worse bound is inside it, inconclusive that the bounds straddle its edge.",
			confidenceText(m.Confidence), alpha, m.SizeA, m.SizeB)
	}
	runs := func(n int) string {
		if n == 1 {
			return "1 run"
		}
		return fmt.Sprintf("%d runs", n)
	}
	var s strings.Builder
	if m.Tested > 0 {
		fmt.Fprintf(&s, "%d of %d cell metrics were decided by the tolerance alone, not statistically", m.Untested, m.Tested+m.Untested)
	} else {
		s.WriteString("Decisions are not statistical: the tolerance alone decided")
	}
	fmt.Fprintf(&s, " (%s per cell in A, %s in B: too few to attain %s)", runs(m.RepeatsA), runs(m.RepeatsB), alpha)
	if m.RepeatsNeeded > 0 {
		fmt.Fprintf(&s, "; measure.repeat = %d on both runs is the least that gives each cell an interval of its change at %s (docs/ci.md#sizing-repeats-and-tolerance says how many the noise needs).", m.RepeatsNeeded, alpha)
	} else {
		fmt.Fprintf(&s, "; no measure.repeat up to 50 gives an interval at %s.", alpha)
	}
	return s.String()
}

// JoinDifferences joins the differences' "setting: a → b" with sep.
func JoinDifferences(ds []compare.Difference, sep string) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, d.String())
	}
	return strings.Join(parts, sep)
}

// ServerHeader is the server differences on one line, or "" when there are
// none: "vLLM 0.26.1 → 0.27.2; --max-num-seqs 32 → 64".
func ServerHeader(diffs []compare.Difference) string {
	var parts []string
	for _, d := range diffs {
		parts = append(parts, d.Short())
	}
	return strings.Join(parts, "; ")
}

// EngineNote says that a comparison across engines informs only.
func EngineNote(c *compare.Comparison) string {
	return fmt.Sprintf("engines differ (%s → %s): the comparison informs; it gates only against a run of the same engine (docs/method.md#comparing-engines)",
		registry.Title(c.A.Server.EngineName()), registry.Title(c.B.Server.EngineName()))
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
