package e2e

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	res "github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestAgenticReplay replays the agentic fixture (two sessions of 200 ms
// calls of 10 tokens, tool batches of 300, 500 and 250 ms) on the
// simulator set as fast as the trace's server (a prefill of well under a
// millisecond, then decode steps of 21 ms: about 200 ms a call) at speed
// 1: each session's first call is sent at its recorded start and each
// later call its recorded tool batch after the previous one ended
// (checkAgenticSchedule, from requests.jsonl); each session's duration is
// logged beside its recorded server and tool time (1409 ms for 1400, 632
// for 650 on an idle machine); the cell ends with the trace (not its 2 s
// window), and the simulator's prefix cache serves each session's later
// calls from its earlier prompts exactly as the trace recorded, in whole
// 16-token blocks (704 and 192 tokens; --enable-prompt-tokens-details
// reports them). About 1.8 s of wall time.
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
		// The session's duration is its server's time plus its tools'
		// (the replay's own timing is checked below from requests.jsonl):
		// within 10 % of the recorded where the server was as fast as the
		// trace's (its time within 5 % of the recorded server time), the
		// issue's premise; logged where the machine slowed it.
		switch {
		case math.Abs(s.ServerMs/s.RecordedServerMs-1) > 0.05:
			t.Logf("session %s: %g ms for the recorded %g, the server %g ms for %g (load average %.1f): not held", s.Session, s.DurationMs, s.RecordedMs, s.ServerMs, s.RecordedServerMs, loadAverage())
		case math.Abs(s.DurationRatio()-1) > 0.10:
			t.Errorf("session %s: %g ms for the recorded %g with the server as fast as the trace's; want within 10 %%", s.Session, s.DurationMs, s.RecordedMs)
		}
		if s.CachedTokens == nil || *s.CachedTokens != s.RecordedCachedTokens {
			t.Errorf("session %s: cached tokens %v, want the %d the trace recorded (the simulator's prefix cache serving its later calls)", s.Session, s.CachedTokens, s.RecordedCachedTokens)
		}
	}
	checkAgenticSchedule(t, filepath.Join(out, "requests.jsonl"))
}

// agenticLateMs is how late past its due time a call may be sent.
const agenticLateMs = 2000.0

// checkAgenticSchedule holds the replay of the agentic fixture to its
// schedule from requests.jsonl, whatever the load: each session's first
// call planned at its recorded start (0 and 400 ms) and sent no earlier,
// each later call sent its recorded tool batch (300 and 500 ms in session
// 0, 250 in session 1) after the previous call ended, no earlier. How much
// later is the scheduler's, not the replay's: on a loaded 2-core machine a
// timer wakes up to 0.9 s late (load average 19), so that is held to
// agenticLateMs, and logged.
func checkAgenticSchedule(t *testing.T, path string) {
	t.Helper()
	recorded := []struct {
		startMs float64
		toolMs  []float64 // before each call
	}{
		{startMs: 0, toolMs: []float64{0, 300, 500}},
		{startMs: 400, toolMs: []float64{0, 250}},
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	calls := map[int][]res.RequestRecord{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec res.RequestRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Phase != vocab.PhaseTraffic || rec.Index == nil {
			continue
		}
		calls[*rec.Index] = append(calls[*rec.Index], rec)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for i, r := range recorded {
		cs := calls[i]
		slices.SortFunc(cs, func(a, b res.RequestRecord) int { return a.Turn - b.Turn })
		if len(cs) != len(r.toolMs) {
			t.Errorf("session %d: %d calls in requests.jsonl, want %d", i, len(cs), len(r.toolMs))
			continue
		}
		for k, c := range cs {
			if k == 0 {
				if c.PlannedMs == nil || c.LagMs == nil || *c.PlannedMs != r.startMs {
					t.Errorf("session %d's first call planned at %v ms, want %g (its recorded start)", i, c.PlannedMs, r.startMs)
					continue
				}
				t.Logf("session %d call 1: sent %.1f ms after its recorded start %g ms", i, *c.LagMs, r.startMs)
				if *c.LagMs < 0 || *c.LagMs > agenticLateMs {
					t.Errorf("session %d's first call sent %.1f ms after its recorded start, want 0 to %g", i, *c.LagMs, agenticLateMs)
				}
				continue
			}
			gap := float64(c.Start.Sub(cs[k-1].End)) / 1e6
			want := r.toolMs[k]
			t.Logf("session %d call %d: sent %.1f ms after the previous call ended, its tool batch %g ms", i, k+1, gap, want)
			if gap < want || gap > want+agenticLateMs {
				t.Errorf("session %d call %d sent %.1f ms after the previous call ended, want its tool batch %g ms (up to %g more)", i, k+1, gap, want, agenticLateMs)
			}
		}
	}
}
