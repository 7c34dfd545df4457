package e2e

import (
	"math"
	"path/filepath"
	"testing"
	"time"
)

// TestAgenticReplay replays the agentic fixture (two sessions of 200 ms
// calls of 10 tokens, tool batches of 300, 500 and 250 ms) on the
// simulator set as fast as the trace's server (a prefill of well under a
// millisecond, then decode steps of 21 ms: about 200 ms a call): at speed
// 1 each session lasts its recorded server and tool time within 10 %
// (1409 ms for 1400, 632 for 650), the cell ends with the trace (not its
// 2 s window), and the simulator's prefix cache serves each session's
// later calls from its earlier prompts exactly as the trace recorded, in
// whole 16-token blocks (704 and 192 tokens;
// --enable-prompt-tokens-details reports them). About 1.8 s of wall time.
func TestAgenticReplay(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	data, err := filepath.Abs(filepath.Join("..", "testdata", "datasets", "agent.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	spec := writeSpec(t, freePort(t), `"--sim-prefill-tps", "1000000", "--sim-tbt", "21ms", "--enable-prompt-tokens-details"`, `
workload "agent" {
  dataset = "`+data+`"
}

traffic "agentic" {
  workload = "agent"
  arrivals = "trace"
  warmup   = "0s"
  duration = "2s"
}
`)
	out := filepath.Join(t.TempDir(), "out")
	start := time.Now()
	r := slogate(t, mark, 3*time.Minute, "", nil, "run", "-sim", "-out", out, spec)
	t.Logf("slogate run took %s", time.Since(start).Round(time.Millisecond))
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	res := readResults(t, out)
	if len(res.Traffic) != 1 || len(res.Traffic[0].Sessions) != 2 {
		t.Fatalf("traffic cells %+v, want one with the trace's 2 sessions", res.Traffic)
	}
	c := res.Traffic[0]
	if c.Launched != 5 || c.Completed != 5 || c.MeasuredS > 1.9 {
		t.Errorf("cell: %d launched, %d completed, %g s measured; want the 5 calls, ended with the trace (1.4 s)", c.Launched, c.Completed, c.MeasuredS)
	}
	for _, s := range c.Sessions {
		cached := int64(-1)
		if s.CachedTokens != nil {
			cached = *s.CachedTokens
		}
		t.Logf("%s: %g ms (recorded %g), server %g ms (%g), tools %g ms (%g), TTFT %v ms, cached %v (recorded %d) of %d",
			s.Session, s.DurationMs, s.RecordedMs, s.ServerMs, s.RecordedServerMs, s.ToolMs, s.RecordedToolMs, s.TTFTMs, cached, s.RecordedCachedTokens, s.PromptTokens)
		if !s.Complete() {
			t.Errorf("session %s: %d of %d calls; want all", s.Session, s.Completed, s.Calls)
		}
		// The tool batches are the client's own waits: held within 10 %
		// whatever the load.
		if math.Abs(s.ToolMs/s.RecordedToolMs-1) > 0.10 {
			t.Errorf("session %s: tools %g ms for the recorded %g; want within 10 %%", s.Session, s.ToolMs, s.RecordedToolMs)
		}
		// The session's duration matches the trace's where the server was
		// as fast as the trace's (its time within 5 % of the recorded). A
		// machine loaded past its cores slows the simulator: then the
		// tools' check above is what the replay owns, and this is logged.
		switch {
		case math.Abs(s.ServerMs/s.RecordedServerMs-1) > 0.05:
			t.Logf("session %s: the server took %g ms for the recorded %g (load average %.1f): its duration not held", s.Session, s.ServerMs, s.RecordedServerMs, loadAverage())
		case math.Abs(s.DurationRatio()-1) > 0.10:
			t.Errorf("session %s: %g ms for the recorded %g; want within 10 %%", s.Session, s.DurationMs, s.RecordedMs)
		}
		if s.CachedTokens == nil || *s.CachedTokens != s.RecordedCachedTokens {
			t.Errorf("session %s: cached tokens %v, want the %d the trace recorded (the simulator's prefix cache serving its later calls)", s.Session, s.CachedTokens, s.RecordedCachedTokens)
		}
	}
}
