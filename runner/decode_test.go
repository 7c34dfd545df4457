package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/vllmfake"
	"github.com/slogate/slogate/spec"
	"github.com/slogate/slogate/vocab"
)

// TestStreamsThatDoNotStopMakeAnError: when a cell's streams do not end
// within the exit timeout after the window, their goroutines may still be
// writing their stats: the cell is an error and the stats are not read
// (with -race, reading them would be a data race).
func TestStreamsThatDoNotStopMakeAnError(t *testing.T) {
	defer func(d time.Duration) { streamsExitTimeout = d }(streamsExitTimeout)
	streamsExitTimeout = time.Nanosecond // no stream ends that fast
	f := vllmfake.Server{Tokens: 100000, Gap: 2 * time.Millisecond}
	s := f.Start(t)
	res, err := Run(context.Background(), testConfig(t, s.URL, smallSpec(2), "decode"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Decode) != 1 || res.Decode[0].Status != vocab.StatusError || res.Decode[0].Reason != "streams did not stop within 1ns" ||
		res.Decode[0].OutputTokens != 0 {
		t.Fatalf("decode = %+v, want one error cell without numbers", res.Decode)
	}
}

// TestGateTimeout: a steady-state gate that times out makes the cell
// queued only when its polls showed the server making requests wait
// (docs/method.md#statuses); otherwise — here the server runs all C but
// the streams are not past their first token — the cell is valid, with a
// note saying the gate timed out and why.
func TestGateTimeout(t *testing.T) {
	defer func(d time.Duration) { steadyBase = d }(steadyBase)
	steadyBase = 500 * time.Millisecond
	tests := []struct {
		name    string
		waiting float64
		want    vocab.Status
		wantWhy string // in the reason (queued) or the notes (valid)
	}{
		{name: "no sign of waiting", want: vocab.StatusValid,
			wantWhy: "; measured anyway: the server made no request wait: not every stream was past its first token (requests waiting or fewer than 2 running for 0.0s of "},
		{name: "waiting requests", waiting: 1, want: vocab.StatusQueued, wantWhy: "; server running 2, waiting 1); the server made requests wait for "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := vllmfake.Server{Tokens: 100000, Gap: 2 * time.Millisecond, FirstDelay: 2 * time.Second, Waiting: tc.waiting}
			s := f.Start(t)
			res, err := Run(context.Background(), testConfig(t, s.URL, smallSpec(2), "decode"))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Decode) != 1 {
				t.Fatalf("decode = %+v, want one cell", res.Decode)
			}
			c := res.Decode[0]
			where := c.Reason
			if tc.want == vocab.StatusValid {
				where = strings.Join(c.Notes, "\n")
			}
			if c.Status != tc.want || !strings.Contains(where, "steady state not reached within 1s (0 of 2 streams decoding") || !strings.Contains(where, tc.wantWhy) {
				t.Errorf("cell %s %q, notes %q; want %s saying %q", c.Status, c.Reason, c.Notes, tc.want, tc.wantWhy)
			}
		})
	}
}

// TestTrafficRequestsThatDoNotStopMakeAnError: the same for a traffic
// cell — requests still running past the exit timeout may still be writing
// their times, so the cell is an error and they are not read.
func TestTrafficRequestsThatDoNotStopMakeAnError(t *testing.T) {
	defer func(d time.Duration) { streamsExitTimeout = d }(streamsExitTimeout)
	streamsExitTimeout = time.Nanosecond // no request ends that fast
	f := vllmfake.Server{Tokens: 100000, Gap: 2 * time.Millisecond}
	s := f.Start(t)
	sp := smallSpec()
	sp.Matrices = nil
	sp.Measure.MaxOutput = 100 // 200 ms a request: some are always running when the cell closes
	sp.Traffic = []*spec.Traffic{{Label: "steady", Context: 1000, Rates: []float64{20}, Arrivals: "constant",
		Duration: 300 * time.Millisecond, DurationText: "300ms", WarmUp: 100 * time.Millisecond, MaxOutstanding: 64}}
	res, err := Run(context.Background(), testConfig(t, s.URL, sp, "traffic"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Traffic) != 1 || res.Traffic[0].Status != vocab.StatusError || res.Traffic[0].Reason != "requests did not stop within 1ns" ||
		res.Traffic[0].Launched != 0 {
		t.Fatalf("traffic = %+v, want one error cell without numbers", res.Traffic)
	}
}
