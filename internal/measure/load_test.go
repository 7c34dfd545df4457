package measure

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vllmfake"
)

// openWindow returns a load whose window covers everything.
func openWindow(c *lifecycle.Client, body []byte, conc int) *load {
	l := newLoad(c, "/v1/completions", [][]byte{body}, conc, 5*time.Second, 300*time.Millisecond)
	l.windowStart.Store(0)
	return l
}

func TestRequestTokenAccounting(t *testing.T) {
	tests := []struct {
		name         string
		fake         *vllmfake.Server
		tokens       float64
		decodeTokens float64
		gaps         int
		source       result.TokenSource
	}{
		{name: "per-chunk usage, multi-token chunks", fake: &vllmfake.Server{Tokens: 10, PerChunk: 3},
			tokens: 10, decodeTokens: 7, gaps: 3, source: result.TokenSourceUsage},
		{name: "final usage only: spread over the chunks", fake: &vllmfake.Server{Tokens: 10, PerChunk: 2, Usage: "final"},
			tokens: 10, decodeTokens: 8, gaps: 4, source: result.TokenSourceFinalUsage},
		{name: "no usage at all: one token per chunk", fake: &vllmfake.Server{Tokens: 10, PerChunk: 2, Usage: "none"},
			tokens: 5, decodeTokens: 4, gaps: 4, source: result.TokenSourceChunks},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The fake's 1 ms pauses advance the load's clock as the chunks
			// are read (clockedTransport): a loaded machine cannot merge two
			// chunks into one burst (docs/method.md#bursts) and drop a gap.
			tc.fake.Gap = time.Millisecond
			var clock atomic.Int64
			c := clockedClient(t, tc.fake, &clock)
			l := openWindow(c, completionsFields.body(requests.Prompt{Tokens: []int{1, 2}}, 100, 100, ""), 1)
			l.now = clock.Load
			st := &l.slots[0]
			started := false
			if err := l.request(context.Background(), st, l.bodies[0], &started); err != nil {
				t.Fatal(err)
			}
			l.windowEnd.Store(l.now())
			st.source = l.stats().source // the source is settled across the cell
			if st.tokens != tc.tokens || st.decodeTokens != tc.decodeTokens || len(st.gaps) != tc.gaps || st.source != tc.source {
				t.Errorf("tokens %v decodeTokens %v gaps %d source %q; want %v %v %d %q",
					st.tokens, st.decodeTokens, len(st.gaps), st.source, tc.tokens, tc.decodeTokens, tc.gaps, tc.source)
			}
			if len(st.spans) != 1 || !st.spans[0].finished || len(st.ttfts) != 1 || !started {
				t.Errorf("spans %+v ttfts %v started %v; want one finished request", st.spans, st.ttfts, started)
			}
			if l.decoding.Load() != 0 {
				t.Errorf("decoding = %d after the request ended", l.decoding.Load())
			}
		})
	}
}

func TestRequestErrors(t *testing.T) {
	tests := []struct {
		name  string
		fake  *vllmfake.Server
		exact int64 // the tokens ignore_eos asks for (load.exact)
		want  string
	}{
		{name: "HTTP 500", fake: &vllmfake.Server{Tokens: 5, Status: 500}, want: "POST /v1/completions answered HTTP 500: {\"error\":{\"message\":\"overloaded\"}}"},
		{name: "mid-stream error event", fake: &vllmfake.Server{Tokens: 5, MidError: true}, want: "server error in stream: engine died (InternalServerError)"},
		{name: "truncated stream", fake: &vllmfake.Server{Tokens: 5, Truncate: true}, want: "stream ended without [DONE] (truncated)"},
		{name: "stalled stream", fake: &vllmfake.Server{Tokens: 5, StallAfter: 2}, want: "stream stalled: no data for 300ms (per-stream inactivity timeout)"},
		// llama-server cuts a request past its slot's context silently
		// (docs/llamacpp.md#context-limit): a finished stream short of what
		// ignore_eos asked is an error, never a fast request.
		{name: "finished short of ignore_eos", fake: &vllmfake.Server{Tokens: 5}, exact: 100,
			want: `the server ended a stream after 5 of the 100 tokens ignore_eos asked for (finish_reason "length"): it cut the request short, so the cell is not measured (a context or slot limit below the prompt and max_output?)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fake.Gap = time.Millisecond
			s := tc.fake.Start(t)
			c := lifecycle.NewClient(s.URL, "", "qwen")
			l := openWindow(c, completionsFields.body(requests.Prompt{Tokens: []int{1}}, 100, 100, ""), 1)
			l.exact = tc.exact
			started := false
			err := l.request(context.Background(), &l.slots[0], l.bodies[0], &started)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestRequestCancelledIsNotAnError(t *testing.T) {
	f := vllmfake.Server{Tokens: 1000, Gap: 5 * time.Millisecond}
	s := f.Start(t)
	c := lifecycle.NewClient(s.URL, "", "qwen")
	l := openWindow(c, completionsFields.body(requests.Prompt{Tokens: []int{1}}, 1000, 1000, ""), 1)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	started := false
	if err := l.request(ctx, &l.slots[0], l.bodies[0], &started); err != nil {
		t.Fatalf("a request cancelled by the cell returned %v", err)
	}
	if sp := l.slots[0].spans; len(sp) != 1 || sp[0].finished {
		t.Errorf("spans = %+v, want one unfinished span", sp)
	}
}

// TestStats checks the window arithmetic on hand-made slots (times in ms).
func TestStats(t *testing.T) {
	ms := func(v float64) int64 { return int64(v * 1e6) }
	l := &load{slots: []slotStats{
		{ // decoding through the whole window, then cut at its end
			tokens: 100, decodeTokens: 99, decodeNs: ms(990), gaps: []float32{10, 10, 10, 20}, chunkGaps: []float32{10, 10, 10, 20},
			ttfts: []float64{50}, spans: []span{{first: ms(-500), end: ms(1200)}}, source: result.TokenSourceUsage,
		},
		{ // finished inside the window and restarted after a 250 ms first token
			tokens: 40, decodeTokens: 38, decodeNs: ms(380), gaps: []float32{10, 30}, chunkGaps: []float32{20, 60}, tpots: []float64{10.5},
			ttfts: []float64{40, 250}, spans: []span{{first: ms(-100), end: ms(500), finished: true}, {first: ms(750), end: ms(1100)}},
			source: result.TokenSourceFinalUsage,
		},
	}}
	l.windowStart.Store(0)
	l.windowEnd.Store(ms(1000))
	w := l.stats()
	want := windowStats{
		tokens:        140,
		perRequestTPS: (100.0 + 100.0) / 2, // 99 tok / 0.99 s and 38 tok / 0.38 s
		ttft:          [3]float64{50, 210, 246},
		tbt:           [3]float64{10, 25, 29.5},
		activeAvg:     (1000.0 + 500 + 250) / 1000,
		completed:     1,
		source:        result.TokenSourceFinalUsage,
		measuredS:     1,
		// The distributions of the naming rule (docs/method.md#metric-names):
		// ITLs are the chunk gaps themselves, TPOTs the completed requests'.
		dists: []distribution{{"ttft_ms", []float64{40, 50, 250}, 1}, {"tbt_ms", []float64{10, 10, 10, 10, 20, 30}, 3},
			{"itl_ms", []float64{10, 10, 10, 20, 20, 60}, 3}, {"tpot_ms", []float64{10.5}, 3}},
	}
	if diff := cmp.Diff(want, w, cmp.AllowUnexported(windowStats{}, distribution{}), cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-6 })); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestStatsCorrectsCutRequests: without per-chunk usage, a request cut at
// the window's end never gets its final usage; its chunks are scaled by the
// tokens-per-chunk ratio of the requests that did.
func TestStatsCorrectsCutRequests(t *testing.T) {
	l := &load{slots: []slotStats{
		{tokens: 10, decodeTokens: 8, finalTokens: 30, finalChunks: 10, source: result.TokenSourceFinalUsage},
		{tokens: 4, decodeTokens: 3, gaps: []float32{9, 9, 9}, provisionalTokens: 4, provisionalDecodeTokens: 3, provisionalGaps: [][2]int{{0, 3}}, awaitingCorrection: true},
	}}
	l.windowStart.Store(0)
	l.windowEnd.Store(int64(time.Second))
	w := l.stats()
	if w.tokens != 10+12 || w.source != result.TokenSourceFinalUsage || l.slots[1].gaps[0] != 3 || l.slots[1].decodeTokens != 9 {
		t.Errorf("tokens %v source %q gaps %v decodeTokens %v; want 22, final_usage, gaps of 3 ms, 9",
			w.tokens, w.source, l.slots[1].gaps, l.slots[1].decodeTokens)
	}
}

// completionsFields are the request fields of a completions run with the
// default workload.
var completionsFields = requestFields{model: "qwen"}
