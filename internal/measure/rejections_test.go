package measure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/engine/registry"
	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/measure/sse"
	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vllmfake"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
	"github.com/slogate/slogate/internal/workload"
)

// vllmBusyBody is vLLM 0.32.0's HTTP 503 body of a request refused at
// admission (docs/vllm.md#admission-control).
const vllmBusyBody = `{"error":{"message":"The engine is currently busy and cannot accept new requests. Please try again later or on a different instance.","type":"Service Unavailable","param":null,"code":503}}`

// TestAsRejection: a request's failure is a rejection when its engine
// says the answer is a refusal at admission (vLLM: HTTP 503, or an error
// event of code 503 in a stream answered 200); any other failure stays
// what it was.
func TestAsRejection(t *testing.T) {
	tests := []struct {
		name   string
		engine string
		err    error
		want   bool
	}{
		{name: "vLLM's HTTP 503", engine: "vllm", err: &lifecycle.StreamStatusError{Path: "/v1/completions", Code: 503, Body: vllmBusyBody}, want: true},
		{name: "vLLM's in-stream 503", engine: "vllm", err: &sse.APIError{Message: "The engine is currently busy …", Type: "Service Unavailable", Code: float64(503)}, want: true},
		{name: "a code written as a string", engine: "vllm", err: &sse.APIError{Message: "busy", Code: "503"}, want: true},
		{name: "wrapped", engine: "vllm", err: fmt.Errorf("reading: %w", &sse.APIError{Message: "busy", Code: float64(503)}), want: true},
		{name: "an in-stream engine error", engine: "vllm", err: &sse.APIError{Message: "EngineCore encountered an issue.", Type: "InternalServerError", Code: float64(500)}},
		{name: "HTTP 500", engine: "vllm", err: &lifecycle.StreamStatusError{Path: "/v1/completions", Code: 500, Body: `{"error":{"message":"boom","code":500}}`}},
		{name: "HTTP 400", engine: "vllm", err: &lifecycle.StreamStatusError{Path: "/v1/completions", Code: 400, Body: `{"error":{"message":"bad","code":400}}`}},
		{name: "a stalled stream", engine: "vllm", err: errStalled{time.Second}},
		{name: "a truncated stream", engine: "vllm", err: sse.ErrTruncated},
		{name: "no error", engine: "vllm"},
		{name: "an engine that refuses nothing: SGLang's 503 is an error", engine: "sglang", err: &lifecycle.StreamStatusError{Path: "/v1/completions", Code: 503, Body: vllmBusyBody}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := asRejection(registry.For(tc.engine), tc.err)
			if isRejection(got) != tc.want {
				t.Fatalf("asRejection(%v) = %v, a rejection: %v, want %v", tc.err, got, isRejection(got), tc.want)
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("asRejection(%v) = %v, which does not wrap the failure", tc.err, got)
			}
		})
	}
}

// TestErrorObject reads the code and message of an error answer's body.
func TestErrorObject(t *testing.T) {
	tests := []struct {
		name, body string
		code       int
		message    string
	}{
		{name: "vLLM's nested object", body: vllmBusyBody, code: 503, message: "The engine is currently busy and cannot accept new requests. Please try again later or on a different instance."},
		{name: "the flat shape", body: `{"object":"error","message":"busy","code":503}`, code: 503, message: "busy"},
		{name: "a string error", body: `{"error":"The model is currently scaling. Please try again later."}`, message: `{"error":"The model is currently scaling. Please try again later."}`},
		{name: "not JSON (a cut snippet)", body: `{"error":{"message":"The engine is curr…`, message: `{"error":{"message":"The engine is curr…`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := errorObject(tc.body)
			if code != tc.code || msg != tc.message {
				t.Errorf("errorObject = %d, %q; want %d, %q", code, msg, tc.code, tc.message)
			}
		})
	}
}

// TestGateRefusals: a server that refuses requests at admission
// throughout the hold ends the gate (the cell is measured at what it runs);
// refusals of the ramp-up's burst that stop within refusalGap do not.
func TestGateRefusals(t *testing.T) {
	const hold = 3 * time.Second
	tests := []struct {
		name   string
		c      int
		polls  []poll
		want   gateVerdict
		wantAt time.Duration
	}{
		{name: "refusing throughout: 2 of 6 run, the rest refused every 50 ms", c: 6, polls: polls(6, 100, func(i int, p *poll) {
			p.running, p.decoding, p.started, p.refused = 2, 2, 6, int64(4+3*i)
		}), want: gateRefused, wantAt: hold},
		{name: "refusals of the ramp-up, then every stream admitted", c: 6, polls: polls(6, 200, func(i int, p *poll) {
			p.refused = int64(min(i, 10))
			if i < 10 {
				p.running, p.started = 2, 2
			}
		}), want: gateSteady, wantAt: 10*50*time.Millisecond + hold},
		{name: "refusals with pauses under refusalGap: refusing still", c: 6, polls: polls(6, 100, func(i int, p *poll) {
			p.running, p.started, p.refused = 3, 6, int64(i/15) // one refusal every 750 ms, the first at 750 ms
		}), want: gateRefused, wantAt: 15*50*time.Millisecond + hold},
		{name: "a pause longer than refusalGap starts the count again", c: 6, polls: polls(6, 200, func(i int, p *poll) {
			p.running, p.started, p.refused = 3, 6, int64(i)
			if i >= 20 && i < 50 {
				p.refused = 20 // 1.5 s without a refusal
			}
		}), want: gateRefused, wantAt: 50*50*time.Millisecond + hold},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newGate(tc.c, hold)
			got, at := gateWaiting, time.Duration(-1)
			for _, p := range tc.polls {
				if v := g.observe(p); v != gateWaiting {
					got, at = v, p.at
					break
				}
			}
			if got != tc.want || (got != gateWaiting && at != tc.wantAt) {
				t.Fatalf("verdict %d at %v, want %d at %v", got, at, tc.want, tc.wantAt)
			}
			if got == gateRefused && !strings.Contains(words(g.refusalReason()), fmt.Sprintf("it did not run %d", tc.c)) {
				t.Errorf("reason %q", words(g.refusalReason()))
			}
		})
	}
}

// TestCellStatusRejections: a decode cell whose server refused requests
// of its window, or refused throughout the gate's hold, is queued, the
// refusals first in its reason (docs/method.md#rejections).
func TestCellStatusRejections(t *testing.T) {
	none := waitEvidence{preemptions: -1, terms: vllmStatus}
	with := func(f func(*waitEvidence)) waitEvidence { ev := none; f(&ev); return ev }
	tests := []struct {
		name       string
		ev         waitEvidence
		want       vocab.Status
		wantReason string
	}{
		{name: "no refusal", ev: none, want: vocab.StatusValid},
		{name: "refusals in the window", ev: with(func(e *waitEvidence) { e.rejected = 57 }), want: vocab.StatusQueued,
			wantReason: "the server refused 57 of the window's requests at admission (its queue limit), so fewer than 6 ran"},
		{name: "refusals throughout the hold only", ev: with(func(e *waitEvidence) {
			e.gateRefused, e.gateRefusal = true, result.CellReason{Code: result.ReasonRefusedGate,
				Figures: map[string]float64{result.FigHeldS: 3, result.FigRefused: 40, result.FigConcurrency: 6}}
		}), want: vocab.StatusQueued,
			wantReason: "the server refused requests at admission throughout the steady-state gate's 3.0s (40 refused): it did not run 6"},
		{name: "refusals and a queue: both said, the refusals first", ev: with(func(e *waitEvidence) { e.rejected, e.window.waiting = 3, true }), want: vocab.StatusQueued,
			wantReason: "the server refused 3 of the window's requests at admission (its queue limit), so fewer than 6 ran; the server reported requests waiting for capacity during the window"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, reasons, _ := cellStatus(tc.ev, 6, 6)
			if reason := wordsOf(reasons); st != tc.want || reason != tc.wantReason {
				t.Errorf("got %s %q, want %s %q", st, reason, tc.want, tc.wantReason)
			}
		})
	}
}

// TestTrafficStatsRejected: a request of the window the server refused is
// launched, not completed, not unfinished and never good: goodput_share's
// denominator holds it (docs/method.md#goodput).
func TestTrafficStatsRejected(t *testing.T) {
	reqs := []trafficRequest{
		{launch: 0, first: ms(100), lastTok: ms(200), end: ms(200), tokens: 11, finished: true},
		{launch: ms(10), first: ms(110), lastTok: ms(210), end: ms(210), tokens: 11, finished: true},
		{launch: ms(20), first: -1, lastTok: -1, end: ms(21), rejected: true},
		{launch: ms(30), first: -1, lastTok: -1, end: ms(31), rejected: true},
		{launch: ms(1500), first: -1, lastTok: -1, end: ms(1501), rejected: true}, // after the window
	}
	w := trafficStats(reqs, 0, ms(1000), spec.TrafficSLO{})
	if w.launched != 4 || w.completed != 2 || w.unfinished != 0 || w.rejected != 2 || w.good != 2 {
		t.Fatalf("launched %d, completed %d, unfinished %d, rejected %d, good %d; want 4, 2, 0, 2, 2", w.launched, w.completed, w.unfinished, w.rejected, w.good)
	}
	if w.goodputShare != 0.5 {
		t.Errorf("goodput share %v, want 0.5: the refused requests are not good", w.goodputShare)
	}
	if len(w.dists[1].xs) != 2 {
		t.Errorf("TTFT samples %v, want the two requests that got a token", w.dists[1].xs)
	}
}

// recorded collects a cell's requests.jsonl records.
type recorded struct {
	mu   sync.Mutex
	recs []result.RequestRecord
}

func (r *recorded) record(rec *result.RequestRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, *rec)
}

// byStatus counts the records by status.
func (r *recorded) byStatus() map[result.RequestStatus]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[result.RequestStatus]int{}
	for _, rec := range r.recs {
		out[rec.Status]++
	}
	return out
}

// TestDecodeRejections: a decode cell of 4 streams on a server that takes
// 2 unfinished requests and refuses the rest, as vLLM's
// --max-num-queued-reqs 2 does, in either of vLLM's forms: the refused
// streams ask again after rejectBackoff, the gate ends on the refusals,
// and the cell is measured (never an error): queued, its refused requests
// counted as rejected, recorded as such, and the server's counter over
// the cell matches the client's count.
func TestDecodeRejections(t *testing.T) {
	defer func(d time.Duration) { rejectBackoff = d }(rejectBackoff)
	rejectBackoff = 10 * time.Millisecond
	for _, tc := range []struct {
		name     string
		inStream bool
	}{{name: "HTTP 503"}, {name: "in-stream error event", inStream: true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := vllmfake.Server{Tokens: 100000, Gap: 2 * time.Millisecond, MaxUnfinished: 2, RejectInStream: tc.inStream}
			s := f.Start(t)
			m := testMeter(s.URL)
			var rec recorded
			m.Record = rec.record
			c, err := m.Decode(context.Background(), decodeRef(1000, 4), testBodies(m, 1000), 0, false)
			if err != nil {
				t.Fatal(err)
			}
			if c.Status != vocab.StatusQueued || !strings.Contains(c.Reason, "at admission") {
				t.Fatalf("cell %s %q, want queued by the refusals", c.Status, c.Reason)
			}
			if c.Rejected == 0 || c.TotalTPS <= 0 {
				t.Errorf("rejected %d, total_tps %v; want refusals counted beside the tokens of the 2 streams that ran", c.Rejected, c.TotalTPS)
			}
			r := c.Rejections
			if r == nil || r.Server == nil || r.Client < c.Rejected || !r.Agree() || warning.Has(c.Warnings, warning.RejectionsGap) {
				t.Fatalf("rejections %+v, warnings %+v; want the server's count to fit the client's", r, c.Warnings)
			}
			if got := rec.byStatus()[result.RequestRejected]; got != r.Client {
				t.Errorf("%d records rejected, want the %d the client counted", got, r.Client)
			}
			if n := rec.byStatus()[result.RequestError]; n != 0 {
				t.Errorf("%d records in error, want none", n)
			}
		})
	}
}

// TestRejectionsGap: a server whose counter moved by more than the
// refusals the client saw (and the requests it closed unanswered) gets the
// rejections_gap warning.
func TestRejectionsGap(t *testing.T) {
	defer func(d time.Duration) { rejectBackoff = d }(rejectBackoff)
	rejectBackoff = 10 * time.Millisecond
	f := vllmfake.Server{Tokens: 100000, Gap: 2 * time.Millisecond, MaxUnfinished: 1}
	s := f.Start(t)
	m := testMeter(s.URL)
	before, ok := m.counterBefore(context.Background())
	f.CounterSkew = 1000 // refusals the client never saw
	r, ws := m.cellRejections(context.Background(), before, ok, rejectionCount{refused: 2})
	if r == nil || r.Server == nil || *r.Server != 1000 || r.Client != 2 || r.Agree() || !warning.Has(ws, warning.RejectionsGap) {
		t.Errorf("rejections %+v, warnings %+v; want the gap warned", r, ws)
	}
	f.CounterSkew = 0
	before, ok = m.counterBefore(context.Background())
	f.CounterSkew = 3
	if r, ws := m.cellRejections(context.Background(), before, ok, rejectionCount{refused: 2, unanswered: 1}); r == nil || !r.Agree() || len(ws) != 0 {
		t.Errorf("rejections %+v, warnings %+v; one more than seen, with one request closed unanswered, agrees", r, ws)
	}
	before, ok = m.counterBefore(context.Background())
	if r, ws := m.cellRejections(context.Background(), before, ok, rejectionCount{}); r != nil || ws != nil {
		t.Errorf("rejections %+v, warnings %+v; want none recorded without a refusal", r, ws)
	}
}

// TestTrafficRejections: a traffic cell on a server that takes one
// unfinished request refuses most of its arrivals: they are launched,
// rejected and never good, the cell is queued and measured, and a closed
// loop's refused slots ask again after a pause.
func TestTrafficRejections(t *testing.T) {
	defer func(d time.Duration) { rejectBackoff = d }(rejectBackoff)
	rejectBackoff = 10 * time.Millisecond
	for _, tc := range []struct {
		name string
		rate float64
		conc int
	}{{name: "open loop", rate: 50}, {name: "closed loop", conc: 3}} {
		t.Run(tc.name, func(t *testing.T) {
			f := vllmfake.Server{Tokens: 20, Gap: 5 * time.Millisecond, MaxUnfinished: 1}
			s := f.Start(t)
			m := testMeter(s.URL)
			m.MaxOutput = 20
			var rec recorded
			m.Record = rec.record
			tr := &spec.Traffic{Label: "steady", Context: 1000, Rates: []float64{tc.rate}, Arrivals: "constant",
				Duration: 600 * time.Millisecond, DurationText: "600ms", WarmUp: 100 * time.Millisecond, MaxOutstanding: 64}
			ref := vocab.CellRef{Phase: vocab.PhaseTraffic, Matrix: "steady", Context: 1000, Rate: tc.rate, Concurrency: tc.conc}
			c, err := m.Traffic(context.Background(), ref, tr, testBodies(m, 1000))
			if err != nil {
				t.Fatal(err)
			}
			if c.Status != vocab.StatusQueued || !strings.Contains(c.Reason, "at admission") {
				t.Fatalf("cell %s %q, want queued by the refusals", c.Status, c.Reason)
			}
			if c.Rejected == 0 || c.Completed == 0 || c.Rejected+c.Completed+c.Unfinished > c.Launched {
				t.Errorf("launched %d: completed %d, rejected %d, unfinished %d", c.Launched, c.Completed, c.Rejected, c.Unfinished)
			}
			if want := Round(float64(c.Rejected)/float64(c.Launched), 4); c.RejectedShare != want || c.GoodputShare > Round(float64(c.Launched-c.Rejected)/float64(c.Launched), 4) {
				t.Errorf("rejected_share %v (want %v), goodput_share %v: the refused are not good", c.RejectedShare, want, c.GoodputShare)
			}
			if r := c.Rejections; r == nil || !r.Agree() || r.Client < c.Rejected || rec.byStatus()[result.RequestRejected] != r.Client {
				t.Errorf("rejections %+v, records %v", r, rec.byStatus())
			}
		})
	}
}

// TestColdRequestRefused: a cold prefill request the server refuses at
// admission is sent again after rejectBackoff, each refusal recorded as
// rejected, until it is admitted; a server that refuses it for
// rejectedRetryFor makes the prefill cell an error saying so, and not the
// run's end (trouble).
func TestColdRequestRefused(t *testing.T) {
	defer func(d, r time.Duration) { rejectBackoff, rejectedRetryFor = d, r }(rejectBackoff, rejectedRetryFor)
	rejectBackoff, rejectedRetryFor = 5*time.Millisecond, 200*time.Millisecond
	for _, tc := range []struct {
		name    string
		refuse  int64 // the first requests refused; -1: every one
		want    vocab.Status
		minRefs int
	}{
		{name: "refused twice, then admitted", refuse: 2, want: vocab.StatusValid, minRefs: 2},
		{name: "refused throughout", refuse: -1, want: vocab.StatusError, minRefs: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := vllmfake.Server{Tokens: 1, Gap: time.Millisecond}
			backend := f.Start(t)
			var seen atomic.Int64
			proxy := httputil.NewSingleHostReverseProxy(mustURL(t, backend.URL))
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/v1/completions" {
					if n := seen.Add(1); tc.refuse < 0 || n <= tc.refuse {
						w.Header().Set("Content-Type", "application/json")
						w.WriteHeader(http.StatusServiceUnavailable)
						fmt.Fprint(w, vllmBusyBody)
						return
					}
				}
				proxy.ServeHTTP(w, r)
			}))
			t.Cleanup(s.Close)
			m := testMeter(s.URL)
			var rec recorded
			m.Record = rec.record
			runs, err := m.Prefill(context.Background(), 100, requests.Prompt{Tokens: make([]int, 100)}, "salt", true, 1, 1, 1, nil, nil)
			if err != nil {
				t.Fatalf("Prefill: %v (a refusal must not end the run)", err)
			}
			if len(runs) != 1 || runs[0].Status != tc.want {
				t.Fatalf("runs %+v, want one %s", runs, tc.want)
			}
			if tc.want == vocab.StatusError && !strings.Contains(runs[0].Reason, "refused the request at admission") {
				t.Errorf("reason %q, want the refusal", runs[0].Reason)
			}
			if got := rec.byStatus()[result.RequestRejected]; got < tc.minRefs {
				t.Errorf("%d records rejected, want at least %d", got, tc.minRefs)
			}
		})
	}
}

// mustURL parses a test server's URL.
func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestCorrectnessRefused: a correctness request the server refuses at
// admission is sent again after rejectBackoff, so its item is scored, not
// failed; refused for rejectedRetryFor, it fails saying it was refused.
func TestCorrectnessRefused(t *testing.T) {
	defer func(d, r time.Duration) { rejectBackoff, rejectedRetryFor = d, r }(rejectBackoff, rejectedRetryFor)
	rejectBackoff, rejectedRetryFor = 5*time.Millisecond, 100*time.Millisecond
	for _, tc := range []struct {
		name   string
		refuse int64 // the first requests refused; -1: every one
		errors int
	}{
		{name: "refused twice, then answered", refuse: 2},
		{name: "refused throughout", refuse: -1, errors: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked, seen atomic.Int64
			backend := greedyServer(t, false, &asked)
			t.Cleanup(backend.Close)
			proxy := httputil.NewSingleHostReverseProxy(mustURL(t, backend.URL))
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if n := seen.Add(1); tc.refuse < 0 || n <= tc.refuse {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusServiceUnavailable)
					fmt.Fprint(w, vllmBusyBody)
					return
				}
				proxy.ServeHTTP(w, r)
			}))
			t.Cleanup(s.Close)
			c := &spec.Correctness{Name: "g", DatasetText: "d.jsonl", Items: &workload.Items{Items: []workload.Item{{Line: 1, Prompt: "2 + 2 =", Answer: "4", HasAnswer: true}}},
				MaxOutput: 8, Concurrency: 1, Scorer: "number"}
			r := Correctness(context.Background(), lifecycle.NewClient(s.URL, "", "qwen"), c)
			if r.Errors != tc.errors || seen.Load() < 3 {
				t.Fatalf("errors %d after %d requests, want %d after at least 3; outputs %+v", r.Errors, seen.Load(), tc.errors, r.Outputs)
			}
			if tc.errors > 0 && !strings.Contains(r.Outputs[0].Error, "refused the request at admission") {
				t.Errorf("error %q, want the refusal", r.Outputs[0].Error)
			}
		})
	}
}
