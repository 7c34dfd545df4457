package measure

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/sim"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
)

// startSim serves the vLLM simulator in-process with args after its model
// and port, and returns its URL once it answers.
func startSim(t *testing.T, args ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- sim.Main(ctx, io.Discard, io.Discard, append([]string{"serve", "qwen", "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--sim-log-interval", "0"}, args...))
	}()
	t.Cleanup(func() { cancel(); <-done })
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if r, err := http.Get(url + "/health"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return url
			}
		}
	}
	t.Fatal("the simulator did not answer")
	return ""
}

// TestSaturationOnTheSimulator: on the simulator (4 sequences in its
// batch, 40 tokens at 5 ms each: about 20 requests a second), a cell at
// 60 req/s stops early as saturated, with its evidence and part of its
// 3 s window saved; one at 8 req/s runs its window out.
func TestSaturationOnTheSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two traffic cells on the simulator")
	}
	url := startSim(t, "--max-num-seqs", "4", "--sim-tbt", "5ms", "--sim-ttft", "5ms")
	tests := []struct {
		name      string
		rate      float64
		saturated bool
	}{
		{name: "3x capacity stops", rate: 60, saturated: true},
		{name: "below capacity runs", rate: 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := testMeter(url)
			m.MaxOutput = 40
			tr := &spec.Traffic{Label: "steady", Context: 100, Rates: []float64{tc.rate}, Arrivals: "poisson",
				Duration: 3 * time.Second, DurationText: "3s", WarmUp: time.Second, MaxOutstanding: 4096}
			ref := vocab.CellRef{Phase: vocab.PhaseTraffic, Matrix: "steady", Context: 100, Rate: tc.rate}
			start := time.Now()
			c, err := m.Traffic(context.Background(), ref, tr, testBodies(m, 100))
			if err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			t.Logf("%s %q in %v", c.Status, c.Reason, took.Round(time.Millisecond))
			if got := c.Status == vocab.StatusSaturated; got != tc.saturated {
				t.Fatalf("status %s (%s), want saturated %v", c.Status, c.Reason, tc.saturated)
			}
			if !tc.saturated {
				return
			}
			if len(c.Reasons) != 1 || c.Reasons[0].Code != result.ReasonSaturated {
				t.Fatalf("reasons %+v", c.Reasons)
			}
			f := c.Reasons[0].Figures
			// A quarter of the window saved, at the least: alone the cell
			// stopped after saturation_after's 1 s and saved 80 % of it;
			// at load average 12 (-race beside the e2e suite) the rule
			// needed 2.2 s of the queue's rise, and saved 49 %.
			if f[result.FigSlopePerS] < 0.25*tc.rate || f[result.FigWaitingEnd] <= f[result.FigWaitingStart] || f[result.FigSavedS] < 0.25*tr.Duration.Seconds() {
				t.Errorf("evidence %v: want a slope of a quarter of the rate or more, the queue grown, a quarter of the window saved", f)
			}
		})
	}
}
