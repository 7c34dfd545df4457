package measure

import (
	"errors"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/measure/sse"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/warning"
)

// TestServerPerRequestTPS: the server's own per-request rate is stored,
// and a gap beyond 10 % from per_request_tps is a warning with its figures
// (docs/llamacpp.md#server-timings).
func TestServerPerRequestTPS(t *testing.T) {
	tests := []struct {
		name   string
		client float64
		server float64
		warn   bool
	}{
		{name: "agree", client: 600, server: 620, warn: false},
		{name: "at the tolerance", client: 600, server: 660, warn: false},
		{name: "server faster by 12 %", client: 600, server: 672, warn: true},
		{name: "server slower by 11 %", client: 600, server: 534, warn: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cell := result.DecodeCell{PerRequestTPS: tt.client}
			storeServerPerRequestTPS(&cell, tt.server, result.ServerRateTimings)
			if cell.ServerPerRequestTPS == nil || *cell.ServerPerRequestTPS != tt.server {
				t.Fatalf("ServerPerRequestTPS = %v, want %v", cell.ServerPerRequestTPS, tt.server)
			}
			if got := len(cell.Warnings) > 0; got != tt.warn {
				t.Fatalf("warnings %v, want a warning %v", cell.Warnings, tt.warn)
			}
			if tt.warn {
				w := cell.Warnings[0]
				if w.Code != warning.ServerRequestTPSGap || w.Figures[warning.FigServerPerRequestTPS] != tt.server || w.Figures[warning.FigPerRequestTPS] != tt.client ||
					w.Figures[warning.FigGap] != (tt.server-tt.client)/tt.client {
					t.Errorf("warning %+v", w)
				}
			}
		})
	}
}

// TestCounterCrossCheck: the finished-tokens counter's change between two
// scrapes against the predicted_n of the requests that finished between
// them; a request too near a scrape may count on either side.
func TestCounterCrossCheck(t *testing.T) {
	origin := time.Unix(1000, 0)
	ms := func(v int) int64 { return int64(time.Duration(v) * time.Millisecond) }
	before, after := origin.Add(time.Second), origin.Add(5*time.Second)
	finished := []finishedRequest{
		{end: ms(500), predicted: 64},  // before the first scrape
		{end: ms(2000), predicted: 64}, // between
		{end: ms(3000), predicted: 64}, // between
		{end: ms(4950), predicted: 64}, // 50 ms before the second scrape: either side
		{end: ms(6000), predicted: 64}, // after
	}
	tests := []struct {
		name  string
		delta float64
		bad   bool
	}{
		{name: "the sure ones", delta: 128},
		{name: "with the one near the scrape", delta: 192},
		{name: "one request too few", delta: 64, bad: true},
		{name: "one request too many", delta: 256, bad: true},
		{name: "tokens lost mid-request", delta: 150},
		{name: "nothing moved", delta: 0, bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, bad := counterCrossCheck(tt.delta, before, after, origin, finished)
			if bad != tt.bad {
				t.Fatalf("bad = %v, want %v (%+v)", bad, tt.bad, w)
			}
			if bad && (w.Code != warning.ServerCounterGap || w.Figures[warning.FigCounterTokens] != tt.delta || w.Figures[warning.FigFinishedTokens] != 128 ||
				w.Figures[warning.FigUncertainTokens] != 64) {
				t.Errorf("warning %+v", w)
			}
		})
	}
}

// TestRecordServerTimings: a request's record in requests.jsonl carries
// the server's timings.
func TestRecordServerTimings(t *testing.T) {
	tr := requestTrace{first: -1, last: -1, timings: &sse.Timings{PromptN: 9, PromptMs: 2.4, PredictedN: 20, PredictedMs: 9.56, PredictedPerSecond: 1987.45, CacheN: 3}}
	rec := tr.record(time.Now(), requestMeta{cell: "decode/ctx=256/conc=1"}, true, false, nil)
	want := result.ServerTimings{PromptN: 9, PromptMs: 2.4, PredictedN: 20, PredictedMs: 9.56, PredictedPerSecond: 1987.45, CacheN: 3}
	if rec.ServerTimings == nil || *rec.ServerTimings != want {
		t.Errorf("ServerTimings = %+v, want %+v", rec.ServerTimings, want)
	}
	if rec := (&requestTrace{first: -1}).record(time.Now(), requestMeta{}, false, false, errors.New("x")); rec.ServerTimings != nil {
		t.Errorf("a request without timings records %+v", rec.ServerTimings)
	}
}
