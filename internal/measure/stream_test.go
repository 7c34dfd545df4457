package measure

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
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
