package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/slogate/slogate/internal/exit"
)

// sglangTest runs the SGLang imitation in-process on an httptest server.
type sglangTest struct {
	*httptest.Server
	srv *sglangServer
	log *syncBuffer
}

// startSGLangTest parses args as `slogate sim --engine sglang serve …`
// does, resolves and settles them, and serves; ready marks the server up
// (the warmup done) without running the warmup request.
func startSGLangTest(t testing.TB, ready bool, args ...string) *sglangTest {
	t.Helper()
	c, err := parseSGLang(args, false)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	log := &sglangLogger{w: logs, dp: c.core.DataParallel}
	if err := c.resolve(log); err != nil {
		t.Fatal(err)
	}
	st, err := settleSGLang(c)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := newSGLangServer(c, st, log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	for _, e := range srv.engs {
		go e.run(ctx)
	}
	srv.up.Store(ready)
	hs := httptest.NewServer(srv.routes())
	t.Cleanup(func() {
		cancel()
		hs.CloseClientConnections()
		hs.Close()
		for _, e := range srv.engs {
			<-e.stopped
		}
	})
	return &sglangTest{hs, srv, logs}
}

func (ts *sglangTest) do(t testing.TB, method, path, key string, body any) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, ts.URL+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func decodeJSON(t testing.TB, r io.Reader) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSGLangParse(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		launch bool
		check  func(t *testing.T, c *sglangConfig)
	}{
		{name: "serve positional model and defaults", args: []string{"Qwen/Qwen3.5-4B"}, check: func(t *testing.T, c *sglangConfig) {
			if c.core.Model != "Qwen/Qwen3.5-4B" || c.core.Host != "127.0.0.1" || c.core.Port != 30000 || c.core.ServedNames[0] != "Qwen/Qwen3.5-4B" {
				t.Errorf("model %q host %q port %d served %v", c.core.Model, c.core.Host, c.core.Port, c.core.ServedNames)
			}
			if c.decodeLogInterval != 40 || c.enableMetrics {
				t.Errorf("decode_log_interval %d, enable_metrics %v; want 40, false", c.decodeLogInterval, c.enableMetrics)
			}
		}},
		{name: "launch_server form", launch: true, args: []string{"--model-path", "m", "--tensor-parallel-size", "2", "--dp-size=2"}, check: func(t *testing.T, c *sglangConfig) {
			if c.core.Model != "m" || c.core.TensorParallel != 2 || c.core.DataParallel != 2 {
				t.Errorf("model %q tp %d dp %d", c.core.Model, c.core.TensorParallel, c.core.DataParallel)
			}
		}},
		{name: "abbreviated --tp", args: []string{"m", "--tp", "4"}, check: func(t *testing.T, c *sglangConfig) {
			if c.core.TensorParallel != 4 {
				t.Errorf("tp %d, want 4 (argparse prefix of --tp-size)", c.core.TensorParallel)
			}
		}},
		{name: "served name is one value, the last wins", args: []string{"m", "--served-model-name", "a", "--served-model-name", "b"}, check: func(t *testing.T, c *sglangConfig) {
			if !cmp.Equal(c.core.ServedNames, []string{"b"}) {
				t.Errorf("served %v", c.core.ServedNames)
			}
		}},
		{name: "SGLang flags set the core model", args: []string{"m", "--context-length", "32768", "--mem-fraction-static", "0.8", "--max-running-requests", "64",
			"--kv-cache-dtype", "fp8_e4m3", "--disable-radix-cache", "--enable-metrics", "--decode-log-interval", "10", "--api-key", "k", "--chunked-prefill-size", "4096"}, check: func(t *testing.T, c *sglangConfig) {
			core := c.core
			if core.MaxModelLen != 32768 || core.GPUMemUtil != 0.8 || *c.maxRunning != 64 || core.KVCacheDtype != "fp8_e4m3" ||
				core.PrefixCaching == nil || *core.PrefixCaching || !c.enableMetrics || c.decodeLogInterval != 10 || c.apiKey != "k" || core.MaxNumBatchedTokens != 4096 {
				t.Errorf("core %+v sglang %+v", core, c)
			}
		}},
		{name: "known flags are accepted and ignored", args: []string{"m", "--trust-remote-code", "--cuda-graph-max-bs", "128", "--enable-torch-compile", "--no-dcp-replicate-q-proj"}, check: func(t *testing.T, c *sglangConfig) {
			if !cmp.Equal(c.ignored, []string{"--trust-remote-code", "--cuda-graph-max-bs 128", "--enable-torch-compile", "--no-dcp-replicate-q-proj"}) {
				t.Errorf("ignored %q", c.ignored)
			}
		}},
		{name: "sim flags", args: []string{"m", "--sim-tbt", "2ms", "--sim-kv-tokens", "65536", "--sim-drain-poll", "100ms", "--sim-tokenize-prompt-only"}, check: func(t *testing.T, c *sglangConfig) {
			if c.core.TBT != 2*time.Millisecond || c.core.KVTokens != 65536 || c.drainPoll != 100*time.Millisecond || !c.tokenizePromptOnly {
				t.Errorf("tbt %v kv %d poll %v prompt-only %v", c.core.TBT, c.core.KVTokens, c.drainPoll, c.tokenizePromptOnly)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseSGLang(tc.args, tc.launch)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func TestSGLangParseErrors(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		launch bool
		want   string
	}{
		{name: "unknown flag", args: []string{"m", "--max-num-seqs", "8", "--foo"}, want: "sglang serve: error: unrecognized arguments: --max-num-seqs 8 --foo"},
		{name: "vLLM's underscore spelling is not SGLang's", args: []string{"m", "--tp_size", "2"}, want: "unrecognized arguments: --tp_size 2"},
		{name: "model after flags", args: []string{"--tp-size", "2", "m"}, want: "sglang serve: error: unrecognized arguments: m"},
		{name: "launch_server has no positional model", launch: true, args: []string{"m"}, want: "unrecognized arguments: m"},
		{name: "missing model", launch: true, args: []string{"--port", "1"}, want: "the following arguments are required: --model-path/--model"},
		{name: "ambiguous prefix", args: []string{"m", "--speculative-d", "x"}, want: "ambiguous option: --speculative-d could match"},
		{name: "vLLM kv dtype name", args: []string{"m", "--kv-cache-dtype", "fp8"}, want: "argument --kv-cache-dtype: invalid choice: 'fp8' (choose from 'auto', 'fp8_e5m2'"},
		{name: "attention backend", args: []string{"m", "--attention-backend", "flash_attn"}, want: "argument --attention-backend: invalid choice: 'flash_attn'"},
		{name: "not an int", args: []string{"m", "--tp-size", "two"}, want: "argument --tp-size/--tensor-parallel-size: invalid int value: 'two'"},
		{name: "missing value", args: []string{"m", "--port"}, want: "argument --port: expected one argument"},
		{name: "store_true with a value", args: []string{"m", "--enable-metrics=yes"}, want: "argument --enable-metrics: ignored explicit argument 'yes'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseSGLang(tc.args, tc.launch)
			var ae *argparseError
			if !errors.As(err, &ae) {
				t.Fatalf("err %v, want an argparse error", err)
			}
			if !strings.Contains(ae.Error(), tc.want) {
				t.Errorf("error %q\nwant it to contain %q", ae.Error(), tc.want)
			}
		})
	}
	if _, err := parseSGLang([]string{"m", "--sim-tbd", "1ms"}, false); err == nil || !strings.Contains(err.Error(), "unknown simulator flag --sim-tbd; did you mean --sim-tbt?") {
		t.Errorf("--sim-tbd: %v", err)
	}
}

func TestSGLangResolveSpeculative(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		drafts      int // core NumSpeculativeTokens
		draftTokens int // speculative_num_draft_tokens
		running     int
		err         string
	}{
		{name: "DFLASH block 8 drafts 7", args: []string{"--speculative-algorithm", "dflash", "--speculative-draft-model-path", "z-lab/d", "--speculative-dflash-block-size", "8"}, drafts: 7, draftTokens: 8, running: 48},
		{name: "DFLASH default block 16", args: []string{"--speculative-algorithm", "DFLASH", "--speculative-draft-model", "z-lab/d", "--max-running-requests", "16"}, drafts: 15, draftTokens: 16, running: 16},
		{name: "DFLASH block and draft tokens differ", args: []string{"--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", "d", "--speculative-dflash-block-size", "8", "--speculative-num-draft-tokens", "6"},
			err: "ValueError: Both --speculative-num-draft-tokens and --speculative-dflash-block-size are set but they differ. For DFLASH they must match. speculative_num_draft_tokens=6, speculative_dflash_block_size=8."},
		{name: "DFLASH needs a draft model", args: []string{"--speculative-algorithm", "DFLASH"}, err: "ValueError: DFLASH speculative decoding requires setting --speculative-draft-model-path."},
		{name: "EAGLE topk 1 forces steps+1 draft tokens", args: []string{"--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "5", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "10"}, drafts: 5, draftTokens: 6, running: 48},
		{name: "NEXTN is EAGLE", args: []string{"--speculative-algorithm", "NEXTN", "--speculative-num-steps", "2", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "3"}, drafts: 2, draftTokens: 3, running: 48},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseSGLang(append([]string{"m"}, tc.args...), false)
			if err != nil {
				t.Fatal(err)
			}
			err = c.resolve(&sglangLogger{w: io.Discard})
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err %v\nwant %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.core.Speculative.NumSpeculativeTokens; got != tc.drafts || *c.numDraftTokens != tc.draftTokens || *c.maxRunning != tc.running {
				t.Errorf("drafts %d draft tokens %d running %d, want %d %d %d", got, *c.numDraftTokens, *c.maxRunning, tc.drafts, tc.draftTokens, tc.running)
			}
		})
	}
}

func TestSGLangReadiness(t *testing.T) {
	ts := startSGLangTest(t, false, "m", "--sim-tbt", "1ms")
	if got := ts.do(t, "GET", "/health", "", nil).StatusCode; got != 503 {
		t.Errorf("/health while starting: %d, want 503", got)
	}
	// /v1/models and /get_model_info already answer while /health is 503.
	if got := ts.do(t, "GET", "/v1/models", "", nil).StatusCode; got != 200 {
		t.Errorf("/v1/models while starting: %d, want 200", got)
	}
	ts.srv.warmupAndReady(context.Background())
	if !strings.Contains(ts.log.String(), "The server is fired up and ready to roll!") {
		t.Errorf("no ready line in\n%s", ts.log)
	}
	if got := ts.do(t, "GET", "/health", "", nil).StatusCode; got != 200 {
		t.Errorf("/health when up: %d, want 200", got)
	}
	ts.srv.draining.Store(true)
	if got := ts.do(t, "GET", "/health_generate", "", nil).StatusCode; got != 503 {
		t.Errorf("/health_generate while draining: %d, want 503", got)
	}
}

func TestSGLangModelsAndServerInfo(t *testing.T) {
	ts := startSGLangTest(t, true, "Qwen/Qwen3.5-4B", "--served-model-name", "qwen", "--context-length", "32768", "--dp-size", "2",
		"--sim-kv-tokens", "65536", "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", "z-lab/d", "--speculative-dflash-block-size", "8")
	models := decodeJSON(t, ts.do(t, "GET", "/v1/models", "", nil).Body)
	card := models["data"].([]any)[0].(map[string]any)
	if card["id"] != "qwen" || card["root"] != "qwen" || card["owned_by"] != "sglang" || card["max_model_len"] != 32768.0 {
		t.Errorf("model card %v", card)
	}
	for _, path := range []string{"/server_info", "/get_server_info"} {
		info := decodeJSON(t, ts.do(t, "GET", path, "", nil).Body)
		if info["max_total_num_tokens"] != 65536.0 || info["max_req_input_len"] != 32767.0 || info["status"] != "ready" {
			t.Errorf("%s: top level max_total_num_tokens %v max_req_input_len %v status %v", path, info["max_total_num_tokens"], info["max_req_input_len"], info["status"])
		}
		if _, nested := info["scheduler_info"]; nested {
			t.Errorf("%s: scheduler_info is merged at the top level in SGLang, not nested", path)
		}
		if info["speculative_num_draft_tokens"] != 8.0 || info["max_running_requests"] != 48.0 || info["chunked_prefill_size"] != nil {
			t.Errorf("%s: draft tokens %v, max_running_requests %v, chunked_prefill_size %v", path, info["speculative_num_draft_tokens"], info["max_running_requests"], info["chunked_prefill_size"])
		}
		states := info["internal_states"].([]any)
		if len(states) != 2 {
			t.Fatalf("%s: %d internal_states, want one per DP rank (2)", path, len(states))
		}
		for _, s := range states {
			if got := s.(map[string]any)["memory_usage"].(map[string]any)["token_capacity"]; got != 65536.0 {
				t.Errorf("%s: token_capacity %v, want each rank's 65536", path, got)
			}
			// The resolved limit: DFLASH's 48 for max_running_requests unset.
			if got := s.(map[string]any)["effective_max_running_requests_per_dp"]; got != 48.0 {
				t.Errorf("%s: effective_max_running_requests_per_dp %v, want 48", path, got)
			}
		}
	}
}

func TestSGLangTokenize(t *testing.T) {
	ts := startSGLangTest(t, true, "Qwen/Qwen3.5-4B", "--context-length", "4096")
	tok := decodeJSON(t, ts.do(t, "POST", "/v1/tokenize", "", map[string]any{"prompt": "hello world"}).Body)
	if tok["count"] != float64(len(tokenize("hello world"))) || tok["max_model_len"] != float64(profiles["qwen"].MaxModel) {
		t.Errorf("tokenize %v; max_model_len is the tokenizer's (%d), not --context-length", tok, profiles["qwen"].MaxModel)
	}
	msgs := []map[string]string{{"role": "user", "content": "hi"}}
	chat := decodeJSON(t, ts.do(t, "POST", "/tokenize", "", map[string]any{"messages": msgs}).Body)
	if want := len(tokenize(chatTemplate([]chatMessage{{Role: "user", Content: json.RawMessage(`"hi"`)}}, true, nil))); chat["count"] != float64(want) {
		t.Errorf("messages form: count %v, want %d", chat["count"], want)
	}
	both := ts.do(t, "POST", "/tokenize", "", map[string]any{"messages": msgs, "prompt": "x"})
	if body := readAll(t, both.Body); both.StatusCode != 400 || !strings.Contains(body, "Exactly one of 'prompt' or 'messages' must be provided.") {
		t.Errorf("both forms: %d %s", both.StatusCode, body)
	}
	neither := ts.do(t, "POST", "/tokenize", "", map[string]any{"add_special_tokens": true})
	if body := readAll(t, neither.Body); neither.StatusCode != 400 || !strings.Contains(body, "Exactly one of 'prompt' or 'messages' must be provided.") {
		t.Errorf("neither prompt nor messages: %d %s", neither.StatusCode, body)
	}
	old := startSGLangTest(t, true, "m", "--sim-tokenize-prompt-only")
	if resp := old.do(t, "POST", "/tokenize", "", map[string]any{"messages": msgs}); resp.StatusCode != 400 {
		t.Errorf("prompt-only build took messages: %d", resp.StatusCode)
	}
}

// sseLines reads the data: lines of a stream until [DONE] or EOF.
func sseLines(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if l, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, l)
			if l == "[DONE]" {
				break
			}
		}
	}
	return out
}

func TestSGLangStreamForms(t *testing.T) {
	ts := startSGLangTest(t, true, "m", "--sim-tbt", "1ms", "--sim-one-token-chunks")
	tests := []struct {
		name string
		path string
		body map[string]any
		want []string // normalised data: lines
	}{
		{name: "plain: usage null on every chunk", path: "/v1/completions", body: map[string]any{"prompt": []int{1, 2, 3}, "max_tokens": 2, "stream": true},
			want: []string{
				`{"id":"cmpl-ID","object":"text_completion","created":0,"model":"default","choices":[{"index":0,"text":" a","logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}`,
				`{"id":"cmpl-ID","object":"text_completion","created":0,"model":"default","choices":[{"index":0,"text":" a","logprobs":null,"finish_reason":"length","matched_stop":null}],"usage":null}`,
				`[DONE]`}},
		{name: "continuous usage without include_usage", path: "/v1/completions", body: map[string]any{"model": "m", "prompt": []int{1, 2, 3}, "max_tokens": 1, "stream": true,
			"stream_options": map[string]any{"continuous_usage_stats": true}},
			want: []string{
				`{"id":"cmpl-ID","object":"text_completion","created":0,"model":"m","choices":[{"index":0,"text":" a","logprobs":null,"finish_reason":"length","matched_stop":null}],"usage":{"prompt_tokens":3,"total_tokens":4,"completion_tokens":1,"prompt_tokens_details":null,"reasoning_tokens":0}}`,
				`[DONE]`}},
		{name: "include_usage: a final usage chunk", path: "/v1/completions", body: map[string]any{"model": "m", "prompt": []int{1, 2, 3}, "max_tokens": 1, "stream": true,
			"stream_options": map[string]any{"include_usage": true}},
			want: []string{
				`{"id":"cmpl-ID","object":"text_completion","created":0,"model":"m","choices":[{"index":0,"text":" a","logprobs":null,"finish_reason":"length","matched_stop":null}],"usage":null}`,
				`{"id":"cmpl-ID","object":"text_completion","created":0,"model":"m","choices":[],"usage":{"prompt_tokens":3,"total_tokens":4,"completion_tokens":1,"reasoning_tokens":0}}`,
				`[DONE]`}},
		{name: "chat: the role chunk comes with the first token", path: "/v1/chat/completions", body: map[string]any{"model": "m", "messages": []map[string]string{{"role": "user", "content": "hi"}},
			"max_tokens": 1, "stream": true},
			want: []string{
				`{"id":"chatcmpl-ID","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}`,
				`{"id":"chatcmpl-ID","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"role":null,"content":" a","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":"length","matched_stop":null}],"usage":null}`,
				`[DONE]`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := ts.do(t, "POST", tc.path, "", tc.body)
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			got := sseLines(t, resp.Body)
			for i := range got {
				got[i] = normalise(got[i])
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("stream (-want +got):\n%s", d)
			}
		})
	}
}

// TestSGLangStopsAtEOS: without ignore_eos the simulated model ends at its
// EOS (never before min_tokens), which SGLang reports as finish_reason
// "stop" with the EOS token as matched_stop; with ignore_eos it runs to
// max_tokens ("length", matched_stop null).
func TestSGLangStopsAtEOS(t *testing.T) {
	ts := startSGLangTest(t, true, "m", "--sim-tbt", "1ms", "--sim-eos-mean", "4")
	tests := []struct {
		name   string
		body   map[string]any
		finish string
		match  any
		min    int
	}{
		{name: "EOS", body: map[string]any{"prompt": []int{5, 6, 7}, "max_tokens": 200}, finish: "stop", match: float64(sglangEOS), min: 1},
		{name: "min_tokens holds the EOS back", body: map[string]any{"prompt": []int{5, 6, 7}, "max_tokens": 200, "min_tokens": 50}, finish: "stop", match: float64(sglangEOS), min: 51},
		{name: "ignore_eos", body: map[string]any{"prompt": []int{5, 6, 7}, "max_tokens": 20, "ignore_eos": true}, finish: "length", match: nil, min: 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := decodeJSON(t, ts.do(t, "POST", "/v1/completions", "", tc.body).Body)
			choice := got["choices"].([]any)[0].(map[string]any)
			n := got["usage"].(map[string]any)["completion_tokens"].(float64)
			if choice["finish_reason"] != tc.finish || choice["matched_stop"] != tc.match || int(n) < tc.min {
				t.Errorf("finish %v matched_stop %v after %v tokens; want %s, %v, at least %d", choice["finish_reason"], choice["matched_stop"], n, tc.finish, tc.match, tc.min)
			}
			if want := strings.Repeat(genText, int(n)-1); tc.finish == "stop" && choice["text"] != want {
				t.Errorf("text of %d characters, want %d: the EOS token has no text", len(choice["text"].(string)), len(want))
			}
		})
	}
}

// TestSGLangStreamStopsAtEOS: streamed, the EOS ends the stream with a
// "stop" chunk whose token has no text.
func TestSGLangStreamStopsAtEOS(t *testing.T) {
	ts := startSGLangTest(t, true, "m", "--sim-tbt", "1ms", "--sim-eos-mean", "4")
	resp := ts.do(t, "POST", "/v1/completions", "", map[string]any{"prompt": []int{5, 6, 7}, "max_tokens": 200, "stream": true,
		"stream_options": map[string]any{"continuous_usage_stats": true}})
	var text, finish string
	var n float64
	for _, l := range sseLines(t, resp.Body) {
		if l == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Text         string  `json:"text"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage struct {
				CompletionTokens float64 `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(l), &chunk); err != nil {
			t.Fatal(err)
		}
		text += chunk.Choices[0].Text
		n = chunk.Usage.CompletionTokens
		if f := chunk.Choices[0].FinishReason; f != nil {
			finish = *f
		}
	}
	if finish != "stop" || text != strings.Repeat(genText, int(n)-1) {
		t.Errorf("finish %q, %d characters of text for %v tokens; want stop and the text of all but the EOS", finish, len(text), n)
	}
}

// TestSGLangClipsToThePool: a request whose output cannot fit in the KV
// pool is not refused; SGLang clips max_new_tokens to max_req_len − input
// − 1 and it ends by length there.
func TestSGLangClipsToThePool(t *testing.T) {
	ts := startSGLangTest(t, true, "m", "--sim-tbt", "100us", "--sim-kv-tokens", "2048")
	got := decodeJSON(t, ts.do(t, "POST", "/v1/completions", "", map[string]any{"prompt": make([]int, 1000), "max_tokens": 5000, "ignore_eos": true}).Body)
	// max_req_len = min(context − 1, pool − 1) = 2047.
	if n := got["usage"].(map[string]any)["completion_tokens"]; n != float64(2047-1000-1) {
		t.Errorf("completion_tokens %v, want %d", n, 2047-1000-1)
	}
}

// TestSGLangMidstreamError: SGLang's mid-stream error is the flat
// ErrorResponse under "error", then [DONE].
func TestSGLangMidstreamError(t *testing.T) {
	ts := startSGLangTest(t, true, "m", "--sim-tbt", "1ms", "--sim-one-token-chunks", "--sim-midstream-error-after", "2")
	lines := sseLines(t, ts.do(t, "POST", "/v1/completions", "", map[string]any{"prompt": []int{1}, "max_tokens": 50, "ignore_eos": true, "stream": true}).Body)
	want := []string{`{"error": {"object": "error", "message": "simulated mid-stream error (--sim-midstream-error-after)", "type": "InternalServerError", "param": null, "code": 500}}`, "[DONE]"}
	if len(lines) != 4 || !cmp.Equal(lines[2:], want) {
		t.Errorf("stream %q\nwant two chunks then %q", lines, want)
	}
}

func TestSGLangRequestErrors(t *testing.T) {
	ts := startSGLangTest(t, true, "m", "--context-length", "100", "--sim-tbt", "1ms")
	tests := []struct {
		name string
		body map[string]any
		code int
		want string
	}{
		{name: "input + max_tokens equal to the context is refused", body: map[string]any{"prompt": make([]int, 90), "max_tokens": 10}, code: 400,
			want: "Requested token count exceeds the model's maximum context length of 100 tokens. You requested a total of 100 tokens: 90 tokens from the input messages and 10 tokens for the completion."},
		{name: "input as long as the context", body: map[string]any{"prompt": make([]int, 100), "max_tokens": 1}, code: 400,
			want: "The input (100 tokens) is longer than the model's context length (100 tokens)."},
		{name: "max_tokens zero", body: map[string]any{"prompt": []int{1}, "max_tokens": 0}, code: 400, want: "max_tokens must be positive"},
		{name: "one below the context is served", body: map[string]any{"prompt": make([]int, 89), "max_tokens": 10}, code: 200, want: `"finish_reason":"length"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := ts.do(t, "POST", "/v1/completions", "", tc.body)
			body := readAll(t, resp.Body)
			if resp.StatusCode != tc.code || !strings.Contains(body, tc.want) {
				t.Errorf("%d %s\nwant %d containing %q", resp.StatusCode, body, tc.code, tc.want)
			}
			if tc.code == 400 && !strings.Contains(body, `"object":"error"`) {
				t.Errorf("error body %s is not SGLang's flat ErrorResponse", body)
			}
		})
	}
	req, _ := http.NewRequest("POST", ts.URL+"/v1/completions", strings.NewReader(`{"prompt":"x"}`))
	resp, err := http.DefaultClient.Do(req) // no Content-Type
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if body := readAll(t, resp.Body); resp.StatusCode != 400 || !strings.Contains(body, "Only 'application/json' is allowed") {
		t.Errorf("no content type: %d %s", resp.StatusCode, body)
	}
}

func TestSGLangAuthAndMetricsRoute(t *testing.T) {
	ts := startSGLangTest(t, true, "m", "--api-key", "k", "--enable-metrics")
	for _, tc := range []struct {
		path, key string
		code      int
	}{
		{"/v1/models", "", 401}, {"/v1/models", "k", 200}, {"/server_info", "", 401}, {"/health", "", 200}, {"/metrics", "", 200},
	} {
		if got := ts.do(t, "GET", tc.path, tc.key, nil).StatusCode; got != tc.code {
			t.Errorf("GET %s key %q: %d, want %d", tc.path, tc.key, got, tc.code)
		}
	}
	if body := readAll(t, ts.do(t, "GET", "/v1/models", "wrong", nil).Body); strings.TrimSpace(body) != `{"error":"Unauthorized"}` {
		t.Errorf("401 body %s", body)
	}
	plain := startSGLangTest(t, true, "m")
	if got := plain.do(t, "GET", "/metrics", "", nil).StatusCode; got != 404 {
		t.Errorf("/metrics without --enable-metrics: %d, want 404", got)
	}
}

func TestSGLangFlushCache(t *testing.T) {
	ts := startSGLangTest(t, true, "m", "--sim-tbt", "5ms")
	const text = "Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting requests, the operation will not be performed.)\n"
	idle := ts.do(t, "POST", "/flush_cache", "", nil)
	if body := readAll(t, idle.Body); idle.StatusCode != 200 || body != text {
		t.Errorf("idle flush: %d %q", idle.StatusCode, body)
	}
	resp := ts.do(t, "POST", "/v1/completions", "", map[string]any{"prompt": []int{1, 2}, "max_tokens": 100000, "stream": true})
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil { // the first chunk: the request runs
		t.Fatal(err)
	}
	busy := ts.do(t, "GET", "/flush_cache", "", nil)
	if body := readAll(t, busy.Body); busy.StatusCode != 400 || body != text {
		t.Errorf("flush while a request runs: %d %q, want 400 with the same text", busy.StatusCode, body)
	}
}

// TestSGLangMetricCadence steps an engine in virtual time and checks that
// the scheduler gauges move only at prefill batches and every
// decode_log_interval decode steps, and keep their values when idle.
func TestSGLangMetricCadence(t *testing.T) {
	c, err := parseSGLang([]string{"m", "--sim-tbt", "10ms", "--sim-kv-tokens", "65536", "--decode-log-interval", "4"}, false)
	if err != nil {
		t.Fatal(err)
	}
	st, err := settleSGLang(c)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	sch := &sglangScheduler{rank: 0, interval: 4, maxTotal: st.kvTokens, log: &sglangLogger{w: logs}}
	p := st.params
	p.observe = sch.observe
	e := newEngine(p)
	e.virtual = true
	ctx := context.Background()
	if sch.gauges().set {
		t.Fatal("gauges set before any batch")
	}
	a, b := newRequest(100, 10, 1), newRequest(100, 6, 2)
	e.submit(a)
	e.submit(b)
	e.iterate(ctx) // admits both: one prefill batch
	g := sch.gauges()
	if !g.set || g.numRunning != 0 || g.numQueue != 0 {
		t.Errorf("after the prefill batch: %+v; want set, running 0 (the new sequences are not in the decode batch yet)", g)
	}
	steps := 0
	for range 20 {
		before := sch.gauges()
		busy, _ := e.iterate(ctx)
		if !busy {
			break
		}
		steps = sch.forwardCtDecode
		g = sch.gauges()
		if steps%4 != 0 && g != before {
			t.Fatalf("decode step %d changed the gauges: %+v → %+v (only every 4th may)", steps, before, g)
		}
		if steps == 4 {
			if g.numRunning != 2 {
				t.Errorf("at the 4th decode step: running %d, want 2", g.numRunning)
			}
			// Every token so far over the time since the scheduler started
			// (the first log's interval covers the prefills too).
			if want := float64(e.st.generationTokens) / e.now.Seconds(); g.genThroughput != want || e.st.generationTokens < 8 {
				t.Errorf("gen_throughput %v, want %v (tokens since the last log ÷ the virtual time since it)", g.genThroughput, want)
			}
			logAt := e.now
			defer func() {
				if sch.lastDecodeLog < logAt {
					t.Errorf("last decode log at %v, before the 4th step's %v", sch.lastDecodeLog, logAt)
				}
			}()
		}
	}
	if len(e.running) != 0 {
		t.Fatalf("%d still running", len(e.running))
	}
	idle := sch.gauges()
	if idle.numRunning == 0 {
		t.Errorf("after the last request finished: running %d; SGLang's gauge keeps the last decode log's value until the next prefill batch", idle.numRunning)
	}
	if !strings.Contains(logs.String(), "Prefill batch, #new-seq: 2, #new-token: 200, #cached-token: 0") || !strings.Contains(logs.String(), "Decode batch, #running-req: 2") {
		t.Errorf("batch lines missing:\n%s", logs)
	}
	// A prefill batch with a prefix hit sets cache_hit_rate; the next
	// decode log resets it to 0.
	e.cache.warm(160, 7)
	e.submit(newRequest(160, 8, 7))
	e.iterate(ctx)
	if g := sch.gauges(); g.cacheHitRate <= 0 || g.numRunning != 0 {
		t.Errorf("after a cached prefill: hit rate %v running %d", g.cacheHitRate, g.numRunning)
	}
	for sch.forwardCtDecode%4 != 0 || sch.gauges().cacheHitRate != 0 {
		if busy, _ := e.iterate(ctx); !busy {
			t.Fatal("idle before a decode log")
		}
	}
}

// TestSGLangAdmission: SGLang admits against new_token_ratio × the
// outputs still to come, not their whole length, so more requests run
// than a full reservation allows; when the pool runs out it retracts one
// (back to the queue, re-prefilled later) and every request still ends.
func TestSGLangAdmission(t *testing.T) {
	c, err := parseSGLang([]string{"m", "--sim-tbt", "1ms", "--sim-kv-tokens", "4096"}, false)
	if err != nil {
		t.Fatal(err)
	}
	st, err := settleSGLang(c)
	if err != nil {
		t.Fatal(err)
	}
	sched := &sglangScheduler{interval: 40, maxTotal: st.kvTokens, log: &sglangLogger{w: io.Discard}}
	st.params.observe = sched.observe
	page := func() string {
		var b bytes.Buffer
		writeSGLangMetrics(&b, "m", []*sglangScheduler{sched}, newSGLangTokenizerMetrics())
		return b.String()
	}
	e := newEngine(st.params)
	e.virtual = true
	var reqs []*request
	for i := range 4 {
		r := newRequest(512, 1024, uint64(100+i))
		reqs = append(reqs, r)
		e.submit(r)
	}
	e.iterate(context.Background())
	// Before the first retraction the counter has no series, as a
	// labelled prometheus_client counter never incremented.
	if p := page(); strings.Contains(p, "sglang:num_retracted_requests_total{") || !strings.Contains(p, "# TYPE sglang:num_retracted_requests_total counter") {
		t.Errorf("before any retraction /metrics has:\n%s", p)
	}
	// In one prefill batch each admitted request reserves its whole clipped
	// output: 2 × 1536 of 4096, a third does not fit beside them (the
	// prompts alone, 4 × 512, would).
	if len(e.running) != 2 {
		t.Errorf("first prefill batch admitted %d, want 2", len(e.running))
	}
	most := 0
	for range 20000 {
		if busy, _ := e.iterate(context.Background()); !busy {
			break
		}
		most = max(most, len(e.running))
	}
	// A full reservation (prompt + max_tokens = 1536 each) fits 2 in 4096.
	if most < 3 {
		t.Errorf("at most %d running; SGLang's ratio admission runs more than the 2 a full reservation fits", most)
	}
	if e.st.preemptions == 0 {
		t.Errorf("no retraction although %d requests of 1536 tokens ran in a 4096-token pool", most)
	}
	// Each retraction is counted where it happens (increment_retracted_reqs).
	want := fmt.Sprintf(`sglang:num_retracted_requests_total{engine_type="unified",model_name="m",moe_ep_rank="0",pp_rank="0",tp_rank="0"} %d.0`, e.st.preemptions)
	if p := page(); !strings.Contains(p, want+"\n") {
		t.Errorf("/metrics lacks %s:\n%s", want, p)
	}
	for i, r := range reqs {
		if r.generated != r.maxTokens {
			t.Errorf("request %d generated %d of %d", i, r.generated, r.maxTokens)
		}
	}
	if e.newTokenRatio < st.params.ratio.min || e.newTokenRatio > 1 {
		t.Errorf("new_token_ratio %v outside [%v, 1]", e.newTokenRatio, st.params.ratio.min)
	}
}

func TestSGLangTokenizerMetrics(t *testing.T) {
	ts := startSGLangTest(t, true, "m", "--sim-tbt", "1ms", "--enable-metrics")
	before := readAll(t, ts.do(t, "GET", "/metrics", "", nil).Body)
	if strings.Contains(before, "sglang:prompt_tokens_total{") || strings.Contains(before, "sglang:time_to_first_token_seconds_count{") {
		t.Errorf("token counters before any request finished:\n%s", before)
	}
	// While a request streams, the token counters have not moved: they
	// grow when it finishes.
	long := ts.do(t, "POST", "/v1/completions", "", map[string]any{"prompt": []int{9, 9}, "max_tokens": 100000, "stream": true})
	if _, err := bufio.NewReader(long.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // some tokens stream (any number will do)
	if mid := readAll(t, ts.do(t, "GET", "/metrics", "", nil).Body); strings.Contains(mid, "sglang:generation_tokens_total{") {
		t.Errorf("token counters moved while the request ran:\n%s", mid)
	}
	long.Body.Close() // the client leaves: an aborted request
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		m := readAll(t, ts.do(t, "GET", "/metrics", "", nil).Body)
		if strings.Contains(m, `sglang:num_aborted_requests_total{model_name="m"} 1.0`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no aborted request counted after the client left:\n%s", m)
		}
	}
	resp := ts.do(t, "POST", "/v1/completions", "", map[string]any{"prompt": []int{1, 2, 3, 4}, "max_tokens": 5})
	readAll(t, resp.Body)
	body := readAll(t, ts.do(t, "GET", "/metrics", "", nil).Body)
	for _, want := range []string{
		`sglang:prompt_tokens_total{model_name="m"} 4.0`,
		`sglang:generation_tokens_total{model_name="m"} 5.0`,
		`sglang:num_requests_total{model_name="m"} 1.0`,
		`sglang:e2e_request_latency_seconds_count{model_name="m"} 1.0`,
		`sglang:time_to_first_token_seconds_count{model_name="m"} 2.0`,
		`sglang:num_running_reqs{engine_type="unified",model_name="m",moe_ep_rank="0",pp_rank="0",tp_rank="0"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestSGLangDrain checks the SIGTERM watchdog: it keeps logging the
// requests left and does not return while one is in flight, however long.
func TestSGLangDrain(t *testing.T) {
	ts := startSGLangTest(t, true, "m", "--sim-drain-poll", "5ms")
	done := ts.srv.track("cmpl-1")
	finished := make(chan struct{})
	go func() { ts.srv.drain(context.Background()); close(finished) }()
	const waiting = "Gracefully exiting... Remaining number of requests 1. Remaining requests remaining_rids=['cmpl-1']."
	for strings.Count(ts.log.String(), waiting) < 3 {
		select {
		case <-finished:
			t.Fatalf("drain returned with a request in flight:\n%s", ts.log)
		case <-time.After(time.Millisecond):
		}
	}
	if got := ts.do(t, "GET", "/health", "", nil).StatusCode; got != 503 {
		t.Errorf("/health while draining: %d, want 503", got)
	}
	done()
	<-finished
	lines := strings.Split(strings.TrimSpace(ts.log.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasSuffix(last, "Gracefully exiting... Remaining number of requests 0. Remaining requests remaining_rids=[].") {
		t.Errorf("last line %q", last)
	}
}

func TestSGLangMain(t *testing.T) {
	tests := []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string
	}{
		{name: "no command", args: []string{"--engine", "sglang"}, code: exit.Usage, stderr: "Usage: slogate sim --engine sglang serve MODEL"},
		{name: "help on stdout", args: []string{"--engine=sglang", "serve", "--help"}, code: 0, stdout: "--speculative-dflash-block-size B"},
		{name: "mistyped engine", args: []string{"--engine", "sglan", "serve", "m"}, code: exit.Usage, stderr: ""},
		{name: "argparse error", args: []string{"--engine", "sglang", "serve", "m", "--max-num-seqs", "4"}, code: exit.Usage,
			stderr: "usage: sglang serve [-h] --model-path MODEL_PATH [options]\nsglang serve: error: unrecognized arguments: --max-num-seqs 4\n"},
		{name: "launch_server form implies sglang", args: []string{"-m", "sglang.launch_server", "--model", "m", "--bogus"}, code: exit.Usage,
			stderr: "sglang serve: error: unrecognized arguments: --bogus"},
		{name: "startup ValueError exits 1", args: []string{"--engine", "sglang", "serve", "m", "--speculative-algorithm", "DFLASH"}, code: 1,
			stderr: "ValueError: DFLASH speculative decoding requires setting --speculative-draft-model-path."},
		{name: "2026 builds refuse fp4_e2m1 at startup", args: []string{"--engine", "sglang", "serve", "m", "--kv-cache-dtype", "fp4_e2m1"}, code: 1,
			stderr: "ValueError: --kv-cache-dtype=fp4_e2m1 is deprecated. Use --kv-cache-dtype=fp4_mx_block16.\n"},
	}
	// Every case ends before a server would serve: a refusal the simulator
	// lost would start one on the default port and run until cancelled, so
	// each case is bounded and says so instead of hanging the package.
	const bound = 5 * time.Second
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), bound)
			defer cancel()
			err := Main(ctx, &stdout, &stderr, tc.args)
			if ctx.Err() != nil {
				t.Fatalf("still running after %v (it served instead of exiting %d)\nstderr: %s", bound, tc.code, stderr.String())
			}
			if got := exit.Code(err); got != tc.code {
				t.Fatalf("exit %d (%v), want %d\nstderr: %s", got, err, tc.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stdout %q\nstderr %q\nwant %q / %q", stdout.String(), stderr.String(), tc.stdout, tc.stderr)
			}
		})
	}
	err := Main(context.Background(), io.Discard, io.Discard, []string{"--engine", "sglan", "serve", "m"})
	if err == nil || !strings.Contains(err.Error(), `unknown engine "sglan" for 'slogate sim --engine'; did you mean sglang?`) {
		t.Errorf("mistyped engine: %v", err)
	}
}

// TestSGLangRecordsChatMessages: --sim-record on the SGLang imitation keeps
// a chat request's history, message by message, as the vLLM imitation's
// does (a conversation's e2e checks read it on either engine).
func TestSGLangRecordsChatMessages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sent.jsonl")
	ts := startSGLangTest(t, true, "m", "--sim-tbt", "1ms", "--sim-record", path)
	msgs := []map[string]string{{"role": "user", "content": "first question"}, {"role": "assistant", "content": " a a a"}, {"role": "user", "content": "second"}}
	resp := ts.do(t, "POST", "/v1/chat/completions", "", map[string]any{"messages": msgs, "max_tokens": 2, "ignore_eos": true})
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	ts.srv.record.close()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var line struct {
		Endpoint string `json:"endpoint"`
		Messages []struct {
			Role          string `json:"role"`
			ContentTokens int    `json:"content_tokens"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(raw), &line); err != nil {
		t.Fatalf("record %q: %v", raw, err)
	}
	if line.Endpoint != "/v1/chat/completions" || len(line.Messages) != 3 {
		t.Fatalf("record = %+v, want the chat endpoint and its 3 messages", line)
	}
	for i, m := range line.Messages {
		if m.Role != msgs[i]["role"] || m.ContentTokens != countTokens(msgs[i]["content"]) {
			t.Errorf("message %d = %+v, want role %s and %d content tokens", i, m, msgs[i]["role"], countTokens(msgs[i]["content"]))
		}
	}
}

// TestSGLangStartupPoolLines: the KV pool line names its torch dtype, as
// 2026 builds print it (KVCache._finalize_allocation_log), or not with
// --sim-legacy-build; the rank prefix has DP only under data parallelism
// and TP only above --tp-size 1; under DP attention the DP ranks split one
// TP group and only TP rank 0 (DP0) prints the scheduler's summary.
func TestSGLangStartupPoolLines(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string // the lines without their timestamps, in order
	}{
		{name: "2026 form, one GPU: no rank prefix", args: []string{"m", "--sim-kv-tokens", "4096"}, want: []string{
			"] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 4096, K size: ",
			"] max_total_num_tokens=4096, chunked_prefill_size="}},
		{name: "fp8 names its torch dtype", args: []string{"m", "--sim-kv-tokens", "4096", "--kv-cache-dtype", "fp8_e4m3", "--tp-size", "2"}, want: []string{
			" TP0] KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 4096, ",
			" TP0] max_total_num_tokens=4096, "}},
		{name: "legacy build: no dtype", args: []string{"m", "--sim-kv-tokens", "4096", "--sim-legacy-build"}, want: []string{
			"] KV Cache is allocated. #tokens: 4096, K size: ",
			"] max_total_num_tokens=4096, "}},
		{name: "data parallel: each rank's TP0 prints the summary", args: []string{"m", "--sim-kv-tokens", "4096", "--dp-size", "2"}, want: []string{
			" DP0] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 4096, ",
			" DP1] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 4096, ",
			" DP0] max_total_num_tokens=4096, ",
			" DP1] max_total_num_tokens=4096, "}},
		{name: "DP attention: one TP group, the summary on DP0 only", args: []string{"m", "--sim-kv-tokens", "4096", "--dp-size", "2", "--tp-size", "4", "--enable-dp-attention"}, want: []string{
			" DP0 TP0] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 4096, ",
			" DP1 TP2] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 4096, ",
			" DP0 TP0] max_total_num_tokens=4096, "}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseSGLang(tc.args, false)
			if err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			log := &sglangLogger{w: &logs, dp: c.core.DataParallel, tp: c.core.TensorParallel, dpa: c.enableDPAttention}
			if err := c.resolve(log); err != nil {
				t.Fatal(err)
			}
			st, err := settleSGLang(c)
			if err != nil {
				t.Fatal(err)
			}
			logPools(log, c, st)
			lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), len(tc.want), logs.String())
			}
			for i, w := range tc.want {
				if at := strings.Index(lines[i], w); at < 0 || strings.ContainsAny(lines[i][1:at], "[]") {
					t.Errorf("line %d = %q, want it to contain %q right after the timestamp", i, lines[i], w)
				}
			}
		})
	}
}

// TestSGLangChatRunsToTheContext: a chat request without max_tokens has
// max_new_tokens None, so it asks for one below the context (served, not
// refused as asking for all of it) and runs to the scheduler's clip,
// max_req_len − input − 1 with max_req_len = context − 1.
func TestSGLangChatRunsToTheContext(t *testing.T) {
	ts := startSGLangTest(t, true, "m", "--context-length", "100", "--sim-tbt", "100us")
	resp := ts.do(t, "POST", "/v1/chat/completions", "", map[string]any{
		"messages": []map[string]any{{"role": "user", "content": "hi"}}, "ignore_eos": true})
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s; want 200", resp.StatusCode, readAll(t, resp.Body))
	}
	usage := decodeJSON(t, resp.Body)["usage"].(map[string]any)
	prompt, n := usage["prompt_tokens"].(float64), usage["completion_tokens"].(float64)
	if want := 100 - 1 - prompt - 1; n != want {
		t.Errorf("completion_tokens %v after a %v-token prompt; want %v, max_req_len 99 − input − 1", n, prompt, want)
	}
}
