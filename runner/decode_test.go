package runner

import (
	"context"
	"testing"
	"time"

	"github.com/slogate/slogate/result"
)

// TestStreamsThatDoNotStopMakeAnError: when a cell's streams do not end
// within the exit timeout after the window, their goroutines may still be
// writing their stats: the cell is an error and the stats are not read
// (with -race, reading them would be a data race).
func TestStreamsThatDoNotStopMakeAnError(t *testing.T) {
	defer func(d time.Duration) { streamsExitTimeout = d }(streamsExitTimeout)
	streamsExitTimeout = time.Nanosecond // no stream ends that fast
	f := fakeVLLM{tokens: 100000, gap: 2 * time.Millisecond}
	s := f.start(t)
	res, err := Run(context.Background(), testConfig(t, s.URL, smallSpec(2), "decode"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Decode) != 1 || res.Decode[0].Status != result.StatusError || res.Decode[0].Reason != "streams did not stop within 1ns" ||
		res.Decode[0].OutputTokens != 0 {
		t.Fatalf("decode = %+v, want one error cell without numbers", res.Decode)
	}
}
