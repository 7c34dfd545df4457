package result

// AgentSession is what a traffic cell measured of one agentic session
// (docs/spec.md#agentic-sessions): its calls sent one after the
// other, each once the previous one was answered and its recorded tool
// batch (÷ the workload's speed) had passed, beside what the trace
// recorded of it.
type AgentSession struct {
	// Session is the trace's session_id.
	Session string `json:"session"`
	// Calls is how many calls the trace holds for the session, Sent how
	// many the cell sent, Completed how many finished; the session is
	// complete when all its calls finished.
	Calls     int `json:"calls"`
	Sent      int `json:"sent"`
	Completed int `json:"completed"`
	// DurationMs is the session's time from its first call's send to its
	// last call's end; ServerMs the part its calls spent waiting on the
	// server (each call's send to its end), ToolMs the part spent on tool
	// batches (between a call's end and the next call's send). Measured
	// only over the calls sent.
	DurationMs float64 `json:"duration_ms"`
	ServerMs   float64 `json:"server_ms"`
	ToolMs     float64 `json:"tool_ms"`
	// RecordedMs, RecordedServerMs and RecordedToolMs are the same as the
	// trace recorded them, over the calls sent, the tool batches ÷ the
	// workload's speed (at speed 1, as recorded).
	RecordedMs       float64 `json:"recorded_ms"`
	RecordedServerMs float64 `json:"recorded_server_ms"`
	RecordedToolMs   float64 `json:"recorded_tool_ms"`
	// TTFTMs is each call's time to first token, by its position in the
	// session (-1: no token came).
	TTFTMs []float64 `json:"ttft_ms"`
	// PromptTokens is the session's prompt tokens sent; CachedTokens the
	// part the server reported served from its prefix cache (nil when it
	// reported none: an engine without prompt_tokens_details), and
	// RecordedCachedTokens the part the trace's server did.
	PromptTokens         int64  `json:"prompt_tokens"`
	CachedTokens         *int64 `json:"cached_tokens,omitempty"`
	RecordedCachedTokens int64  `json:"recorded_cached_tokens"`
}

// Complete reports whether all the session's calls were sent and
// finished.
func (s AgentSession) Complete() bool { return s.Calls > 0 && s.Completed == s.Calls }

// DurationRatio is the session's measured duration ÷ its recorded one (1:
// as recorded), 0 when nothing was recorded.
func (s AgentSession) DurationRatio() float64 {
	if s.RecordedMs <= 0 {
		return 0
	}
	return s.DurationMs / s.RecordedMs
}
