package views

import (
	"fmt"
	"strings"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/numfmt"
)

// KVReadText words how the engine read the KV capacity (engine.KVRead),
// for the server line's "KV cache N tokens (from SOURCE: …)": "GET
// /props: 2 slots × 2048 tokens", "engine 0: GPU KV cache size 425,424;
// engine 1: …", "DP0: 454112 tokens"; "" for the zero KVRead, and an
// unknown rule as its code.
func KVReadText(r engine.KVRead) string {
	switch r.Rule {
	case "":
		return ""
	case engine.KVSlots:
		slots := fmt.Sprintf("%d slots", r.Count)
		if r.Count == 1 {
			slots = "1 slot"
		}
		return fmt.Sprintf("%s: %s × %d tokens", r.From, slots, r.Tokens)
	case engine.KVUnifiedPool:
		return fmt.Sprintf("%s: one unified pool of %d tokens shared by %d slots (kv_unified 'true' in server.log)", r.From, r.Tokens, r.Count)
	case engine.KVRankCapacity:
		return fmt.Sprintf("%s: token_capacity of %d DP rank(s)", r.From, r.Count)
	case engine.KVMaxTotalTimesDP:
		return fmt.Sprintf("%s: max_total_num_tokens %d × dp_size %d", r.From, r.Tokens, r.Count)
	case engine.KVLogParts:
		parts := make([]string, len(r.Parts))
		for i, p := range r.Parts {
			parts[i] = kvPartText(p)
		}
		s := strings.Join(parts, "; ")
		if r.Engines > 0 {
			s += fmt.Sprintf("; × %d/%d engines (assumed alike)", r.Engines, r.Found)
		}
		return s
	}
	return string(r.Rule)
}

// kvPartText words one engine's or DP rank's reading of a log
// (engine.KVPart): "engine 0: concurrency 3.5x × 32,768", "DP1: 161488
// tokens".
func kvPartText(p engine.KVPart) string {
	switch p.Rule {
	case engine.KVSizeLine:
		return fmt.Sprintf("engine %d: GPU KV cache size %s", p.Index, numfmt.Int(p.Tokens))
	case engine.KVConcurrency:
		return fmt.Sprintf("engine %d: concurrency %gx × %s", p.Index, p.Concurrency, numfmt.Int(p.PerRequest))
	case engine.KVConcurrencyNoSize:
		return fmt.Sprintf("engine %d: concurrency %gx × %s (no size line)", p.Index, p.Concurrency, numfmt.Int(p.PerRequest))
	case engine.KVRankTokens:
		s := fmt.Sprintf("DP%d: %d tokens", p.Index, p.Tokens)
		if p.Draft > 0 {
			s += fmt.Sprintf(" (the target's pool, the first; a later pool of %d tokens is a draft model's)", p.Draft)
		}
		return s
	}
	return string(p.Rule)
}
