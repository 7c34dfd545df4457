package report

import (
	"strconv"

	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
)

// sessionTable is an agentic block's table of sessions, after its
// Traffic tables: one row per session of each cell, its measured times
// beside the trace's (docs/spec.md#agentic-sessions); ok is false for a
// block without sessions.
func sessionTable(title, load string, b trafficBlock) (trafficTable, bool) {
	t := trafficTable{Title: title + ": agentic sessions",
		Header: []string{load, "Session", "Calls", "Duration (ms)", "Recorded (ms)", "Server (ms)", "Recorded server (ms)", "Tools (ms)", "Recorded tools (ms)", "TTFT by call (ms)", "Cached tokens", "Recorded cached"},
		Intro: "each session's calls sent one after the other, each when the previous one was answered and its recorded tool batch (÷ speed) had passed; " +
			"its duration, the time waiting on the server and on tools, each beside the trace's, and the prompt tokens the server's prefix cache served"}
	for i, c := range b.Cells {
		for _, s := range c.Sessions {
			t.Rows = append(t.Rows, sessionRow(b.Loads[i], s))
		}
	}
	return t, len(t.Rows) > 0
}

// sessionRow is one session's row of sessionTable.
func sessionRow(load string, s result.AgentSession) []string {
	calls := strconv.Itoa(s.Calls)
	if !s.Complete() {
		calls = strconv.Itoa(s.Completed) + " of " + calls
	}
	ttft := numfmt.List(s.TTFTMs, func(v float64) string {
		if v < 0 {
			return dash
		}
		return numfmt.Fixed(v, 0)
	})
	cached := dash
	if s.CachedTokens != nil {
		cached = numfmt.Int(*s.CachedTokens)
	}
	return []string{load, s.Session, calls, numfmt.Fixed(s.DurationMs, 0), numfmt.Fixed(s.RecordedMs, 0),
		numfmt.Fixed(s.ServerMs, 0), numfmt.Fixed(s.RecordedServerMs, 0), numfmt.Fixed(s.ToolMs, 0), numfmt.Fixed(s.RecordedToolMs, 0),
		ttft, cached, numfmt.Int(s.RecordedCachedTokens)}
}
