package metric

// The names of the metrics of Table, as specs, results.json and the
// command line spell them. Code outside the table names a metric by one of
// these, never by a string literal, so that a renamed metric is renamed
// everywhere by the compiler (TestNamesAreTheTable checks each is in
// Table).
const (
	// Prefill.
	TPS = "tps"

	// Decode (TTFT, TBT, TPOT, Completed, Rejected and MeasuredS are
	// traffic metrics too; TTFTMs a prefill one).
	TotalTPS       = "total_tps"
	PerRequestTPS  = "per_request_tps"
	TTFTMs         = "ttft_ms"
	TTFTMsP90      = "ttft_ms_p90"
	TTFTMsP99      = "ttft_ms_p99"
	TBTMs          = "tbt_ms"
	TBTMsP90       = "tbt_ms_p90"
	TBTMsP99       = "tbt_ms_p99"
	ITLMs          = "itl_ms"
	TPOTMs         = "tpot_ms"
	ActiveAvg      = "active_avg"
	Completed      = "completed"
	OutputTokens   = "output_tokens"
	Rejected       = "rejected"
	MeasuredS      = "measured_s"
	ServerTotalTPS = "server_total_tps"
	SpecAcceptRate = "spec_accept_rate"
	SpecAcceptLen  = "spec_accept_len"
	// ServerTTFTMsMean, ServerITLMsMean and ServerE2EMsMean are the means
	// of the server's own request-latency histograms over a decode window
	// (docs/method.md#server-latency): timed by the server's clock, not
	// the client's.
	ServerTTFTMsMean = "server_ttft_ms_mean"
	ServerITLMsMean  = "server_itl_ms_mean"
	ServerE2EMsMean  = "server_e2e_ms_mean"

	// Traffic.
	AchievedRPS    = "achieved_rps"
	GoodputRPS     = "goodput_rps"
	GoodputShare   = "goodput_share"
	Launched       = "launched"
	Unfinished     = "unfinished"
	E2EMs          = "e2e_ms"
	E2EMsP90       = "e2e_ms_p90"
	E2EMsP99       = "e2e_ms_p99"
	E2EMsMean      = "e2e_ms_mean"
	ConcurrencyAvg = "concurrency_avg"
	RejectedShare  = "rejected_share"
	// OutputTPS is the output tokens of a traffic window's completed
	// requests ÷ its seconds: what a search's answer is priced by.
	OutputTPS = "output_tps"
	// PrefixCacheHitRate is Δ prefix-cache hits ÷ Δ prefix-cache queries over a cell (the server's counters).
	PrefixCacheHitRate = "prefix_cache_hit_rate"
	// TTFOMs is the time to the first answer (content) token of a
	// reasoning stream, TTFT plus the reasoning phase; ReasoningTokens and
	// ContentTokens are a request's tokens of each phase, ReasoningTPS and
	// ContentTPS each phase's decode rate (docs/method.md#reasoning).
	TTFOMs          = "ttfo_ms"
	TTFOMsP90       = "ttfo_ms_p90"
	TTFOMsP99       = "ttfo_ms_p99"
	ReasoningTokens = "reasoning_tokens"
	ContentTokens   = "content_tokens"
	ReasoningTPS    = "reasoning_tps"
	ContentTPS      = "content_tps"
)

// TTFTMsTurn is the stem of the per-turn TTFTs of a traffic cell,
// ttft_ms_turn1, ttft_ms_turn2, …: a naming rule (TurnName, dist.go) like
// the percentiles', not a metric of Table.
const TTFTMsTurn = "ttft_ms_turn"
