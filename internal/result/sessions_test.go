package result

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAgentSessionJSON: a traffic cell's sessions round-trip through
// results.json with their figures, a server that reported no cached tokens
// leaving cached_tokens out; a cell without sessions writes no key.
func TestAgentSessionJSON(t *testing.T) {
	cached := int64(704)
	tests := []struct {
		name     string
		cell     TrafficCell
		complete []bool
		ratios   []float64
		key      bool
	}{
		{name: "no sessions", cell: TrafficCell{Traffic: "steady"}},
		{name: "two sessions", key: true, complete: []bool{true, false}, ratios: []float64{1.005, 0},
			cell: TrafficCell{Traffic: "agentic", Sessions: []AgentSession{
				{Session: "s-a", Calls: 3, Sent: 3, Completed: 3, DurationMs: 1407, RecordedMs: 1400, ServerMs: 606, RecordedServerMs: 600,
					ToolMs: 801, RecordedToolMs: 800, TTFTMs: []float64{101, 102, -1}, PromptTokens: 1280, CachedTokens: &cached, RecordedCachedTokens: 704},
				{Session: "s-b", Calls: 2, Sent: 1, Completed: 1, DurationMs: 200, TTFTMs: []float64{101}, PromptTokens: 200},
			}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.cell)
			if err != nil {
				t.Fatal(err)
			}
			var raw map[string]json.RawMessage
			if err := json.Unmarshal(b, &raw); err != nil {
				t.Fatal(err)
			}
			if _, ok := raw["sessions"]; ok != tt.key {
				t.Errorf("sessions key written: %v, want %v (%s)", ok, tt.key, b)
			}
			var back TrafficCell
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.cell.Sessions, back.Sessions); diff != "" {
				t.Errorf("sessions after a round trip (-want +got):\n%s", diff)
			}
			for i, s := range back.Sessions {
				if s.Complete() != tt.complete[i] || s.DurationRatio() != tt.ratios[i] {
					t.Errorf("%s: complete %v, ratio %g; want %v, %g", s.Session, s.Complete(), s.DurationRatio(), tt.complete[i], tt.ratios[i])
				}
			}
		})
	}
}
