package vocab

// KV capacity sources, in the order they are tried
// (docs/method.md#kv-capacity): the engines give one with their KV
// capacity, and result.Server.KVCacheSource records it.
const (
	// KVSourceSpec: the spec's kv_cache_tokens.
	KVSourceSpec = "spec"
	// KVSourceMetrics: the engine's metrics (vLLM's cache config metric's
	// kv_cache_size_tokens × engines; SGLang's token capacity gauge
	// summed over dp_rank).
	KVSourceMetrics = "metrics"
	// KVSourceLog: the KV lines of the server's log, summed over engines
	// or ranks.
	KVSourceLog = "log"
	// KVSourceMetricsEstimate: num_gpu_blocks × block_size, wrong for
	// hybrid models.
	KVSourceMetricsEstimate = "metrics-estimate"
	// KVSourceServerInfo: SGLang's GET /server_info, each data-parallel
	// rank's token_capacity summed (docs/sglang.md#server-info).
	KVSourceServerInfo = "server_info"
	// KVSourceProps: llama-server's GET /props, total_slots × a slot's
	// n_ctx (one slot's n_ctx for a unified pool; docs/llamacpp.md#kv-capacity).
	KVSourceProps = "props"
)
