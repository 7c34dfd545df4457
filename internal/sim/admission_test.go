package sim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAdmissionAnswers checks the simulator refuses a request over
// --max-num-queued-reqs or --max-num-queued-tokens as vLLM 0.32.0 does
// (docs/vllm.md#admission-control), byte for byte against its recorded
// answers (testdata/admission): HTTP 503 when the queue is full at the
// request's preflight, streaming or not; the error event of a stream
// answered 200 when it filled between the preflight and the request's
// addition (a request admitted meanwhile: the preflighted hook); and
// vllm:admission_rejections_total counts each by reason.
func TestAdmissionAnswers(t *testing.T) {
	tests := []struct {
		name string
		args []string
		// race fills the queue between the two checks (a prompt of that
		// many tokens admitted meanwhile); else a streaming request held
		// open fills it first (running, or still in prefill).
		race       int
		stream     bool
		wantStatus int
		wantType   string
		golden     string
		wantCounts map[string]float64
	}{
		{name: "queue full before the stream: HTTP 503", args: []string{"--max-num-queued-reqs", "1"}, stream: true,
			wantStatus: 503, wantType: "application/json", golden: "queue_full.json",
			wantCounts: map[string]float64{reasonQueuedReqs: 1, reasonQueuedTokens: 0}},
		{name: "queue full, not streaming: HTTP 503", args: []string{"--max-num-queued-reqs", "1"},
			wantStatus: 503, wantType: "application/json", golden: "queue_full.json",
			wantCounts: map[string]float64{reasonQueuedReqs: 1, reasonQueuedTokens: 0}},
		{name: "queue filled as the request is added: 200 and the error event", args: []string{"--max-num-queued-reqs", "1"}, race: 5, stream: true,
			wantStatus: 200, wantType: "text/event-stream; charset=utf-8", golden: "queue_full.sse",
			wantCounts: map[string]float64{reasonQueuedReqs: 1, reasonQueuedTokens: 0}},
		{name: "queue filled as a non-streaming request is added: HTTP 503", args: []string{"--max-num-queued-reqs", "1"}, race: 5,
			wantStatus: 503, wantType: "application/json", golden: "queue_full.json",
			wantCounts: map[string]float64{reasonQueuedReqs: 1, reasonQueuedTokens: 0}},
		{name: "prefill backlog filled as the request is added", args: []string{"--max-num-queued-tokens", "5"}, race: 5, stream: true,
			wantStatus: 200, wantType: "text/event-stream; charset=utf-8", golden: "prefill_backlog_full.sse",
			wantCounts: map[string]float64{reasonQueuedReqs: 0, reasonQueuedTokens: 1}},
		{name: "prefill backlog full: a prompt still in prefill refuses the next", args: []string{"--max-num-queued-tokens", "5", "--sim-prefill-tps", "0.001"}, stream: true,
			wantStatus: 503, wantType: "application/json",
			wantCounts: map[string]float64{reasonQueuedReqs: 0, reasonQueuedTokens: 1}},
		{name: "over both limits: counted once, as the request cap", args: []string{"--max-num-queued-reqs", "1", "--max-num-queued-tokens", "5", "--sim-prefill-tps", "0.001"}, stream: true,
			wantStatus: 503, wantType: "application/json", golden: "queue_full.json",
			wantCounts: map[string]float64{reasonQueuedReqs: 1, reasonQueuedTokens: 0}},
	}
	prompt := []int{1, 2, 3, 4, 5}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := startTest(t, append([]string{"m", "--served-model-name", "qwen", "--sim-tbt", "1s"}, tc.args...)...)
			if tc.race > 0 {
				var once sync.Once
				ts.srv.preflighted = func() { once.Do(func() { ts.srv.adm.add(tc.race) }) }
			} else {
				// The response's headers come once the request is added.
				held := ts.post(t, "/v1/completions", "", map[string]any{"prompt": prompt, "max_tokens": 1000, "stream": true})
				if held.StatusCode != 200 {
					t.Fatalf("the first request: status %d", held.StatusCode)
				}
			}
			resp := ts.post(t, "/v1/completions", "", map[string]any{"prompt": prompt, "max_tokens": 3, "stream": tc.stream})
			body := readAll(t, resp.Body)
			if resp.StatusCode != tc.wantStatus || resp.Header.Get("Content-Type") != tc.wantType {
				t.Errorf("status %d, Content-Type %q; want %d, %q", resp.StatusCode, resp.Header.Get("Content-Type"), tc.wantStatus, tc.wantType)
			}
			if tc.golden != "" {
				want, err := os.ReadFile("testdata/admission/" + tc.golden)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(string(want), body); diff != "" {
					t.Errorf("answer differs from testdata/admission/%s (-want +got):\n%s", tc.golden, diff)
				}
			} else if !strings.Contains(body, admissionMessages[reasonQueuedTokens]) {
				t.Errorf("answer %s, want the prefill backlog's message", body)
			}
			got := map[string]float64{}
			for _, m := range scrape(t, ts)["vllm:admission_rejections_total"].GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if labels["model_name"] != "qwen" || len(labels) != 2 {
					t.Errorf("series labels %v, want model_name and reason only", labels)
				}
				got[labels["reason"]] = m.GetCounter().GetValue()
			}
			if diff := cmp.Diff(tc.wantCounts, got); diff != "" {
				t.Errorf("vllm:admission_rejections_total by reason (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAdmissionCounterFromStart: a simulator without limits exports the
// counter with both reasons at 0, as vLLM 0.32.0 writes it from its start
// (testdata/admission: the HELP and TYPE lines and no engine label).
func TestAdmissionCounterFromStart(t *testing.T) {
	ts := startTest(t, "m", "--served-model-name", "qwen")
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page := readAll(t, resp.Body)
	want := `# HELP vllm:admission_rejections_total Number of admission attempts rejected by a queue limit, by reason.
# TYPE vllm:admission_rejections_total counter
vllm:admission_rejections_total{model_name="qwen",reason="max_num_queued_reqs"} 0.0
vllm:admission_rejections_total{model_name="qwen",reason="max_num_queued_tokens"} 0.0
`
	if !strings.Contains(page, want) {
		t.Errorf("/metrics lacks\n%s", want)
	}
}

// TestAdmissionFreedBeforeDone: a request leaves the queue before its
// last chunk (or its answer) is written, as vLLM's OutputProcessor drops a
// finished request before the stream yields it; so a client that sends its
// next request on [DONE], at the limit, is never refused. The writer reads
// the admission's count as the handler writes.
func TestAdmissionFreedBeforeDone(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream bool
		last   string // what the last write holds
		// first is the unfinished count at the first write: the request
		// itself while it streams, none for the one answer written.
		first int
	}{{name: "streaming", stream: true, last: "data: [DONE]", first: 1}, {name: "not streaming", last: `"finish_reason":"length"`}} {
		t.Run(tc.name, func(t *testing.T) {
			// Steps 20 ms apart: the stream's first write holds its first token.
			ts := startTest(t, "m", "--served-model-name", "qwen", "--sim-tbt", "20ms", "--max-num-queued-reqs", "1")
			raw, _ := json.Marshal(map[string]any{"prompt": []int{1, 2, 3}, "max_tokens": 3, "stream": tc.stream})
			w := &countingWriter{ResponseRecorder: httptest.NewRecorder(), adm: ts.srv.adm, last: tc.last, atLast: -1}
			ts.srv.generate(w, httptest.NewRequest("POST", "/v1/completions", bytes.NewReader(raw)), false)
			if w.Code != 200 || w.atLast != 0 {
				t.Errorf("status %d; %d unfinished as the last write went out, want 0 (body %s)", w.Code, w.atLast, w.Body)
			}
			if w.atFirst != tc.first {
				t.Errorf("%d unfinished at the first write, want %d", w.atFirst, tc.first)
			}
		})
	}
}

// countingWriter records the admission's unfinished requests at the first
// write and at the one holding last.
type countingWriter struct {
	*httptest.ResponseRecorder
	adm             *admission
	last            string
	writes          int
	atFirst, atLast int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.adm.mu.Lock()
	n := w.adm.unfinished
	w.adm.mu.Unlock()
	if w.writes == 0 {
		w.atFirst = n
	}
	w.writes++
	if strings.Contains(string(p), w.last) {
		w.atLast = n
	}
	return w.ResponseRecorder.Write(p)
}
