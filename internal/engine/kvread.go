package engine

// KVRead is how an engine read the KV cache capacity it states, which the
// console's server line words (views): the Rule it went by, where it read
// it (From: "GET /props", server_info's path; "" for a log read engine by
// engine or rank by rank) and the figures, with one Part per engine or
// DP rank for a log. The zero KVRead adds nothing to the capacity's
// source.
type KVRead struct {
	Rule KVReadRule
	From string
	// Tokens and Count are llama.cpp's tokens a slot and its slots
	// (KVUnifiedPool: the pool's tokens and the slots sharing it), or
	// SGLang's max_total_num_tokens and dp_size (KVMaxTotalTimesDP), or
	// the DP ranks whose token_capacity was summed (KVRankCapacity).
	Tokens, Count int64
	// Parts are a log's reading, engine by engine (vLLM) or rank by rank
	// (SGLang).
	Parts []KVPart
	// Engines and Found: the data-parallel engines, when the log had KV
	// lines for only Found of them and the rest are taken as alike (vLLM);
	// 0 otherwise.
	Engines, Found int
}

// KVReadRule names how an engine read its KV capacity (KVRead).
type KVReadRule string

// The ways the engines read their KV capacity (docs/method.md#kv-capacity).
const (
	// KVSlots: llama.cpp's slots, each with KV of its own: Count slots ×
	// Tokens.
	KVSlots KVReadRule = "slots"
	// KVUnifiedPool: llama.cpp's slots share one unified pool of Tokens
	// (kv_unified 'true' in server.log), Count slots.
	KVUnifiedPool KVReadRule = "unified_pool"
	// KVRankCapacity: SGLang's token_capacity of Count DP ranks, summed.
	KVRankCapacity KVReadRule = "rank_capacity"
	// KVMaxTotalTimesDP: SGLang's max_total_num_tokens Tokens × dp_size
	// Count.
	KVMaxTotalTimesDP KVReadRule = "max_total_times_dp"
	// KVLogParts: the log's KV lines, one Part per engine or DP rank.
	KVLogParts KVReadRule = "log_parts"
)

// KVPart is one engine's or DP rank's KV capacity as a log states it
// (KVRead.Parts).
type KVPart struct {
	Rule KVPartRule
	// Index is the engine (vLLM's EngineCore_DP<i>) or the DP rank.
	Index int
	// Tokens is the size line's (KVSizeLine) or the rank's (KVRankTokens).
	Tokens int64
	// Concurrency and PerRequest are vLLM's "Maximum concurrency for
	// PerRequest tokens per request: Concurrency x".
	Concurrency float64
	PerRequest  int64
	// Draft is, for an SGLang rank, a later pool's tokens that differ
	// from the first's: a draft model's (0: none).
	Draft int64
}

// KVPartRule names how one engine's or rank's capacity was read (KVPart).
type KVPartRule string

// The ways one engine's or rank's capacity is read from a log.
const (
	// KVSizeLine: vLLM's "GPU KV cache size: N tokens".
	KVSizeLine KVPartRule = "size_line"
	// KVConcurrency: vLLM's concurrency × tokens per request, where it
	// disagrees with the size line.
	KVConcurrency KVPartRule = "concurrency"
	// KVConcurrencyNoSize: vLLM's concurrency × tokens per request, with
	// no size line.
	KVConcurrencyNoSize KVPartRule = "concurrency_no_size"
	// KVRankTokens: an SGLang DP rank's tokens (its first pool, the
	// SWAKVPool's full pool, or the summary line).
	KVRankTokens KVPartRule = "rank_tokens"
)
