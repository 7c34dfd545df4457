package measure

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vllmfake"
	"github.com/slogate/slogate/internal/warning"
)

// TestTrafficRequestPhases: a chat stream whose first half is reasoning
// (vllmfake's Reasoning: 5 of 10 tokens, one a chunk, 1 ms apart on the
// load's clock) has TTFT 1 ms, 5 reasoning tokens and TTFO = TTFT + 5 ×
// TBT = 6 ms, in the request and in its record; without reasoning the
// record has neither figure (requests.jsonl unchanged).
func TestTrafficRequestPhases(t *testing.T) {
	tests := []struct {
		name             string
		reasoning        bool
		wantReasoning    int64
		wantTTFO         float64 // ms on the load's clock
		wantRecReasoning bool
	}{
		{name: "reasoning then content", reasoning: true, wantReasoning: 5, wantTTFO: 6, wantRecReasoning: true},
		{name: "content only", wantReasoning: 0, wantTTFO: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &vllmfake.Server{Tokens: 10, Gap: time.Millisecond, Reasoning: tc.reasoning}
			var clock atomic.Int64
			c := clockedClient(t, f, &clock)
			var rec result.RequestRecord
			l := &trafficLoad{client: c, path: "/v1/chat/completions", url: "http://fake.invalid/v1/chat/completions",
				work: bodiesWork{bodies: [][]byte{chatFields.body(hiPrompt, 100, 10, "")}}, origin: time.Now(),
				firstChunkTimeout: 5 * time.Second, idleTimeout: 5 * time.Second, windowEnd: math.MaxInt64,
				failed: make(chan struct{}), record: func(r *result.RequestRecord) { rec = *r }, clock: clock.Load}
			req := &trafficRequest{first: -1, lastTok: -1, end: -1, firstAnswer: -1}
			if _, err := l.request(context.Background(), req, 0, 0, l.work.body(0, 0, nil), true); err != nil {
				t.Fatal(err)
			}
			ttfo := float64(req.firstAnswer-req.launch) / 1e6
			if req.reasoning != tc.wantReasoning || ttfo != tc.wantTTFO || req.tokens != 10 || !req.finished {
				t.Errorf("reasoning %d, TTFO %v ms, tokens %d, finished %v; want %d, %v ms, 10, true",
					req.reasoning, ttfo, req.tokens, req.finished, tc.wantReasoning, tc.wantTTFO)
			}
			if got := rec.ReasoningTokens != nil && rec.TTFOMs != nil; got != tc.wantRecReasoning {
				t.Fatalf("record reasoning %v ttfo %v; want them set %v", rec.ReasoningTokens, rec.TTFOMs, tc.wantRecReasoning)
			}
			if tc.wantRecReasoning && (*rec.ReasoningTokens != tc.wantReasoning || *rec.TTFOMs != tc.wantTTFO) {
				t.Errorf("record: %d reasoning tokens, TTFO %v ms; want %d, %v", *rec.ReasoningTokens, *rec.TTFOMs, tc.wantReasoning, tc.wantTTFO)
			}
		})
	}
}

// TestTrafficStatsPhases: a window's TTFO is each request's first answer
// chunk − launch, its reasoning and content tokens and each phase's rate
// those of its completed requests (reasoning tokens ÷ (first answer −
// first chunk), (content − 1) ÷ (last token − first answer)); a request
// that reasoned to its end without an answer has no TTFO (not 0) and is
// counted for the warning; a phase shorter than a burst has no rate; a
// window without reasoning has no phases.
func TestTrafficStatsPhases(t *testing.T) {
	// phased is a request launched at ms at, first chunk 50 ms later, r
	// reasoning then c content tokens 10 ms apart.
	phased := func(at float64, r, c int64) trafficRequest {
		first := at + 50
		answer := first + float64(r)*10
		last := first + float64(r+c-1)*10
		q := trafficRequest{launch: ms(at), first: ms(first), lastTok: ms(last), end: ms(last), tokens: r + c, reasoning: r,
			firstAnswer: ms(answer), finished: true}
		if c == 0 {
			q.firstAnswer = -1
		}
		return q
	}
	tests := []struct {
		name                               string
		reqs                               []trafficRequest
		wantPhases                         bool
		ttfo, reasoning, content, rtps, ct float64
		unanswered                         int
		unansweredTokens                   int64
		counts                             map[string]float64 // statistics' sample counts
	}{
		{name: "reasoning then content: TTFO = TTFT + R × TBT",
			reqs:       []trafficRequest{phased(0, 20, 10), phased(100, 30, 10), phased(200, 40, 10)},
			wantPhases: true, ttfo: 50 + 30*10, reasoning: 30, content: 10, rtps: 100, ct: 100},
		{name: "one request reasoned to its end: no TTFO, counted",
			reqs:       []trafficRequest{phased(0, 20, 10), phased(100, 64, 0), phased(200, 40, 10)},
			wantPhases: true, ttfo: 50 + 30*10, reasoning: 40, content: 10, rtps: 100, ct: 100, unanswered: 1, unansweredTokens: 64},
		{name: "a reasoning phase within a burst has no rate",
			reqs: []trafficRequest{phased(0, 20, 10), phased(100, 30, 10), phased(200, 40, 10),
				{launch: ms(300), first: ms(350), firstAnswer: ms(350.2), lastTok: ms(350 + 9*10), end: ms(440), tokens: 11, reasoning: 1, finished: true}},
			wantPhases: true, ttfo: (50 + 20*10 + 50 + 30*10) / 2.0, reasoning: 25, content: 10, rtps: 100, ct: 100,
			counts: map[string]float64{"ttfo_ms_count": 4, "reasoning_tps_count": 3, "content_tps_count": 4}},
		{name: "no reasoning: no phases",
			reqs: fakeRequests(100, 1000, 50, 10, 20)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := trafficStats(tc.reqs, 0, ms(1000), spec.TrafficSLO{})
			if w.reasoning != tc.wantPhases || w.unanswered != tc.unanswered || w.unansweredTokens != tc.unansweredTokens {
				t.Fatalf("phases %v unanswered %d (%d tokens); want %v %d (%d)", w.reasoning, w.unanswered, w.unansweredTokens,
					tc.wantPhases, tc.unanswered, tc.unansweredTokens)
			}
			var cell result.TrafficCell
			setTrafficLatencies(&cell, w, []float64{50, 90, 99})
			for _, m := range []struct {
				name string
				want float64
			}{{"ttfo_ms", tc.ttfo}, {"reasoning_tokens", tc.reasoning}, {"content_tokens", tc.content}, {"reasoning_tps", tc.rtps}, {"content_tps", tc.ct}} {
				got, ok := cell.Metric(m.name)
				if ok != tc.wantPhases || ok && math.Abs(got-m.want) > 1e-6 {
					t.Errorf("%s = %v (present %v); want %v (present %v)", m.name, got, ok, m.want, tc.wantPhases)
				}
			}
			for name, want := range tc.counts {
				if got, _ := cell.Metric(name); got != want {
					t.Errorf("%s = %v, want %v", name, got, want)
				}
			}
		})
	}
}

// TestNoAnswerWarning: a window with a request that reasoned to its end
// carries the no_answer warning with its figures.
func TestNoAnswerWarning(t *testing.T) {
	reqs := []trafficRequest{
		{launch: 0, first: ms(50), lastTok: ms(100), end: ms(100), tokens: 6, reasoning: 6, firstAnswer: -1, finished: true},
		{launch: ms(10), first: ms(60), lastTok: ms(110), end: ms(110), tokens: 6, reasoning: 2, firstAnswer: ms(80), finished: true},
	}
	w := trafficStats(reqs, 0, ms(1000), spec.TrafficSLO{})
	got := noAnswerWarnings(w)
	want := warning.New(warning.NoAnswer, "", "", map[string]float64{warning.FigUnanswered: 1, warning.FigCompleted: 2, warning.FigTokens: 6})
	if len(got) != 1 || !got[0].Textless().Equal(want.Textless()) {
		t.Errorf("warnings %+v, want %+v", got, want)
	}
}
