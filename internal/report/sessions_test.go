package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestSessionTable: a block over an agentic trace gets a table of its
// sessions after its Traffic table, each measured time beside the
// trace's, an incomplete session's calls counted, and a server that
// reports no cached tokens a dash; a block without sessions gets none.
func TestSessionTable(t *testing.T) {
	cached := int64(704)
	tests := []struct {
		name     string
		sessions []result.AgentSession
		want     [][]string
	}{
		{name: "no sessions"},
		{name: "two sessions", sessions: []result.AgentSession{
			{Session: "s-a", Calls: 3, Sent: 3, Completed: 3, DurationMs: 1407, RecordedMs: 1400, ServerMs: 605.9, RecordedServerMs: 600,
				ToolMs: 801.1, RecordedToolMs: 800, TTFTMs: []float64{101.3, 101.8, 101.1}, PromptTokens: 1280, CachedTokens: &cached, RecordedCachedTokens: 704},
			{Session: "s-b", Calls: 2, Sent: 2, Completed: 1, DurationMs: 653, RecordedMs: 650, ServerMs: 402.6, RecordedServerMs: 400,
				ToolMs: 250.3, RecordedToolMs: 250, TTFTMs: []float64{100.9, -1}, PromptTokens: 510, RecordedCachedTokens: 192}},
			want: [][]string{
				{"2", "s-a", "3", "1,407", "1,400", "606", "600", "801", "800", "101, 102, 101", "704", "704"},
				{"2", "s-b", "1 of 2", "653", "650", "403", "400", "250", "250", "101, —", "—", "192"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := result.TrafficCell{Traffic: "agentic", Rate: 2, Arrivals: vocab.ArrivalsPoisson, Status: vocab.StatusValid,
				Launched: 5, Completed: 5, MeasuredS: 2, Sessions: tt.sessions}
			tables := trafficTables(newTrafficBlocks(&result.Results{Server: result.Server{Name: "qwen"}, Traffic: []result.TrafficCell{c}}))
			if tt.want == nil {
				if len(tables) != 1 {
					t.Fatalf("%d tables, want the Traffic table alone", len(tables))
				}
				return
			}
			if len(tables) != 2 || !strings.HasSuffix(tables[1].Title(), ": agentic sessions") {
				var titles []string
				for _, tb := range tables {
					titles = append(titles, tb.Title())
				}
				t.Fatalf("tables %q, want the Traffic table and the sessions'", titles)
			}
			if diff := cmp.Diff(tt.want, tables[1].Rows()); diff != "" {
				t.Errorf("session rows (-want +got):\n%s", diff)
			}
		})
	}
}
