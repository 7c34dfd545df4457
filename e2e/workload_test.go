package e2e

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/requests"
	res "github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/warning"
)

// sentRequest is one --sim-record line: what the runner sent.
type sentRequest struct {
	Endpoint            string                     `json:"endpoint"`
	PromptTokens        int                        `json:"prompt_tokens"`
	Head                []int                      `json:"prompt_token_ids_head"`
	Tail                []int                      `json:"prompt_token_ids_tail"`
	DistinctIDs         int                        `json:"prompt_distinct_ids"`
	SHA256              string                     `json:"prompt_sha256"`
	Sampling            map[string]json.RawMessage `json:"sampling"`
	ChatTemplateKwargs  map[string]json.RawMessage `json:"chat_template_kwargs"`
	MaxTokens           *int                       `json:"max_tokens"`
	MaxCompletionTokens *int                       `json:"max_completion_tokens"`
	MinTokens           *int                       `json:"min_tokens"`
	IgnoreEOS           *bool                      `json:"ignore_eos"`
	CacheSalt           bool                       `json:"cache_salt"`
}

// limit is the request's max_tokens (completions) or max_completion_tokens (chat).
func (s sentRequest) limit() int {
	switch {
	case s.MaxCompletionTokens != nil:
		return *s.MaxCompletionTokens
	case s.MaxTokens != nil:
		return *s.MaxTokens
	}
	return -1
}

// sentLog reads a --sim-record file from where the last read stopped, so
// that one simulator serves several runs.
type sentLog struct {
	path   string
	offset int
}

// next returns the lines appended since the last call.
func (r *sentLog) next(t *testing.T) []sentRequest {
	t.Helper()
	b, err := os.ReadFile(r.path)
	if err != nil {
		t.Fatal(err)
	}
	b, r.offset = b[r.offset:], len(b)
	var out []sentRequest
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var s sentRequest
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("--sim-record line %q: %v", sc.Text(), err)
		}
		out = append(out, s)
	}
	return out
}

// decodeRequests are the requests of decode cells: limit = max_output
// (prefill and warm-up requests ask for 1 token).
func decodeRequests(sent []sentRequest, maxOutput int) []sentRequest {
	var out []sentRequest
	for _, s := range sent {
		if s.limit() == maxOutput {
			out = append(out, s)
		}
	}
	return out
}

// renderedTail is the last 64 token IDs of the chat prompt whose one user
// message ends with the instruction, as the simulator's /tokenize renders
// it: the end of every article prompt, whatever document precedes it.
func renderedTail(t *testing.T, base, instruction string, kwargs map[string]any) []int {
	t.Helper()
	req := map[string]any{"model": "qwen", "add_generation_prompt": true,
		"messages": []map[string]string{{"role": "user", "content": "Some document.\n\n" + instruction}}}
	if kwargs != nil {
		req["chat_template_kwargs"] = kwargs
	}
	b, _ := json.Marshal(req)
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Post(base+"/tokenize", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct{ Tokens []int }
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || len(tok.Tokens) < 64 {
		t.Fatalf("/tokenize: %v (%d tokens)", err, len(tok.Tokens))
	}
	return tok.Tokens[len(tok.Tokens)-64:]
}

// runWorkload runs spec body against the simulator at base and returns the
// results and the requests it sent.
func runWorkload(t *testing.T, mark, base string, rec *sentLog, body string) (*res.Results, []sentRequest, result) {
	t.Helper()
	spec := writeSpec(t, freePort(t), "", body)
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-endpoint", base, "-v", "-out", out, spec)
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	return readResults(t, out), rec.next(t), r
}

// workloadJSON is results.json's "workload" as JSON.
func workloadJSON(t *testing.T, r *res.Results) string {
	t.Helper()
	b, err := json.Marshal(r.Workload)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sha(s string) string { return fmt.Sprintf("%x", sha256.Sum256([]byte(s))) }

// TestWorkloadRequests: what the runner sends for each workload, read back
// from the simulator's --sim-record (docs/method.md#workload).
func TestWorkloadRequests(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	t.Cleanup(func() { noLeftovers(t, mark) }) // runs after startSim's own cleanup
	rec := &sentLog{path: filepath.Join(t.TempDir(), "sent.jsonl")}
	base := startSim(t, mark, "Qwen/Qwen3.5-4B", "--served-model-name", "qwen", "--max-model-len", "65536",
		"--sim-tbt", "5ms", "--sim-ttft", "20ms", "--sim-kv-tokens", "1000000", "--sim-record", rec.path)
	const maxOutput = 64
	measure := fmt.Sprintf("measure {\n  duration = \"1s\"\n  max_output = %d\n", maxOutput)

	t.Run("default: article, shared, exactly ctx tokens, ends with the instruction, server-default sampling", func(t *testing.T) {
		results, sent, _ := runWorkload(t, mark, base, rec, measure+`}
prefill { contexts = ["1K", "4K"] }
matrix "decode" {
  contexts    = ["1K", "4K"]
  concurrency = [1, 4]
}
`)
		wantTail := renderedTail(t, base, requests.DefaultInstruction, nil)
		decode := decodeRequests(sent, maxOutput)
		if len(decode) < 10 {
			t.Fatalf("%d decode requests recorded, want at least 1+4 per context", len(decode))
		}
		prompts := map[int]map[string]bool{} // ctx → prompt digests
		for _, s := range decode {
			if s.PromptTokens != 1024 && s.PromptTokens != 4096 {
				t.Fatalf("a decode prompt of %d tokens, want exactly 1K or 4K", s.PromptTokens)
			}
			if prompts[s.PromptTokens] == nil {
				prompts[s.PromptTokens] = map[string]bool{}
			}
			prompts[s.PromptTokens][s.SHA256] = true
			if !slices.Equal(s.Tail, wantTail) {
				t.Fatalf("the prompt does not end with the instruction and the generation prompt:\ntail %v\nwant %v", s.Tail, wantTail)
			}
			if s.Endpoint != "/v1/completions" || len(s.Sampling) != 0 || s.ChatTemplateKwargs != nil ||
				s.MinTokens == nil || *s.MinTokens != maxOutput || s.IgnoreEOS == nil || !*s.IgnoreEOS || !s.CacheSalt {
				t.Fatalf("decode request %+v: want completions, no sampling field, min_tokens = max_tokens, ignore_eos, cache_salt", s)
			}
		}
		for ctx, p := range prompts {
			if len(p) != 1 {
				t.Errorf("ctx %d: %d different prompts, want one shared by every stream", ctx, len(p))
			}
		}
		want := fmt.Sprintf(`{"prompt":"article","distinct":false,"sampling":{},"chat_template_kwargs":{},"document_sha256":%q,"instruction_sha256":%q}`,
			sha(requests.Corpus()), sha(requests.DefaultInstruction))
		if got := workloadJSON(t, results); got != want {
			t.Errorf("results.json workload = %s\nwant %s", got, want)
		}
	})

	t.Run("chat: sampling as written, chat_template_kwargs reach the endpoint", func(t *testing.T) {
		results, sent, _ := runWorkload(t, mark, base, rec, measure+`  endpoint = "chat"
}
workload {
  sampling             = { temperature = 0.6, top_p = 0.95 }
  chat_template_kwargs = { enable_thinking = false }
}
matrix "decode" {
  contexts    = ["2K"]
  concurrency = [2]
}
`)
		kwargs := map[string]any{"enable_thinking": false}
		wantTail := renderedTail(t, base, requests.DefaultInstruction, kwargs)
		decode := decodeRequests(sent, maxOutput)
		if len(decode) < 2 {
			t.Fatalf("%d decode requests recorded", len(decode))
		}
		for _, s := range decode {
			sampling, _ := json.Marshal(s.Sampling)
			kw, _ := json.Marshal(s.ChatTemplateKwargs)
			if s.Endpoint != "/v1/chat/completions" || s.PromptTokens != 2048 || !slices.Equal(s.Tail, wantTail) ||
				string(sampling) != `{"temperature":0.6,"top_p":0.95}` || string(kw) != `{"enable_thinking":false}` {
				t.Fatalf("decode request: endpoint %s, %d tokens, sampling %s, chat_template_kwargs %s, tail %v\nwant chat, 2048 tokens, "+
					`{"temperature":0.6,"top_p":0.95}, {"enable_thinking":false}, tail %v`, s.Endpoint, s.PromptTokens, sampling, kw, s.Tail, wantTail)
			}
		}
		if got := workloadJSON(t, results); !strings.Contains(got, `"sampling":{"temperature":0.6,"top_p":0.95},"chat_template_kwargs":{"enable_thinking":false}`) {
			t.Errorf("results.json workload = %s", got)
		}
	})

	t.Run("distinct: C = 8 streams send 8 prompts that differ in their first tokens", func(t *testing.T) {
		results, sent, _ := runWorkload(t, mark, base, rec, measure+`}
workload { distinct = true }
matrix "decode" {
  contexts    = ["2K"]
  concurrency = [8]
}
`)
		byDigest := map[string]sentRequest{}
		for _, s := range decodeRequests(sent, maxOutput) {
			if s.PromptTokens != 2048 {
				t.Fatalf("a decode prompt of %d tokens, want 2048", s.PromptTokens)
			}
			byDigest[s.SHA256] = s
		}
		if len(byDigest) != 8 {
			t.Fatalf("%d different decode prompts, want 8 (one per stream)", len(byDigest))
		}
		var heads [][]int
		for _, s := range byDigest {
			heads = append(heads, s.Head)
		}
		for i := range heads {
			for j := i + 1; j < len(heads); j++ {
				if slices.Equal(heads[i][:16], heads[j][:16]) {
					t.Errorf("two prompts share their first 16 tokens: %v", heads[i][:16])
				}
			}
		}
		// Every stream's prompt was warmed (max_tokens 1, the decode salt) before the cell.
		warm := map[string]bool{}
		for _, s := range sent {
			if s.limit() == 1 {
				warm[s.SHA256] = true
			}
		}
		for d := range byDigest {
			if !warm[d] {
				t.Errorf("a stream's prompt was not warmed before the cell")
			}
		}
		if !results.Workload.Distinct {
			t.Errorf("results.json workload = %s, want distinct", workloadJSON(t, results))
		}
	})

	t.Run("random: 8K token IDs, no short repetition, seed recorded", func(t *testing.T) {
		results, sent, _ := runWorkload(t, mark, base, rec, measure+`}
workload {
  prompt = "random"
  seed   = 42
}
matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1]
}
`)
		decode := decodeRequests(sent, maxOutput)
		if len(decode) == 0 {
			t.Fatal("no decode request recorded")
		}
		for _, s := range decode {
			// Uniform draws from the simulator's ordinary range (about
			// 23K IDs) give about 84% distinct IDs in 8K; a repeated
			// paragraph of a hundred tokens gives 1%.
			if share := float64(s.DistinctIDs) / float64(s.PromptTokens); s.PromptTokens != 8192 || share < 0.5 {
				t.Fatalf("random prompt: %d tokens, %d distinct IDs (%.0f%%); want 8192 tokens, at least 50%% distinct", s.PromptTokens, s.DistinctIDs, share*100)
			}
		}
		if got, want := workloadJSON(t, results), `{"prompt":"random","distinct":false,"sampling":{},"chat_template_kwargs":{},"random_seed":42}`; got != want {
			t.Errorf("results.json workload = %s\nwant %s", got, want)
		}
	})
}

// TestSpeculativeDidNotRunWarning: a server with a speculative block whose
// drafts counter does not move during a cell's window (--sim-spec-off)
// gets the cell warning, in results.json and on the console; the same
// server speculating does not.
func TestSpeculativeDidNotRunWarning(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		simArgs []string
		warned  bool
	}{
		{name: "speculation configured but off", simArgs: []string{"--sim-spec-off"}, warned: true},
		{name: "speculating", warned: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mark := newMark(t)
			t.Cleanup(func() { noLeftovers(t, mark) })
			args := append([]string{"--served-model-name", "qwen", "--sim-tbt", "5ms", "--sim-ttft", "20ms",
				"--speculative-config", `{"method":"dflash","model":"z-lab/Qwen3.5-4B-DFlash","num_speculative_tokens":7}`}, tc.simArgs...)
			base := startSim(t, mark, "Qwen/Qwen3.5-4B", args...)
			dir := t.TempDir()
			spec := dflashSpec(t, dir, "")
			out := filepath.Join(dir, "out")
			r := slogate(t, mark, time.Minute, "", nil, "run", "-endpoint", base, "-out", out, spec)
			if r.Code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
			}
			results := readResults(t, out)
			if len(results.Decode) != 1 {
				t.Fatalf("decode cells %+v", results.Decode)
			}
			c := results.Decode[0]
			if got := warning.Has(c.Warnings, warning.SpeculativeIdle); got != tc.warned {
				t.Errorf("cell warnings %q: the speculative warning present = %v, want %v", c.Warnings, got, tc.warned)
			}
			if got := strings.Contains(r.Stdout+r.Stderr, workloadWarning); got != tc.warned {
				t.Errorf("console shows the speculative warning = %v, want %v\nstdout:\n%s\nstderr:\n%s", got, tc.warned, r.Stdout, r.Stderr)
			}
			md, err := os.ReadFile(filepath.Join(out, "report.md"))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(md), workloadWarning); got != tc.warned {
				t.Errorf("report.md shows the speculative warning = %v, want %v", got, tc.warned)
			}
		})
	}
}

// dflashSpec writes dir/spec.hcl: the Qwen server "sim" (served as "qwen")
// with its DFlash speculative block, 1 s windows of 64 tokens, 1K × 2, and
// extra (more blocks, e.g. a workload) appended.
func dflashSpec(t *testing.T, dir, extra string) string {
	t.Helper()
	spec := filepath.Join(dir, "spec.hcl")
	if err := os.WriteFile(spec, []byte(fmt.Sprintf(`server "sim" {
  model             = "Qwen/Qwen3.5-4B"
  served_model_name = "qwen"
  port              = %d
  speculative {
    method                 = "dflash"
    model                  = "z-lab/Qwen3.5-4B-DFlash"
    num_speculative_tokens = 7
  }
}
measure {
  duration   = "1s"
  max_output = 64
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [2]
}
%s`, freePort(t), extra)), 0o644); err != nil {
		t.Fatal(err)
	}
	return spec
}

// workloadWarning is the cell warning of speculation that did not run, as
// docs/method.md#workload words it.
const workloadWarning = "speculative decoding did not run in this cell (vllm:spec_decode_num_drafts_total did not move): check the server's --speculative-config and its log"

// TestGenerationConfigMinPUnderSpeculation: a model whose generation config
// carries min_p (the simulator's --override-generation-config, as vLLM's)
// makes a speculating server answer every request HTTP 400 although the
// spec sends no min_p: the run ends with exit 3 naming vLLM's message and
// the remedy, sampling = { min_p = 0 }; with that remedy the same server
// measures the cell. The workload is never changed behind the user's back.
func TestGenerationConfigMinPUnderSpeculation(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	t.Cleanup(func() { noLeftovers(t, mark) })
	base := startSim(t, mark, "Qwen/Qwen3.5-4B", "--served-model-name", "qwen", "--sim-tbt", "5ms", "--sim-ttft", "20ms",
		"--override-generation-config", `{"min_p": 0.05}`,
		"--speculative-config", `{"method":"dflash","model":"z-lab/Qwen3.5-4B-DFlash","num_speculative_tokens":7}`)
	tests := []struct {
		name     string
		workload string
		code     int
	}{
		{name: "min_p from the generation config", code: 3},
		{name: "sampling = { min_p = 0 }", workload: "workload {\n  sampling = { min_p = 0 }\n}\n", code: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			spec := dflashSpec(t, dir, tc.workload)
			out := filepath.Join(dir, "out")
			r := slogate(t, mark, time.Minute, "", nil, "run", "-endpoint", base, "-out", out, spec)
			if r.Code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, tc.code, r.Stdout, r.Stderr)
			}
			if tc.code == 0 {
				return
			}
			all := strings.Join(strings.Fields(r.Stdout+r.Stderr), " ")
			for _, want := range []string{
				"server sim rejects every request",
				"HTTP 400",
				"The min_p and logit_bias sampling parameters are not yet supported with speculative decoding.",
				"the min_p comes from the server's defaults: the model's generation_config.json or the server's --override-generation-config",
				"add sampling = { min_p = 0 } to the workload block",
			} {
				if !strings.Contains(all, want) {
					t.Errorf("output lacks %q:\nstdout:\n%s\nstderr:\n%s", want, r.Stdout, r.Stderr)
				}
			}
		})
	}
}

// TestServerFactsFromTheServer: a spec asking kv_cache_dtype "fp8", run
// through -endpoint against a simulator started without it: the server's
// vllm:cache_config_info says cache_dtype "auto", so results.json records
// the server's "auto" beside the spec's "fp8", the console and the report
// warn "spec says kv_cache_dtype fp8; the server reports auto", the report
// shows the server's value, the simulator (its /version ends in
// -slogate-sim) is reported as simulated, not as a GPU, and an assert on
// server.kv_cache_dtype == "fp8" fails (exit 1).
func TestServerFactsFromTheServer(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	t.Cleanup(func() { noLeftovers(t, mark) })
	base := startSim(t, mark, "Qwen/Qwen3.5-4B", "--served-model-name", "qwen", "--sim-tbt", "5ms", "--sim-ttft", "20ms")
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.hcl")
	os.WriteFile(spec, []byte(fmt.Sprintf(`server "sim" {
  model             = "Qwen/Qwen3.5-4B"
  served_model_name = "qwen"
  port              = %d
  kv_cache_dtype    = "fp8"
  labels            = { gpu = "NVIDIA H200" }
}
measure {
  duration   = "1s"
  max_output = 64
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
assert "fp8" {
  condition     = server.kv_cache_dtype == "fp8"
  error_message = "the KV cache must be fp8"
}
`, freePort(t))), 0o644)
	out := filepath.Join(dir, "out")
	r := slogate(t, mark, time.Minute, "", nil, "run", "-endpoint", base, "-out", out, spec)
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1 (the fp8 assert fails)\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout+r.Stderr, "the KV cache must be fp8") {
		t.Errorf("the fp8 assert did not fail with its message\nstdout:\n%s", r.Stdout)
	}
	results := readResults(t, out)
	// The run's warning that kv_cache_dtype disagrees, shown as recorded
	// on the console and in the report.
	i := slices.IndexFunc(results.Warnings, func(w warning.Warning) bool { return w.Code == warning.FactDisagrees && w.Subject == "kv_cache_dtype" })
	if i < 0 {
		t.Fatalf("results.json warnings %+v lack a fact_disagrees warning about kv_cache_dtype", results.Warnings)
	}
	said := results.Warnings[i].String()
	if !strings.Contains(r.Stdout+r.Stderr, said) {
		t.Errorf("console lacks the recorded warning %q\nstdout:\n%s\nstderr:\n%s", said, r.Stdout, r.Stderr)
	}
	s := results.Server
	if s.KVCacheDtype != "auto" || s.Asked == nil || s.Asked.KVCacheDtype != "fp8" || s.Stated["kv_cache_dtype"] != "vllm:cache_config_info" {
		t.Errorf("results.json server: kv_cache_dtype %q, asked %+v, stated %v; want the server's auto beside the spec's fp8", s.KVCacheDtype, s.Asked, s.Stated)
	}
	// Qwen3.5 is hybrid: block_size 2112, prefix caching on (vLLM PR #50991).
	if !s.Simulated || s.PrefixCaching == nil || !*s.PrefixCaching || s.BlockSize != 2112 {
		t.Errorf("results.json server: simulated %v, prefix caching %v, block size %d; want true, on, 2112", s.Simulated, s.PrefixCaching, s.BlockSize)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{said, "auto (the spec asked fp8)", "Simulated by slogate sim (no GPU)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(string(md), "Discrete GPU") {
		t.Errorf("report.md calls the simulator a discrete GPU:\n%s", md)
	}
}
