package report

import (
	"strconv"

	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
)

// sessionTable is an agentic block's table of sessions, after its
// Traffic tables: one row per session of each cell, its measured times
// beside the trace's (docs/spec.md#agentic-sessions). trafficTables adds
// it to a block whose cells have sessions.
type sessionTable struct{ block trafficBlock }

// Title is the block's title, then what the table holds.
func (t sessionTable) Title() string { return t.block.title() + ": agentic sessions" }

// Intro is the sentence under the title.
func (t sessionTable) Intro() string {
	return "each session's calls sent one after the other, each when the previous one was answered and its recorded tool batch (÷ speed) had passed; " +
		"its duration, the time waiting on the server and on tools, each beside the trace's, and the prompt tokens the server's prefix cache served"
}

// Header is the load, then each session's columns.
func (t sessionTable) Header() []string {
	return []string{t.block.loadHeader(), "Session", "Calls", "Duration (ms)", "Recorded (ms)", "Server (ms)", "Recorded server (ms)", "Tools (ms)", "Recorded tools (ms)", "TTFT by call (ms)", "Cached tokens", "Recorded cached"}
}

// Rows are each cell's sessions, a row each (sessionRow).
func (t sessionTable) Rows() [][]string {
	var rows [][]string
	for i, c := range t.block.Cells {
		for _, s := range c.Sessions {
			rows = append(rows, sessionRow(t.block.load(i), s))
		}
	}
	return rows
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
