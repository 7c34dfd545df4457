package vllmfake

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"

	surf "github.com/slogate/slogate/internal/surface"
)

// realSurface is the real vLLM 0.32.0's surface, as the simulator's
// fidelity test reads it (internal/sim/fidelity_test.go says how it was
// recorded).
const realSurface = "../sim/testdata/surface/vllm-0.32.0-cpu.json"

// TestMetricsAsRealVLLM: every family the fake writes, with every option
// that adds one, is one the real vLLM writes, of the same type, with no
// label the real one lacks and no enumerated value it never gives. The
// code under test reads these pages as vLLM's; a family or label the real
// server does not write would make a test pass on a page no server sends.
func TestMetricsAsRealVLLM(t *testing.T) {
	golden, err := surf.Read(realSurface)
	if err != nil {
		t.Fatal(err)
	}
	f := &Server{Model: "tiny", Tokens: 4, KVBlocks: 64, ITLScale: 1, TTFTScale: 1, MaxUnfinished: 3}
	s := f.Start(t)
	stream(t, s.URL+"/v1/completions", `{"prompt":"hi","max_tokens":4,"stream":true}`)
	page := get(t, s.URL+"/metrics")
	p := expfmt.NewTextParser(pmodel.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(page))
	if err != nil {
		t.Fatalf("the fake's /metrics does not parse: %v\n%s", err, page)
	}
	if len(families) != 7 {
		t.Fatalf("%d families, want every option's (7)\n%s", len(families), page)
	}
	for name, fam := range families {
		real, ok := golden.Metrics[name]
		if !ok {
			t.Errorf("%s: the real vLLM 0.32.0 writes no such family", name)
			continue
		}
		if typ := strings.ToLower(fam.GetType().String()); typ != real.Type {
			t.Errorf("%s: type %s, the real vLLM's is %s", name, typ, real.Type)
		}
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if !slices.Contains(real.Labels, l.GetName()) {
					t.Errorf("%s: label %s, which the real vLLM's series have not (%v)", name, l.GetName(), real.Labels)
				}
				if values, enumerated := real.Values[l.GetName()]; enumerated && !slices.Contains(values, l.GetValue()) {
					t.Errorf("%s: %s=%q, which the real vLLM never writes (%v)", name, l.GetName(), l.GetValue(), values)
				}
			}
		}
	}
}

// TestStream: the stream's chunks, usage and limits as each option says.
func TestStream(t *testing.T) {
	tests := []struct {
		name   string
		f      *Server
		path   string
		body   string
		want   []string // substrings of the events, in order
		absent string   // a substring no event has
		events int
	}{
		{name: "a chunk a token, usage on each and at the end", f: &Server{Tokens: 3}, path: "/v1/completions", body: `{"prompt":"hi","max_tokens":8}`,
			want: []string{`"completion_tokens":1`, `"completion_tokens":2`, `"finish_reason":"length"`, `"choices":[],"usage":{"prompt_tokens":10,"total_tokens":13,"completion_tokens":3}`, "[DONE]"}, events: 5},
		{name: "max_tokens caps Tokens", f: &Server{Tokens: 10}, path: "/v1/completions", body: `{"prompt":"hi","max_tokens":2}`,
			want: []string{`"total_tokens":12,"completion_tokens":2}`, "[DONE]"}, events: 4},
		{name: "chat: a role chunk first, max_completion_tokens", f: &Server{Tokens: 10, Usage: "final"}, path: "/v1/chat/completions", body: `{"max_completion_tokens":2}`,
			want: []string{`"delta":{"role":"assistant","content":""}`, `"delta":{"content":"x"}`, `"completion_tokens":2`, "[DONE]"}, absent: `"usage":{"prompt_tokens":10,"total_tokens":11`, events: 5},
		{name: "chat reasoning first", f: &Server{Tokens: 4, Reasoning: true, Usage: "none"}, path: "/v1/chat/completions", body: `{}`,
			want: []string{`"delta":{"reasoning":"x"}`, `"delta":{"reasoning":"x"}`, `"delta":{"content":"x"}`, "[DONE]"}, absent: "usage", events: 6},
		{name: "chunks of several tokens", f: &Server{Tokens: 5, PerChunk: 2, Usage: "none"}, path: "/v1/completions", body: `{}`,
			want: []string{`"finish_reason":null`, `"finish_reason":"length"`, "[DONE]"}, events: 4},
		{name: "an error after the first chunk", f: &Server{Tokens: 5, MidError: true}, path: "/v1/completions", body: `{}`,
			want: []string{`"completion_tokens":1`, `"message":"engine died"`, "[DONE]"}, events: 3},
		{name: "truncated: no [DONE]", f: &Server{Tokens: 5, Truncate: true}, path: "/v1/completions", body: `{}`,
			want: []string{`"completion_tokens":1`}, absent: "[DONE]", events: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.f.Start(t)
			events := stream(t, s.URL+tt.path, tt.body)
			if len(events) != tt.events {
				t.Errorf("%d events, want %d:\n%s", len(events), tt.events, strings.Join(events, "\n"))
			}
			all := strings.Join(events, "\n")
			at := 0
			for _, w := range tt.want {
				i := strings.Index(all[at:], w)
				if i < 0 {
					t.Fatalf("no %q after byte %d of the events:\n%s", w, at, all)
				}
				at += i + len(w)
			}
			if tt.absent != "" && strings.Contains(all, tt.absent) {
				t.Errorf("the events have %q:\n%s", tt.absent, all)
			}
		})
	}
}

// TestAdmission: past MaxUnfinished a request is refused as vLLM's
// --max-num-queued-reqs refuses it, with HTTP 503 and vLLM's body or in
// the stream, counted in Rejected and in /metrics (plus CounterSkew).
func TestAdmission(t *testing.T) {
	for _, inStream := range []bool{false, true} {
		f := &Server{Tokens: 2, MaxUnfinished: 1, RejectInStream: inStream, Hold: make(chan struct{}), CounterSkew: 5}
		s := f.Start(t)
		first := make(chan []string)
		go func() { first <- streamNoFatal(s.URL+"/v1/completions", `{}`) }()
		waitFor(t, func() bool { return f.Running.Load() == 1 })
		resp, err := http.Post(s.URL+"/v1/completions", "application/json", strings.NewReader(`{"stream":true}`))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// vLLM answers with FastAPI's compact JSON, and writes an error
		// event with Python's json.dumps, spaces after the separators.
		wantStatus, wantCode := http.StatusServiceUnavailable, `"code":503}`
		if inStream {
			wantStatus, wantCode = http.StatusOK, `"code": 503}`
		}
		if resp.StatusCode != wantStatus || !strings.Contains(string(raw), busy) || !strings.Contains(string(raw), wantCode) {
			t.Errorf("in stream %v: HTTP %d %s; want %d with vLLM's QueueOverflowError", inStream, resp.StatusCode, raw, wantStatus)
		}
		if f.Rejected.Load() != 1 {
			t.Errorf("in stream %v: Rejected %d, want 1", inStream, f.Rejected.Load())
		}
		if page := get(t, s.URL+"/metrics"); !strings.Contains(page, `vllm:admission_rejections_total{model_name="qwen",reason="max_num_queued_reqs"} 6`) {
			t.Errorf("in stream %v: /metrics does not count 1 refusal plus a skew of 5:\n%s", inStream, page)
		}
		f.Hold <- struct{}{}
		if ev := <-first; len(ev) == 0 || ev[len(ev)-1] != "[DONE]" {
			t.Errorf("in stream %v: the held request ended with %v, want [DONE] once released", inStream, ev)
		}
	}
}

// TestMetricsGauges: the gauges report the requests running and the
// queue, WaitingAt counting the polls that found Full requests streaming.
func TestMetricsGauges(t *testing.T) {
	f := &Server{Tokens: 1, Hold: make(chan struct{}), Waiting: 1, Full: 1, WaitingAt: func(n int64) float64 { return float64(10 * n) }}
	s := f.Start(t)
	if page := get(t, s.URL+"/metrics"); !strings.Contains(page, `vllm:num_requests_waiting{engine="0",model_name="qwen"} 1`) {
		t.Errorf("idle: want Waiting's 1 queued\n%s", page)
	}
	done := make(chan []string)
	go func() { done <- streamNoFatal(s.URL+"/v1/completions", `{}`) }()
	waitFor(t, func() bool { return f.Streaming.Load() == 1 })
	for n, want := range []string{"10", "20"} {
		page := get(t, s.URL+"/metrics")
		if !strings.Contains(page, `vllm:num_requests_running{engine="0",model_name="qwen"} 1`) || !strings.Contains(page, `vllm:num_requests_waiting{engine="0",model_name="qwen"} `+want+"\n") {
			t.Errorf("poll %d with a request streaming: want 1 running and %s waiting\n%s", n+1, want, page)
		}
	}
	f.Hold <- struct{}{}
	<-done
	if page := get(t, s.URL+"/metrics"); !strings.Contains(page, `vllm:generation_tokens_total{engine="0",model_name="qwen"} 1`) {
		t.Errorf("after one token: want generation_tokens_total 1\n%s", page)
	}
}

// TestClockedClient: through the clocked transport the client's clock
// advances by exactly the handler's pauses, and no real time passes.
func TestClockedClient(t *testing.T) {
	f := &Server{Tokens: 3, Gap: time.Hour, FirstDelay: time.Hour}
	var clock atomic.Int64
	c := f.ClockedClient(t, &clock)
	start := time.Now()
	resp, err := c.Post("http://fake/v1/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var stamps []time.Duration
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			stamps = append(stamps, time.Duration(clock.Load()))
		}
	}
	want := []time.Duration{2 * time.Hour, 3 * time.Hour, 4 * time.Hour, 4 * time.Hour, 4 * time.Hour}
	if !slices.Equal(stamps, want) {
		t.Errorf("events at %v of the clock, want %v (a first delay and a gap, then a gap a token)", stamps, want)
	}
	if real := time.Since(start); real > time.Minute {
		t.Errorf("%v of real time passed", real)
	}
}

// TestTokenize: a prompt counts a token every 4 bytes; a chat message by
// ChatCount, refused without the generation prompt or with
// NoChatTokenize.
func TestTokenize(t *testing.T) {
	f := &Server{MaxModelLen: 512, ChatCount: func(s string) int { return 7 }}
	s := f.Start(t)
	var got struct {
		Count       int   `json:"count"`
		MaxModelLen int   `json:"max_model_len"`
		Tokens      []int `json:"tokens"`
	}
	post(t, s.URL+"/tokenize", `{"prompt":"123456789"}`, &got)
	if got.Count != 3 || len(got.Tokens) != 3 || got.MaxModelLen != 512 {
		t.Errorf("a 9-byte prompt: %+v, want 3 tokens and max_model_len 512", got)
	}
	post(t, s.URL+"/tokenize", `{"messages":[{"role":"user","content":"hi"}],"add_generation_prompt":true}`, &got)
	if got.Count != 7 || f.TokenizeCalls.Load() != 1 {
		t.Errorf("a chat message: %+v, %d calls; want ChatCount's 7, one call", got, f.TokenizeCalls.Load())
	}
	resp, err := http.Post(s.URL+"/tokenize", "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("a chat message without add_generation_prompt: HTTP %d, want 400", resp.StatusCode)
	}
}

// stream posts body to url and returns the data of its server-sent
// events, failing the test on a transport error.
func stream(t *testing.T, url, body string) []string {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return events(resp.Body)
}

// streamNoFatal is stream for a goroutine: nil on a transport error.
func streamNoFatal(url, body string) []string {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	return events(resp.Body)
}

// events are the data lines of a server-sent event stream.
func events(r io.Reader) []string {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// get is the body of GET url.
func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// post posts body to url and decodes its JSON answer into v.
func post(t *testing.T, url, body string, v any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds, failing the test after a minute.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("the condition did not hold within a minute")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
