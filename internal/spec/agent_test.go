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
		// The spec's first 4 lines are its server block.
		{name: "agentic trace at rates", body: `workload "a" { dataset = "DATA/agent.jsonl" }
traffic "r" {
  workload = "a"
  rate     = [1, 50]
}`, want: `s.hcl:8,3-7: Agentic trace without trace arrivals; An agentic trace's sessions start at their recorded times and each call waits for the previous one and its tool batch: the trace sets the load, so traffic "r"'s rate would be ignored. Remove rate and set arrivals = "trace".`},
		{name: "agentic trace at concurrencies", body: `workload "a" { dataset = "DATA/agent.jsonl" }
traffic "r" {
  workload    = "a"
  concurrency = [8, 32]
}`, want: `s.hcl:8,3-14: Agentic trace without trace arrivals; An agentic trace's sessions start at their recorded times and each call waits for the previous one and its tool batch: the trace sets the load, so traffic "r"'s concurrency would be ignored. Remove concurrency and set arrivals = "trace".`},
		{name: "trace speed at rates", body: `workload "m" {
  dataset = "TRACES/mooncake.jsonl"
  speed   = 4
}
traffic "r" {
  workload = "m"
  rate     = [3]
}`, want: `s.hcl:7,3-8: Speed not used at these arrivals; speed scales the trace's times, which only arrivals = "trace" sends; traffic "r" sends workload "m" at its own rates ("poisson" arrivals), so speed would be ignored. Remove speed, or set arrivals = "trace" and remove rate.`},
	}
	data, err := filepath.Abs("../../testdata/datasets")
	if err != nil {
		t.Fatal(err)
	}
	traces, err := filepath.Abs("../../testdata/traces")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadTraceSpec(t, strings.NewReplacer("DATA", data, "TRACES", traces).Replace(tc.body))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v; want a diagnostic saying %q", err, tc.want)
			}
		})
	}
	t.Run("speed read by trace arrivals", func(t *testing.T) {
		// One block replays the trace at its times, the other sends its
		// requests at a rate: speed is read by the first.
		_, err := loadTraceSpec(t, strings.ReplaceAll(`workload "m" {
  dataset = "TRACES/mooncake.jsonl"
  speed   = 4
}
traffic "r" {
  workload = "m"
  rate     = [3]
}
traffic "replay" {
  workload = "m"
  arrivals = "trace"
}`, "TRACES", traces))
		if err != nil {
			t.Fatal(err)
		}
	})
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
