package e2e

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	res "github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// TestTrafficClientLag: a client the test hook starves (the dispatcher
// sleeps 30 ms after every arrival's timer) keeps 1 req/s, a 1 s gap,
// 30 ms late each time (under the 100 ms bound), and cannot keep 100 req/s, a 10 ms gap, falling
// 20 ms further behind every arrival: that cell is unmeasurable naming the
// lag, with the typed client_lag warning and its figures, never a slow
// server, and the assertion that reads it is inconclusive: exit 4
// (docs/method.md#unmeasurable). The figures agree with requests.jsonl,
// whose every traffic request carries its index, planned time and lag;
// each cell records its schedule.
func TestTrafficClientLag(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := writeSpecLen(t, freePort(t), 4096, trafficSim, `
measure { max_output = 8 }
traffic "steady" {
  context  = "1K"
  rate     = [1, 100]
  arrivals = "constant"
  duration = "3s"
  warmup   = "1s"
}
assert "kept" {
  condition = steady["1K"][1].goodput_share >= 0.9
}
assert "driven" {
  condition = steady["1K"][100].goodput_share >= 0.9
}
`)
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, 3*time.Minute, "", []string{"SLOGATE_TEST_CLIENT_STALL=30ms"}, "run", "-sim", "-out", out, spec)
	if r.Code != 4 {
		t.Fatalf("exit %d, want 4 (an assertion read the unmeasurable cell)\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	results := readResults(t, out)
	cell := func(rate float64) *res.TrafficCell {
		c, ok := results.TrafficCell(vocab.CellRef{Phase: vocab.PhaseTraffic, Matrix: "steady", Context: 1024, Rate: rate})
		if !ok {
			t.Fatalf("no cell at rate %v", rate)
		}
		return c
	}
	kept, behind := cell(1), cell(100)
	t.Logf("rate 1: %s, lag p50 %.3f p99 %.3f max %.3f ms; rate 100: %s (%s)", kept.Status, kept.LagMsP50, kept.LagMsP99, kept.LagMsMax, behind.Status, behind.Reason)
	if kept.Status != vocab.StatusValid {
		t.Errorf("rate 1: %s (%s), want valid: a 30 ms stall is kept at a 1 s gap", kept.Status, kept.Reason)
	}
	if kept.LagMsP50 < 30 || kept.LagMsP50 > 100 {
		t.Errorf("rate 1: median lag %.3f ms, want at least the 30 ms stall and under the 100 ms bound", kept.LagMsP50)
	}
	if behind.Status != vocab.StatusUnmeasurable || !strings.Contains(behind.Reason, "the client fell behind its schedule") {
		t.Fatalf("rate 100: %s (%s), want unmeasurable, saying the client fell behind", behind.Status, behind.Reason)
	}
	i := slices.IndexFunc(behind.Warnings, func(w warning.Warning) bool { return w.Code == warning.ClientLag })
	if i < 0 {
		t.Fatalf("rate 100: warnings %+v lack %s", behind.Warnings, warning.ClientLag)
	}
	w := behind.Warnings[i]
	if w.Figures[warning.FigLagP50Ms] <= w.Figures[warning.FigLagBoundMs] || w.Figures[warning.FigLagBoundMs] != 50 ||
		w.Figures[warning.FigLagP50Ms] != behind.LagMsP50 || w.Figures[warning.FigLagMaxMs] != behind.LagMsMax || w.Figures[warning.FigMeanGapMs] != 10 {
		t.Errorf("rate 100: warning figures %v, cell lag p50 %.3f max %.3f; want the median over the 50 ms bound, the cell's figures", w.Figures, behind.LagMsP50, behind.LagMsMax)
	}
	if !strings.Contains(r.Stdout+r.Stderr, "the client fell behind its schedule") {
		t.Errorf("the run's output does not say the client fell behind:\n%s\n%s", r.Stdout, r.Stderr)
	}
	if kept.Schedule == nil || behind.Schedule == nil || kept.Schedule.Hash == behind.Schedule.Hash ||
		!slices.Equal(kept.Schedule.Differences(behind.Schedule), []string{"rate 1 vs 100"}) {
		t.Errorf("schedules %+v and %+v: want both recorded, differing by rate alone", kept.Schedule, behind.Schedule)
	}
	// The cell's figures are requests.jsonl's: the window's arrivals'
	// client lag (lag − held).
	f, err := os.Open(filepath.Join(out, "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lags := map[string][]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec res.RequestRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Phase != vocab.PhaseTraffic {
			continue
		}
		if rec.Index == nil || rec.PlannedMs == nil || rec.LagMs == nil {
			t.Fatalf("traffic record %s lacks its index, planned time or lag", sc.Bytes())
		}
		if rec.InWindow {
			lag := *rec.LagMs
			if rec.HeldMs != nil {
				lag -= *rec.HeldMs
			}
			lags[rec.Cell] = append(lags[rec.Cell], lag)
		}
	}
	for _, c := range []*res.TrafficCell{kept, behind} {
		xs := lags[c.Ref().Name()]
		if len(xs) != c.Launched || len(xs) == 0 {
			t.Errorf("%s: %d window records with a lag, %d launched", c.Ref().Name(), len(xs), c.Launched)
			continue
		}
		slices.Sort(xs)
		if mx := xs[len(xs)-1]; math.Abs(mx-c.LagMsMax) > 0.01 {
			t.Errorf("%s: max lag %.3f ms in requests.jsonl, %.3f in the cell", c.Ref().Name(), mx, c.LagMsMax)
		}
	}
}
