package spec

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentTraceDiagnostics: an agentic trace's problems are diagnostics
// at the trace's own line (a missing field, calls out of order), and it
// takes speed as the other traces do.
func TestAgentTraceDiagnostics(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{name: "missing field", body: `workload "a" { dataset = "DATA/bad/agent_missing_field.jsonl" }`,
			want: `agent_missing_field.jsonl:2,1-101: Invalid trace; copilot-agent: no "duration_ms" field`},
		{name: "calls out of order", body: `workload "a" { dataset = "DATA/bad/agent_out_of_order.jsonl" }`,
			want: `agent_out_of_order.jsonl:3,1-121: Invalid trace; copilot-agent: the call starts at 150 ms, before session "s-a"'s previous call (line 1) ended at 200 ms`},
		{name: "format mismatch", body: `workload "a" {
  dataset = "DATA/agent.jsonl"
  format  = "mooncake"
}`, want: `format is "mooncake", but the first line has the fields of format copilot-agent`},
	}
	data, err := filepath.Abs("../../testdata/datasets")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadTraceSpec(t, strings.ReplaceAll(tc.body, "DATA", data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v; want a diagnostic saying %q", err, tc.want)
			}
		})
	}
	t.Run("speed", func(t *testing.T) {
		s, err := loadTraceSpec(t, strings.ReplaceAll(`workload "a" {
  dataset = "DATA/agent.jsonl.gz"
  speed   = 2
}`, "DATA", data))
		if err != nil {
			t.Fatal(err)
		}
		if w := s.NamedWorkload("a"); w == nil || w.Trace.Speed != 2 || !w.IsTrace() {
			t.Errorf("workload %+v, want an agentic trace at speed 2", w)
		}
	})
}
