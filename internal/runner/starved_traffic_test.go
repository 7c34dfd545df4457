package runner

import (
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/hostenv"
	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
)

// TestSaturatedUnlessStarved: a traffic cell the saturation rule stopped
// is unmeasurable instead when the launched CPU server was
// starved during it (its queue grew because the machine took its CPU:
// the run must not fail as past the server's capacity); a saturated cell
// of a server that ran, or whose wait is not judged (a GPU server, an
// -endpoint), stays saturated, and a measured cell keeps its status
// (docs/method.md#saturation).
func TestSaturatedUnlessStarved(t *testing.T) {
	tests := []struct {
		name     string
		status   vocab.Status
		wait     float64 // the server's wait share during the window
		device   string
		launched bool
		want     vocab.Status
		wantWhy  string
	}{
		{name: "saturated on a starved CPU server", status: vocab.StatusSaturated, wait: 80, device: "cpu", launched: true,
			want: vocab.StatusUnmeasurable, wantWhy: string(result.ReasonStarved)},
		{name: "saturated on a CPU server that ran", status: vocab.StatusSaturated, wait: 10, device: "cpu", launched: true, want: vocab.StatusSaturated},
		{name: "saturated on a starved GPU server: not judged", status: vocab.StatusSaturated, wait: 80, device: "", launched: true, want: vocab.StatusSaturated},
		{name: "saturated behind an endpoint: not read", status: vocab.StatusSaturated, wait: 80, device: "cpu", launched: false, want: vocab.StatusSaturated},
		{name: "a valid cell keeps its status", status: vocab.StatusValid, wait: 80, device: "cpu", launched: true, want: vocab.StatusValid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func(old func(*lifecycle.Server) (int, bool)) { serverGroup = old }(serverGroup)
			serverGroup = func(*lifecycle.Server) (int, bool) { return 4242, tc.launched }
			defer func(old func(int) hostenv.Sched) { readGroup = old }(readGroup)
			readGroup = waitingServer(func(int) float64 { return tc.wait })
			r := &run{cfg: Config{Server: &spec.Server{Device: tc.device}}, results: &result.Results{}}
			c := result.TrafficCell{Status: tc.status}
			ran := false
			r.unlessStarved(&c, r.starvedDuring(func() { ran = true }))
			if !ran {
				t.Fatal("the window was not run")
			}
			if c.Status != tc.want || !strings.Contains(c.Reason, tc.wantWhy) {
				t.Errorf("status %s (%q), want %s with %q", c.Status, c.Reason, tc.want, tc.wantWhy)
			}
		})
	}
}
