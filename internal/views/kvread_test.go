package views

import (
	"testing"

	"github.com/slogate/slogate/internal/engine"
)

// TestKVReadText: how each engine read its KV capacity, in full.
func TestKVReadText(t *testing.T) {
	props := "GET /props (total_slots × default_generation_settings.n_ctx)"
	tests := []struct {
		name string
		read engine.KVRead
		want string
	}{
		{name: "nothing more than the source", want: ""},
		{name: "llama.cpp, separate slots", read: engine.KVRead{Rule: engine.KVSlots, From: props, Tokens: 2048, Count: 2},
			want: "GET /props (total_slots × default_generation_settings.n_ctx): 2 slots × 2048 tokens"},
		{name: "llama.cpp, one slot", read: engine.KVRead{Rule: engine.KVSlots, From: "server.log (n_slots × n_ctx_slot)", Tokens: 4096, Count: 1},
			want: "server.log (n_slots × n_ctx_slot): 1 slot × 4096 tokens"},
		{name: "llama.cpp, a unified pool", read: engine.KVRead{Rule: engine.KVUnifiedPool, From: props, Tokens: 8192, Count: 4},
			want: "GET /props (total_slots × default_generation_settings.n_ctx): one unified pool of 8192 tokens shared by 4 slots (kv_unified 'true' in server.log)"},
		{name: "SGLang, token_capacity", read: engine.KVRead{Rule: engine.KVRankCapacity, From: "GET /server_info", Count: 2},
			want: "GET /server_info: token_capacity of 2 DP rank(s)"},
		{name: "SGLang, max_total_num_tokens × dp_size", read: engine.KVRead{Rule: engine.KVMaxTotalTimesDP, From: "GET /server_info", Tokens: 500, Count: 2},
			want: "GET /server_info: max_total_num_tokens 500 × dp_size 2"},
		{name: "SGLang's log, rank by rank, a draft pool named", read: engine.KVRead{Rule: engine.KVLogParts, Parts: []engine.KVPart{
			{Rule: engine.KVRankTokens, Tokens: 56320, Draft: 70656}, {Rule: engine.KVRankTokens, Index: 1, Tokens: 1230416}}},
			want: "DP0: 56320 tokens (the target's pool, the first; a later pool of 70656 tokens is a draft model's); DP1: 1230416 tokens"},
		{name: "vLLM's log, each way an engine is read", read: engine.KVRead{Rule: engine.KVLogParts, Parts: []engine.KVPart{
			{Rule: engine.KVSizeLine, Tokens: 425424},
			{Rule: engine.KVConcurrency, Index: 1, Concurrency: 33.04, PerRequest: 32768},
			{Rule: engine.KVConcurrencyNoSize, Index: 2, Concurrency: 1.56, PerRequest: 20000}}},
			want: "engine 0: GPU KV cache size 425,424; engine 1: concurrency 33.04x × 32,768; engine 2: concurrency 1.56x × 20,000 (no size line)"},
		{name: "vLLM's log, engines taken as alike", read: engine.KVRead{Rule: engine.KVLogParts, Parts: []engine.KVPart{{Rule: engine.KVSizeLine, Tokens: 160784}}, Engines: 2, Found: 1},
			want: "engine 0: GPU KV cache size 160,784; × 2/1 engines (assumed alike)"},
		{name: "an unknown rule", read: engine.KVRead{Rule: "later"}, want: "later"},
		{name: "an unknown part", read: engine.KVRead{Rule: engine.KVLogParts, Parts: []engine.KVPart{{Rule: "later"}}}, want: "later"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := KVReadText(tt.read); got != tt.want {
				t.Errorf("KVReadText = %q\nwant %q", got, tt.want)
			}
		})
	}
}
