package measure

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/measure/sse"
)

// TestTokenStream: one stream reader counts every cell kind's tokens the
// same way: per-chunk usage's increases, one a chunk without usage (not
// a chat role chunk), the final usage for the request's output, and keeps
// a server's own timings when its last chunk has them.
func TestTokenStream(t *testing.T) {
	const role = `data: {"choices":[{"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n"
	tests := []struct {
		name     string
		events   string
		tokens   []int64 // per chunk
		output   int64
		finished bool
		timings  *sse.Timings
	}{
		{name: "per-chunk usage",
			events: `data: {"choices":[{"text":"a","finish_reason":null}],"usage":{"prompt_tokens":5,"completion_tokens":1}}` + "\n\n" +
				`data: {"choices":[{"text":"bcd","finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":4}}` + "\n\n" +
				`data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":4}}` + "\n\n",
			tokens: []int64{1, 3, 0}, output: 4, finished: true},
		{name: "final usage only",
			events: `data: {"choices":[{"text":"ab","finish_reason":null}]}` + "\n\n" +
				`data: {"choices":[{"text":"cd","finish_reason":"stop"}]}` + "\n\n" +
				`data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":4}}` + "\n\n",
			tokens: []int64{1, 1, 0}, output: 4, finished: true},
		{name: "no usage: one a chunk, the chat role chunk none",
			events: role + `data: {"choices":[{"delta":{"content":"a"},"finish_reason":null}]}` + "\n\n" +
				`data: {"choices":[{"delta":{"content":"b"},"finish_reason":null}]}` + "\n\n",
			tokens: []int64{0, 1, 1}, output: 2},
		{name: "llama.cpp's timings",
			events: `data: {"choices":[{"delta":{"content":"a"},"finish_reason":null}]}` + "\n\n" +
				`data: {"choices":[{"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":2},"timings":{"prompt_n":5,"prompt_ms":2.5,"predicted_n":2,"predicted_ms":10,"predicted_per_second":200,"draft_n":3,"draft_n_accepted":1,"cache_n":0}}` + "\n\n",
			tokens: []int64{1, 1}, output: 2, finished: true,
			timings: &sse.Timings{PromptN: 5, PromptMs: 2.5, PredictedN: 2, PredictedMs: 10, PredictedPerSecond: 200, DraftN: 3, DraftNAccepted: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, tc.events+"data: [DONE]\n\n")
			}))
			defer srv.Close()
			rctx, stall, stop := newStallTimer(context.Background(), 5*time.Second)
			defer stop()
			var tr requestTrace
			tr.begin(0)
			clock := int64(0)
			now := func() int64 { clock += int64(time.Millisecond); return clock }
			c := lifecycle.NewClient(srv.URL, "", "m")
			ts, err := openTokenStream(rctx, c, srv.URL+"/v1/completions", "/v1/completions", []byte("{}"), stall, 5*time.Second, now, &tr)
			if err != nil {
				t.Fatal(err)
			}
			defer ts.close()
			var tokens []int64
			for {
				ch, err := ts.next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				tokens = append(tokens, ch.tokens)
			}
			if !slices.Equal(tokens, tc.tokens) || ts.outputTokens() != tc.output || ts.finished != tc.finished {
				t.Errorf("tokens %v output %d finished %v; want %v %d %v", tokens, ts.outputTokens(), ts.finished, tc.tokens, tc.output, tc.finished)
			}
			if ts.first != int64(time.Millisecond) {
				t.Errorf("first chunk at %v, want the first chunk's 1ms", time.Duration(ts.first))
			}
			switch {
			case tc.timings == nil && ts.timings != nil:
				t.Errorf("timings %+v, want none", *ts.timings)
			case tc.timings != nil && (ts.timings == nil || *ts.timings != *tc.timings):
				t.Errorf("timings %+v, want %+v", ts.timings, *tc.timings)
			}
		})
	}
}

// TestTokenStreamReusesConnections: a stream read to its [DONE] leaves its
// connection to the next request (every request dialled a new one, as
// the response was closed before its end), and a server that keeps the
// response open after [DONE] holds the request at most drainTimeout.
func TestTokenStreamReusesConnections(t *testing.T) {
	tests := []struct {
		name  string
		hold  bool // the server keeps each response open after [DONE]
		conns int  // connections five requests take
	}{
		{name: "the response ends after [DONE]", conns: 1},
		{name: "the response stays open after [DONE]", hold: true, conns: 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, `data: {"choices":[{"text":"a","finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`+"\n\ndata: [DONE]\n\n")
				w.(http.Flusher).Flush()
				if tc.hold {
					select {
					case <-r.Context().Done():
					case <-release:
					}
				}
			}))
			var conns atomic.Int64
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			srv.Start()
			defer srv.Close()
			defer close(release)
			c := lifecycle.NewClient(srv.URL, "", "m")
			for range 5 {
				rctx, stall, stop := newStallTimer(context.Background(), 5*time.Second)
				var tr requestTrace
				tr.begin(0)
				ts, err := openTokenStream(rctx, c, srv.URL+"/v1/completions", "/v1/completions", []byte("{}"), stall, 5*time.Second, func() int64 { return 0 }, &tr)
				if err != nil {
					t.Fatal(err)
				}
				t0 := time.Now()
				for err == nil {
					_, err = ts.next()
				}
				if el := time.Since(t0); err != io.EOF || el > drainTimeout+2*time.Second {
					t.Errorf("the stream ended with %v after %v; want io.EOF within about %v", err, el, drainTimeout)
				}
				ts.close()
				stop()
			}
			if got := conns.Load(); got != int64(tc.conns) {
				t.Errorf("five requests took %d connections, want %d", got, tc.conns)
			}
		})
	}
}

// BenchmarkTokenStream reads 128-token requests one after the other, as a
// decode stream does, from an in-process server that sends each response
// at once, its chunks as vLLM sends them with continuous usage: the
// reader's own CPU a token, its request's included (the HTTP request,
// parse, timers, allocations), without the wake-ups of tokens that come
// 1 ms apart, which the firehose adds (e2e BenchmarkFirehose). cpu-ns/token
// is the process's CPU (the server's too) a token: on a shared machine it
// varies less than the wall clock's ns/token.
func BenchmarkTokenStream(b *testing.B) {
	const tokens = 128
	var body bytes.Buffer
	for i := 1; i <= tokens; i++ {
		fin := "null"
		if i == tokens {
			fin = `"length"`
		}
		fmt.Fprintf(&body, `data: {"id":"cmpl-8e2f0c1d","object":"text_completion","created":1764489600,"model":"m","choices":[{"index":0,"text":" token","logprobs":null,"finish_reason":%s,"stop_reason":null}],"usage":{"prompt_tokens":1024,"total_tokens":%d,"completion_tokens":%d}}`+"\n\n", fin, 1024+i, i)
	}
	fmt.Fprintf(&body, `data: {"id":"cmpl-8e2f0c1d","object":"text_completion","created":1764489600,"model":"m","choices":[],"usage":{"prompt_tokens":1024,"total_tokens":%d,"completion_tokens":%d}}`+"\n\ndata: [DONE]\n\n", 1024+tokens, tokens)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body.Bytes())
	}))
	defer srv.Close()
	c := lifecycle.NewClient(srv.URL, "", "m")
	origin := time.Now()
	now := func() int64 { return int64(time.Since(origin)) }
	var tr requestTrace
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		rctx, stall, stop := newStallTimer(context.Background(), 5*time.Second)
		tr.begin(now())
		ts, err := openTokenStream(rctx, c, srv.URL+"/v1/completions", "/v1/completions", []byte("{}"), stall, 5*time.Second, now, &tr)
		if err != nil {
			b.Fatal(err)
		}
		for err == nil {
			_, err = ts.next()
		}
		if err != io.EOF || ts.outputTokens() != tokens {
			b.Fatalf("%v after %d tokens", err, ts.outputTokens())
		}
		ts.close()
		stop()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens), "ns/token")
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N*tokens), "cpu-ns/token")
}

// processCPU is the user + system CPU time of this process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
