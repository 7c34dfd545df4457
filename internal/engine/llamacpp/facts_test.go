package llamacpp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/engine/enginetest"
	"github.com/slogate/slogate/internal/vocab"
)

// propsBody is b11669's GET /props of `-c 4096 --parallel 2`, cut to the
// keys slogate reads and a few beside (docs/llamacpp.md#props).
const propsBody = `{"default_generation_settings":{"n_ctx":2048,"params":{"temperature":0.8}},"total_slots":2,"model_alias":"tiny","model_path":"/m/tiny.gguf","build_info":"b11669-Debian","is_sleeping":false}`

// fakeServer is a fake llama-server answering paths (path → status and
// body); every other path is 404. It records the request bodies by path.
func fakeServer(t *testing.T, paths map[string]struct {
	code int
	body string
}) (*httptest.Server, map[string]string) {
	t.Helper()
	got := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got[r.URL.Path] = string(b)
		a, ok := paths[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(a.code)
		io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

type answer = struct {
	code int
	body string
}

func conn(srv *httptest.Server) enginetest.Conn {
	return enginetest.Conn{Base: srv.URL, ModelName: "tiny", E: Engine{}}
}

// TestKVCapacity: the slots' KV from /props, unified or not by the
// startup log, the log alone, and unknown (docs/llamacpp.md#kv-capacity).
func TestKVCapacity(t *testing.T) {
	tests := []struct {
		name      string
		props     *answer
		log       string
		tokens    int64
		slots     int
		source    string
		warn      string
		read      engine.KVRead
		noWarning bool
	}{
		{name: "separate slots, by the log", props: &answer{200, propsBody},
			log:    "0.00.097.482 I srv    load_model: initializing, n_slots = 2, n_ctx_slot = 2048, kv_unified = 'false'\n",
			tokens: 4096, slots: 2, source: vocab.KVSourceProps, read: engine.KVRead{Rule: engine.KVSlots, From: "GET /props (total_slots × default_generation_settings.n_ctx)", Tokens: 2048, Count: 2}, noWarning: true},
		{name: "a unified pool is one slot's n_ctx", props: &answer{200, strings.Replace(strings.Replace(propsBody, `"n_ctx":2048`, `"n_ctx":8192`, 1), `"total_slots":2`, `"total_slots":4`, 1)},
			log:    "0.00.105.889 I srv    load_model: initializing, n_slots = 4, n_ctx_slot = 8192, kv_unified = 'true'\n",
			tokens: 8192, slots: 0, source: vocab.KVSourceProps, read: engine.KVRead{Rule: engine.KVUnifiedPool, From: "GET /props (total_slots × default_generation_settings.n_ctx)", Tokens: 8192, Count: 4}, noWarning: true},
		{name: "an endpoint: separate, with a warning", props: &answer{200, propsBody},
			tokens: 4096, slots: 2, source: vocab.KVSourceProps, read: engine.KVRead{Rule: engine.KVSlots, From: "GET /props (total_slots × default_generation_settings.n_ctx)", Tokens: 2048, Count: 2}, warn: "shares one pool of 2048 tokens among its slots instead, which /props does not say"},
		{name: "the log without /props", props: &answer{401, `{"error":{"message":"Invalid API Key"}}`},
			log:    "I srv    load_model: initializing, n_slots = 3, n_ctx_slot = 1024, kv_unified = 'false'\n",
			tokens: 3072, slots: 3, source: vocab.KVSourceProps, read: engine.KVRead{Rule: engine.KVSlots, From: "server.log (n_slots × n_ctx_slot)", Tokens: 1024, Count: 3}, noWarning: true},
		{name: "unknown", props: nil, tokens: 0, warn: "KV cache capacity unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			paths := map[string]answer{}
			if tt.props != nil {
				paths["/props"] = *tt.props
			}
			srv, _ := fakeServer(t, paths)
			logPath := ""
			if tt.log != "" {
				logPath = filepath.Join(t.TempDir(), "server.log")
				if err := os.WriteFile(logPath, []byte(tt.log), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			tokens, source, warning, read := Engine{}.KVCapacity(context.Background(), conn(srv), logPath, 1)
			if tokens != tt.tokens || source != tt.source {
				t.Errorf("KVCapacity = %d from %q, want %d from %q", tokens, source, tt.tokens, tt.source)
			}
			if !strings.Contains(warning, tt.warn) || (tt.noWarning && warning != "") {
				t.Errorf("warning %q, want one containing %q", warning, tt.warn)
			}
			if !reflect.DeepEqual(read, tt.read) {
				t.Errorf("read %+v, want %+v", read, tt.read)
			}
			if tt.tokens > 0 {
				if got := (Engine{}).KVSlots(context.Background(), conn(srv), logPath); got != tt.slots {
					t.Errorf("KVSlots = %d, want %d", got, tt.slots)
				}
			}
		})
	}
}

// TestVersion: /props' build_info.
func TestVersion(t *testing.T) {
	srv, _ := fakeServer(t, map[string]answer{"/props": {200, propsBody}})
	v, from := Engine{}.Version(context.Background(), conn(srv))
	if v != "b11669-Debian" || from != "GET /props (build_info)" {
		t.Errorf("Version = %q from %q", v, from)
	}
}

// TestStatedFacts: a server whose slots do not speculate states so (a
// draft that failed to load); one that does states nothing, as
// llama-server names its types nowhere.
func TestStatedFacts(t *testing.T) {
	tests := []struct {
		name   string
		slots  string
		stated bool
	}{
		{"no speculation", `[{"id":0,"n_ctx":1024,"speculative":false,"is_processing":false}]`, true},
		{"speculating", `[{"id":0,"n_ctx":1024,"speculative":true,"is_processing":false}]`, false},
		{"older builds without the field", `[{"id":0,"n_ctx":1024}]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := fakeServer(t, map[string]answer{"/slots": {200, tt.slots}})
			f := Engine{}.StatedFacts(context.Background(), conn(srv), "")
			_, stated := f.Stated["speculative"]
			if stated != tt.stated || f.Speculative != "" {
				t.Errorf("Stated = %v, Speculative %q; want speculative stated %v", f.Stated, f.Speculative, tt.stated)
			}
		})
	}
}

// TestChatPromptIDs: a chat prompt's IDs are /apply-template's
// rendering tokenized with add_special (the BOS the chat request adds).
func TestChatPromptIDs(t *testing.T) {
	srv, got := fakeServer(t, map[string]answer{
		"/apply-template": {200, `{"prompt":"<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"}`},
		"/tokenize":       {200, `{"tokens":[1,3,10,11,4,5,3,12,5]}`},
	})
	ids, ok, err := Engine{}.ChatPromptIDs(context.Background(), conn(srv), []map[string]string{{"role": "user", "content": "hi"}}, nil)
	if err != nil || !ok || fmt.Sprint(ids) != "[1 3 10 11 4 5 3 12 5]" {
		t.Fatalf("ChatPromptIDs = %v, %v, %v; want the rendering's IDs with BOS", ids, ok, err)
	}
	var tok map[string]any
	if err := json.Unmarshal([]byte(got["/tokenize"]), &tok); err != nil {
		t.Fatal(err)
	}
	if tok["add_special"] != true || tok["content"] != "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n" {
		t.Errorf("/tokenize body %s, want the rendering with add_special true", got["/tokenize"])
	}
	if !strings.Contains(got["/apply-template"], `"messages":[{"content":"hi","role":"user"}]`) {
		t.Errorf("/apply-template body %s", got["/apply-template"])
	}
	if b := (Engine{}).TokenizeBody("tiny", "the cat"); b.(map[string]any)["content"] != "the cat" || len(b.(map[string]any)) != 1 {
		t.Errorf("TokenizeBody = %v, want {content}", b)
	}
	if (Engine{}).TokenizeChatBody("tiny", nil, true, nil) != nil {
		t.Error("TokenizeChatBody must be nil: /tokenize has no messages form")
	}

	srv, _ = fakeServer(t, map[string]answer{"/apply-template": {401, `{"error":{"message":"Invalid API Key","type":"authentication_error","code":401}}`}})
	if _, _, err := (Engine{}).ChatPromptTokens(context.Background(), conn(srv), nil, nil); err == nil || !strings.Contains(err.Error(), "POST /apply-template answered 401: ") || !strings.Contains(err.Error(), "Invalid API Key") {
		t.Errorf("err = %v, want the 401 quoted", err)
	}
}

// metricsPage is b11669's /metrics after requests, with speculation
// (docs/llamacpp.md#metrics).
const metricsPage = `# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed, excluding cached tokens
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 32
# HELP llamacpp:prompt_tokens_cached_total Number of prompt tokens reused from the cache
# TYPE llamacpp:prompt_tokens_cached_total counter
llamacpp:prompt_tokens_cached_total 1001
# TYPE llamacpp:tokens_predicted_total counter
llamacpp:tokens_predicted_total 6014
# TYPE llamacpp:n_decode_total counter
llamacpp:n_decode_total 228
# TYPE llamacpp:n_tokens_max counter
llamacpp:n_tokens_max 2048
# TYPE llamacpp:spec_decode_num_draft_tokens_total counter
llamacpp:spec_decode_num_draft_tokens_total 893
# TYPE llamacpp:spec_decode_num_accepted_tokens_total counter
llamacpp:spec_decode_num_accepted_tokens_total 172
# TYPE llamacpp:spec_decode_num_drafts_total counter
llamacpp:spec_decode_num_drafts_total 225
# TYPE llamacpp:spec_decode_num_accepted_tokens_per_pos_total counter
llamacpp:spec_decode_num_accepted_tokens_per_pos_total{position="0"} 51
# TYPE llamacpp:predicted_tokens_seconds gauge
llamacpp:predicted_tokens_seconds 195.066
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 2
# TYPE llamacpp:requests_deferred gauge
llamacpp:requests_deferred 2
# TYPE llamacpp:n_busy_slots_per_decode gauge
llamacpp:n_busy_slots_per_decode 1.995
`

// TestParseMetrics: running and deferred (waiting for a slot: capacity),
// the prefix cache, the speculative counters.
func TestParseMetrics(t *testing.T) {
	s, err := ParseMetrics(strings.NewReader(metricsPage), "tiny")
	if err != nil {
		t.Fatal(err)
	}
	if !s.HasRequests || s.Running != 2 || s.Waiting != 2 || s.QueuedForCapacity() != 2 {
		t.Errorf("requests: running %v waiting %v (has %v), queued for capacity %v; want 2, 2, 2", s.Running, s.Waiting, s.HasRequests, s.QueuedForCapacity())
	}
	if !s.HasPrefixCache || s.PrefixCacheQueries != 1033 || s.PrefixCacheHits != 1001 {
		t.Errorf("prefix cache %v/%v (has %v), want 1001 of 1033", s.PrefixCacheHits, s.PrefixCacheQueries, s.HasPrefixCache)
	}
	if !s.HasSpeculative || s.SpeculativeDrafts != 225 || s.SpeculativeDraftTokens != 893 || s.SpeculativeAcceptedTokens != 172 {
		t.Errorf("speculative %v/%v/%v (has %v)", s.SpeculativeDrafts, s.SpeculativeDraftTokens, s.SpeculativeAcceptedTokens, s.HasSpeculative)
	}
	if !s.HasFinishedTokens || s.FinishedTokens != 6014 {
		t.Errorf("finished tokens %v (has %v), want tokens_predicted_total 6014", s.FinishedTokens, s.HasFinishedTokens)
	}
	if s.HasGenerationTokens || s.HasPreemptions || s.KVUsage != nil {
		t.Errorf("read what llama.cpp does not have per step: %+v", s)
	}
}

// TestExitHint: the exits whose log says what the spec should change, in
// b11669's words (docs/llamacpp.md#errors).
func TestExitHint(t *testing.T) {
	tests := []struct {
		name string
		log  []string
		want string
	}{
		{name: "KV type the head size refuses", log: []string{
			"0.00.015.641 E llama_init_from_model: K cache type q8_0 with block size 32 does not divide n_embd_head_k=24",
			"0.00.018.446 E srv    load_model: failed to create_context with model '/tmp/probe-models/head24.gguf'",
			"0.00.018.877 E srv  llama_server: exiting due to model loading error"},
			want: `llama-server refused kv_cache_dtype "q8_0": a quantized KV cache type's block (32) must divide the model's head size (24)`},
		{name: "split mode tensor without a GPU", log: []string{"0.00.021.302 E llama_prepare_model_devices: LLAMA_SPLIT_MODE_TENSOR needs >= 1 devices"},
			want: "llama-server found no GPU for --split-mode tensor in args"},
		{name: "a missing model is quoted as it is", log: []string{"0.00.014.132 E gguf_init_from_file: failed to open GGUF file '/x.gguf' (No such file or directory)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Engine{}.ExitHint(tt.log)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("ExitHint = %q, want one containing %q", got, tt.want)
			}
		})
	}
}
