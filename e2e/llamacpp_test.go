package e2e

// slogate against the real llama-server (engine = "llamacpp",
// docs/llamacpp.md): a spec slogate launches, the same server through
// -endpoint, a model path that does not exist. The server and the models
// are llamaServer's (llamacpp_infra_test.go): without them these tests
// skip saying why, and fail under CI=true. Each keeps its windows short
// (-t 1, 2 s cells, 64-token outputs): the real-engine suite must stay
// within a few minutes on two cores.
//
// The helpers (llamaSpec, runLlama, llamaCell) are for every real-engine
// test: they write a llamacpp spec and run slogate on it.

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	res "github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// llamaWorkload is a short instruction: the built-in one renders to about
// 360 tokens in tiny.gguf's 380-token vocabulary, more than a short context.
const llamaWorkload = `
workload { instruction = "Write about it." }
`

// llamaSpecOpts is one llamacpp server block and the rest of its spec.
type llamaSpecOpts struct {
	// Command is the executable (llamaServer's); "" leaves it out, for
	// -endpoint.
	Command string
	// Model is the GGUF path (-m).
	Model string
	// Port is the server's port (a free one from freePort).
	Port int
	// MaxModelLen and MaxNumSeqs are the attributes, 0 to leave them out.
	MaxModelLen, MaxNumSeqs int
	// Args are the server's args; nil means ["-t", "1"] (one thread: the
	// machine's other core stays slogate's).
	Args []string
	// Server holds more lines of the server block.
	Server string
	// Body is the rest of the spec: measure, matrices, assertions (add
	// llamaWorkload for contexts below about 400 tokens).
	Body string
}

// llamaSpec writes a spec of one llamacpp server "tiny" (served as
// "tiny") and returns its path.
func llamaSpec(t *testing.T, o llamaSpecOpts) string {
	t.Helper()
	args := o.Args
	if args == nil {
		args = []string{"-t", "1"}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "server \"tiny\" {\n  engine            = \"llamacpp\"\n")
	if o.Command != "" {
		fmt.Fprintf(&b, "  command           = %q\n", o.Command)
	}
	fmt.Fprintf(&b, "  model             = %q\n  served_model_name = \"tiny\"\n  host              = \"127.0.0.1\"\n  port              = %d\n  ready_timeout     = \"60s\"\n", o.Model, o.Port)
	if o.MaxModelLen > 0 {
		fmt.Fprintf(&b, "  max_model_len     = %d\n", o.MaxModelLen)
	}
	if o.MaxNumSeqs > 0 {
		fmt.Fprintf(&b, "  max_num_seqs      = %d\n", o.MaxNumSeqs)
	}
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = fmt.Sprintf("%q", a)
	}
	fmt.Fprintf(&b, "  args              = [%s]\n%s}\n%s\n", strings.Join(q, ", "), o.Server, o.Body)
	return specFile(t, "spec.hcl", b.String())
}

// runLlama runs slogate with args (within 4 minutes) and checks that no
// process tagged with mark is left, llama-server included.
func runLlama(t *testing.T, mark string, args ...string) result {
	t.Helper()
	r := slogate(t, mark, 4*time.Minute, "", nil, args...)
	noLeftovers(t, mark)
	return r
}

// llamaCell is the decode cell of results at ctx and conc, failing the
// test without one.
func llamaCell(t *testing.T, r *res.Results, ctx, conc int) res.DecodeCell {
	t.Helper()
	for _, c := range r.Decode {
		if c.Context == ctx && c.Concurrency == conc {
			return c
		}
	}
	t.Fatalf("no decode cell at context %d, concurrency %d in %+v", ctx, conc, r.Decode)
	return res.DecodeCell{}
}

// TestLlamaCppRun: a spec slogate launches on llama-server passes: the
// launch renders -c as max_model_len × --parallel (plan says so), the
// version is /props' build_info, the KV capacity is the server's -c from
// /props in 2 slots, cells at concurrency ≤ --parallel are valid and the
// one above it queued (llamacpp:requests_deferred), one stream's
// per_request_tps is within 10 % of the server's own predicted_per_second,
// the counter and rate cross-checks hold, requests.jsonl records the
// server's timings and the measured prefill request reused nothing, and
// the server is stopped with nothing left behind.
func TestLlamaCppRun(t *testing.T) {
	server, models := llamaServer(t)
	mark := newMark(t)
	spec := llamaSpec(t, llamaSpecOpts{Command: server, Model: filepath.Join(models, "tiny.gguf"), Port: freePort(t),
		MaxModelLen: 512, MaxNumSeqs: 2, Body: llamaWorkload + `
measure {
  duration   = "2s"
  max_output = 64
}
prefill { contexts = ["256", "384"] }
matrix "decode" {
  contexts    = ["256"]
  concurrency = [1, 2, 4]
}
assert "streams" {
  condition     = decode["256"][1].per_request_tps > 1
  error_message = "no tokens"
}
`})
	plan := runLlama(t, mark, "plan", spec)
	if plan.Code != 0 || !strings.Contains(plan.Stdout, " -c 1024 --parallel 2 ") ||
		!strings.Contains(plan.Stdout, "-c 1024 = max_model_len 512 × --parallel 2: llama-server splits -c over its slots") {
		t.Fatalf("plan (exit %d) does not say how -c was rendered:\n%s%s", plan.Code, plan.Stdout, plan.Stderr)
	}
	if !regexp.MustCompile(`GPU time: [0-9.]+ GPU-hours \(× 1 GPU\); none on a CPU build \(no GPU found at run time\): then the cost is [0-9ms.]+ of server time`).MatchString(plan.Stdout) ||
		!strings.Contains(plan.Stdout, "will queue: 4 requests > --parallel 2: 2 will wait") {
		t.Errorf("plan does not give a CPU build's server time or name --parallel:\n%s", plan.Stdout)
	}
	out := filepath.Join(t.TempDir(), "out")
	r := runLlama(t, mark, "run", "-out", out, spec)
	starved := starvedOnly(t, r.Code, out)
	if r.Code != 0 && !starved {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	results := readResults(t, out)
	srv := results.Server
	if srv.Engine != "llamacpp" || !strings.HasPrefix(srv.Version, "b") || srv.Stated["version"] != "GET /props (build_info)" {
		t.Errorf("engine %q, version %q from %q; want llamacpp's build_info from GET /props", srv.Engine, srv.Version, srv.Stated["version"])
	}
	if srv.KVCacheTokens != 1024 || srv.KVCacheSource != vocab.KVSourceProps || srv.KVCacheSlots != 2 {
		t.Errorf("KV cache %d tokens from %q in %d slots, want the server's -c 1024 from props in 2 slots", srv.KVCacheTokens, srv.KVCacheSource, srv.KVCacheSlots)
	}
	if !strings.Contains(r.Stdout, "KV cache 1024 tokens (from props: GET /props (total_slots × default_generation_settings.n_ctx): 2 slots × 512 tokens), 512 per slot over 2 slots") {
		t.Errorf("the run does not say where the KV capacity came from:\n%s", r.Stdout)
	}
	for _, conc := range []int{1, 2} {
		if c := llamaCell(t, results, 256, conc); !measuredOrStarved(c.Status, vocab.StatusValid, starved) || c.OutputTokens <= 0 {
			t.Errorf("256 × %d: %s (%s), %d tokens; want valid", conc, c.Status, c.Reason, c.OutputTokens)
		}
	}
	if c := llamaCell(t, results, 256, 4); !measuredOrStarved(c.Status, vocab.StatusQueued, starved) || !starved && !strings.Contains(c.Reason, "waited") {
		t.Errorf("256 × 4 on 2 slots: %s (%s), want queued", c.Status, c.Reason)
	}
	if len(results.Prefill) != 2 || !measuredOrStarved(results.Prefill[0].Status, vocab.StatusValid, starved) ||
		!measuredOrStarved(results.Prefill[1].Status, vocab.StatusValid, starved) {
		t.Errorf("prefill: %+v", results.Prefill)
	}
	// The server's own clock: one stream's per_request_tps within 10 % of
	// the median of the server's predicted_per_second for the requests
	// that finished in the window, no counter or rate warning.
	// Held strictly only on a machine not loaded past its cores: under
	// the full suite with other work beside it (load average 20) CI saw
	// the client and the server disagree by 19.5 % at one stream, the
	// very case the warning is there to report.
	one := llamaCell(t, results, 256, 1)
	loaded := loadedMachine()
	if s := one.ServerPerRequestTPS; s == nil {
		t.Errorf("256 × 1: per_request_tps %.1f and no server rate; want the server's timings.predicted_per_second", one.PerRequestTPS)
	} else if math.Abs(*s-one.PerRequestTPS) > 0.10*one.PerRequestTPS {
		report := t.Errorf
		if loaded {
			report = t.Logf
		}
		report("256 × 1 (load average %.1f): per_request_tps %.1f, the server's %.1f; want within 10 %%", loadAverage(), one.PerRequestTPS, *s)
	}
	// The counter cross-check is exact (tokens, not time): no cell may
	// warn of it. The rate cross-check is held strictly at one stream
	// (above and here); with two or more streams on this 2-core machine
	// a client starved by the rest of the suite reads its last tokens
	// late (CI saw +17 % at 256 × 2 under the full suite), which is what
	// the warning is there to say, so it is logged, not failed.
	for _, c := range results.Decode {
		for _, w := range c.Warnings {
			switch {
			case w.Code == warning.ServerCounterGap,
				w.Code == warning.ServerRequestTPSGap && c.Concurrency == 1 && !loaded:
				t.Errorf("%d × %d: %s", c.Context, c.Concurrency, w)
			case w.Code == warning.ServerRequestTPSGap:
				t.Logf("%d × %d (load average %.1f): %s", c.Context, c.Concurrency, loadAverage(), w)
			}
		}
	}
	if len(srv.GPUs) == 0 { // a CPU server: its cost is server time
		if g := results.GPUTime; g == nil || !g.CPU || g.GPUs != 0 || g.GPUSeconds != 0 || g.ServerS <= 0 ||
			!strings.Contains(r.Stdout, "tiny: GPU time none: a CPU server, no GPU found (") {
			t.Errorf("gpu_time %+v; want a CPU server's server-seconds, said so:\n%s", g, r.Stdout)
		}
		md, _ := os.ReadFile(filepath.Join(out, "report.md"))
		if !strings.Contains(string(md), "# tiny.gguf on CPU (no GPU)") || !strings.Contains(string(md), "- Type: CPU server: no GPU found (nvidia-smi)") ||
			strings.Contains(string(md), "unknown GPU") {
			t.Errorf("report.md does not call it a CPU server:\n%s", md)
		}
	}
	recs := llamaRequests(t, out)
	var timed, prefill int
	for _, rec := range recs {
		if rec.ServerTimings != nil {
			timed++
		}
		if rec.Phase == vocab.PhasePrefill && rec.Purpose == "" {
			prefill++
			if rec.ServerTimings == nil || rec.ServerTimings.CacheN != 0 || rec.ServerTimings.PromptN != rec.PromptTokens {
				t.Errorf("a measured prefill request reused the server's cache (cache_prompt false): %+v", rec.ServerTimings)
			}
		}
	}
	if timed == 0 || prefill != 2 { // 384's prompt shares its document's start with 256's: cold only by cache_prompt false
		t.Errorf("%d of %d requests.jsonl records carry the server's timings, %d measured prefill requests", timed, len(recs), prefill)
	}
	log, _ := os.ReadFile(filepath.Join(out, "server.log"))
	if !strings.Contains(string(log), "n_slots = 2, n_ctx_slot = 512, kv_unified = 'false'") {
		t.Errorf("server.log lacks the slot line slogate reads:\n%s", log)
	}
}

// llamaRequests reads out/requests.jsonl.
func llamaRequests(t *testing.T, out string) []res.RequestRecord {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var recs []res.RequestRecord
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r res.RequestRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("requests.jsonl: %v: %s", err, line)
		}
		recs = append(recs, r)
	}
	return recs
}

// TestLlamaCppEndpoint: the same server started outside slogate with
// --api-key (every endpoint but /health then needs it: /props, /slots,
// /metrics, /tokenize, /apply-template, /v1/models) and measured through
// -endpoint (no max_model_len in the spec): the version is read, the KV
// capacity is /props' slots × n_ctx, -c, with the warning that /props
// does not say whether the pool is unified; a cell whose context +
// max_output exceeds a slot is over capacity before anything is sent (the
// server would cut its requests short), one within a slot runs.
func TestLlamaCppEndpoint(t *testing.T) {
	t.Parallel()
	server, models := llamaServer(t)
	mark := newMark(t)
	p := startLlama(t, server, mark, "-m", filepath.Join(models, "tiny.gguf"), "--alias", "tiny", "-c", "1024", "--parallel", "2", "-t", "1", "--metrics",
		"--api-key", "e2e-llama-key")
	if code, _, err := get(p.base + "/props"); err != nil || code != 401 {
		t.Fatalf("GET /props without the key: %d, %v; want 401", code, err)
	}
	spec := llamaSpec(t, llamaSpecOpts{Model: filepath.Join(models, "tiny.gguf"), Port: 1, Server: "  api_key           = \"e2e-llama-key\"\n", Body: llamaWorkload + `
measure {
  duration   = "2s"
  max_output = 64
}
matrix "decode" {
  contexts    = ["256", "480"]
  concurrency = [1]
}
`})
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark+"-slogate", 4*time.Minute, "", nil, "run", "-endpoint", p.base, "-out", out, spec)
	if r.Code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	results := readResults(t, out)
	if !strings.HasPrefix(results.Server.Version, "b") {
		t.Errorf("version %q: GET /props was not read with the key", results.Server.Version)
	}
	if results.Server.KVCacheTokens != 1024 || results.Server.KVCacheSlots != 2 {
		t.Errorf("KV cache %d tokens in %d slots, want the server's -c 1024 in 2", results.Server.KVCacheTokens, results.Server.KVCacheSlots)
	}
	if !strings.Contains(r.Stdout+r.Stderr, "which /props does not say: set kv_cache_tokens in the spec if so") {
		t.Errorf("no warning that an endpoint's pool may be unified:\n%s%s", r.Stdout, r.Stderr)
	}
	if c := llamaCell(t, results, 256, 1); c.Status != vocab.StatusValid {
		t.Errorf("256 × 1: %s (%s), want valid", c.Status, c.Reason)
	}
	over := llamaCell(t, results, 480, 1)
	if over.Status != vocab.StatusOverCapacity || over.Reason != "480 + 64 = 544 tokens a request > a slot's KV cache 512 tokens (1024 over 2 slots)" || over.Completed != 0 {
		t.Errorf("480 × 1: %s (%q), %d completed; want over capacity by the slot, nothing sent", over.Status, over.Reason, over.Completed)
	}
	reqs, _ := os.ReadFile(filepath.Join(out, "requests.jsonl"))
	if strings.Contains(string(reqs), `"context":480`) {
		t.Errorf("requests.jsonl has a request of the over-capacity cell:\n%s", reqs)
	}
}

// TestLlamaCppStartFails: a server that exits while loading makes slogate
// exit 3 quoting llama-server's own error from the last lines of
// server.log, and, where the log names what the spec should change, says
// so: a model path that does not exist; --split-mode tensor on a build
// that finds no GPU.
func TestLlamaCppStartFails(t *testing.T) {
	t.Parallel()
	server, models := llamaServer(t)
	missing := filepath.Join(t.TempDir(), "nonexistent", "x.gguf")
	tests := []struct {
		name  string
		model string
		args  []string
		want  []string
	}{
		{name: "missing model", model: missing,
			want: []string{"failed to open GGUF file '" + missing + "' (No such file or directory)", "llama_server: exiting due to model loading error"}},
		{name: "split mode tensor without a GPU", model: filepath.Join(models, "tiny.gguf"), args: []string{"-t", "1", "--split-mode", "tensor"},
			want: []string{"LLAMA_SPLIT_MODE_TENSOR needs >= 1 devices", "llama-server found no GPU for --split-mode tensor in args"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mark := newMark(t)
			spec := llamaSpec(t, llamaSpecOpts{Command: server, Model: tt.model, Port: freePort(t), Args: tt.args, Body: `
matrix "decode" {
  contexts    = ["256"]
  concurrency = [1]
}
`})
			r := runLlama(t, mark, "run", "-out", filepath.Join(t.TempDir(), "out"), spec)
			all := r.Stdout + r.Stderr
			if r.Code != 3 || !strings.Contains(all, "exited before it was ready") {
				t.Errorf("exit %d, want 3 with the server's exit:\n%s", r.Code, all)
			}
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("the output lacks %q:\n%s", w, all)
				}
			}
		})
	}
}

// TestLlamaCppCutShortIsAnError: with the slots' limit hidden from slogate
// (the spec's kv_cache_tokens replaces what /props says, so the cell is not
// over capacity), a request whose prompt fits a slot while prompt +
// max_output does not is sent, and llama-server cuts it short without an
// error (finish_reason "length"); the stream ending short of what
// ignore_eos asked is the cell's error, exit 3, never a fast cell.
func TestLlamaCppCutShortIsAnError(t *testing.T) {
	t.Parallel()
	server, models := llamaServer(t)
	mark := newMark(t)
	p := startLlama(t, server, mark, "-m", filepath.Join(models, "tiny.gguf"), "--alias", "tiny", "-c", "1024", "--parallel", "2", "-t", "1", "--metrics")
	spec := llamaSpec(t, llamaSpecOpts{Model: filepath.Join(models, "tiny.gguf"), Port: 1, Server: "  kv_cache_tokens   = 100000\n", Body: llamaWorkload + `
measure {
  duration   = "2s"
  max_output = 64
}
matrix "decode" {
  contexts    = ["480"]
  concurrency = [1]
}
`})
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark+"-slogate", 4*time.Minute, "", nil, "run", "-endpoint", p.base, "-out", out, spec)
	c := llamaCell(t, readResults(t, out), 480, 1)
	if r.Code != 3 || c.Status != vocab.StatusError || !strings.Contains(c.Reason, "of the 64 tokens ignore_eos asked for (finish_reason \"length\"): it cut the request short") {
		t.Errorf("exit %d, cell %s (%s); want exit 3 and the cut stream as the cell's error\n%s%s", r.Code, c.Status, c.Reason, r.Stdout, r.Stderr)
	}
}
