package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/vocab"
)

// sglangSeedSpec is the Qwen DFlash seed (specs/sglang/) shrunk to the
// simulator and a few seconds: engine = "sglang", DFlash with 7 tokens (no
// max_num_seqs, so SGLang's 48), a KV cache of 1,000,000 tokens, and
// floor the assert at 8K × 1 must clear. The cells: 8K × 1 valid, 8K × 64
// queued (48 of 64 run), 32K × 64 over capacity (64 × 33,024 > 1,000,000).
func sglangSeedSpec(t *testing.T, port int, floor float64, simArgs string) string {
	return specFile(t, "sglang.hcl", fmt.Sprintf(`
server "qwen" {
  engine                 = "sglang"
  model                  = "Qwen/Qwen3.5-4B"
  served_model_name      = "qwen"
  tensor_parallel_size   = 1
  max_model_len          = 65536
  gpu_memory_utilization = 0.872563
  attention_backend      = "fa3"
  speculative {
    method                 = "dflash"
    model                  = "z-lab/Qwen3.5-4B-DFlash"
    num_speculative_tokens = 7
  }
  args          = ["--trust-remote-code", "--sim-kv-tokens", "1000000", "--sim-tbt", "4ms", "--sim-ttft", "20ms", "--sim-prefill-tps", "2000000", "--sim-drain-poll", "100ms"%s]
  host          = "127.0.0.1"
  port          = %d
  api_key       = "e2e-sglang-key"
  ready_timeout = "20s"
}
measure {
  duration   = "1s"
  max_output = 256
}
matrix "decode" {
  contexts    = ["8K", "32K"]
  concurrency = [1, 64]
}
assert "decode_8k_1" {
  condition     = decode["8K"][1].total_tps >= %g
  error_message = "a single 8K stream decodes below the floor"
}
`, simArgs, port, floor))
}

// TestSGLangSeedRun (issue 23): a seed-shaped spec with engine = "sglang"
// boots the SGLang simulator, measures, asserts, reads the KV capacity
// from /server_info (and, with /server_info gone, from the log), marks the
// queued and over-capacity cells, and stops the server with nothing left.
func TestSGLangSeedRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		floor   float64
		simArgs string
		code    int
		source  string
		stated  string // where the speculative method was read
		seqsBy  string // where the running limit (DFLASH's 48) was read
		// cells are the decode cells measured; the log's case leaves out
		// 8K × 64 (64 streams through the 3 s steady hold and the window,
		// the queued status shown by the first case): its KV capacity
		// still decides 32K × 64 over capacity.
		cells string
	}{
		{name: "pass, KV from /server_info", floor: 10, code: 0, source: vocab.KVSourceServerInfo, stated: "GET /server_info",
			seqsBy: "GET /server_info internal_states[].effective_max_running_requests_per_dp",
			cells:  "ctx=8K/conc=1$|ctx=8K/conc=64$|ctx=32K/conc=64$"},
		{name: "fail, KV from the log", floor: 1e6, simArgs: `, "--sim-kv-log-only"`, code: 1, source: vocab.KVSourceLog,
			seqsBy: "server.log (max_running_requests=)",
			cells:  "ctx=8K/conc=1$|ctx=32K/conc=64$"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mark := newMark(t)
			out := filepath.Join(t.TempDir(), "out")
			r := slogate(t, mark, time.Minute, "", nil, "run", "-sim", "-out", out, "-run", tc.cells+"|assert",
				sglangSeedSpec(t, freePort(t), tc.floor, tc.simArgs))
			if r.Code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, tc.code, r.Stdout, r.Stderr)
			}
			noLeftovers(t, mark)
			if !strings.Contains(r.Stderr+r.Stdout, "slogate sim --engine sglang serve Qwen/Qwen3.5-4B") {
				t.Errorf("the launch is not the SGLang simulator's:\n%s", r.Stderr)
			}
			results := readResults(t, out)
			s := results.Server
			if s.Engine != "sglang" || s.KVCacheTokens != 1_000_000 || s.KVCacheSource != tc.source || s.Speculative != "DFLASH" && tc.stated != "" {
				t.Errorf("server: engine %q, KV %d from %q, speculative %q; want sglang, 1000000 from %q, DFLASH", s.Engine, s.KVCacheTokens, s.KVCacheSource, s.Speculative, tc.source)
			}
			if tc.stated != "" && s.Stated["speculative"] != tc.stated {
				t.Errorf("speculative stated by %q, want %q", s.Stated["speculative"], tc.stated)
			}
			if s.MaxNumSeqs != 48 || s.Stated["max_num_seqs"] != tc.seqsBy {
				t.Errorf("max_num_seqs %d stated by %q, want 48 (DFLASH's) by %q", s.MaxNumSeqs, s.Stated["max_num_seqs"], tc.seqsBy)
			}
			want := map[[2]int]vocab.Status{{8192, 1}: vocab.StatusValid, {8192, 64}: vocab.StatusQueued, {32768, 64}: vocab.StatusOverCapacity}
			if !strings.Contains(tc.cells, "ctx=8K/conc=64$") {
				delete(want, [2]int{8192, 64})
			}
			for _, c := range results.Decode {
				w, ok := want[[2]int{c.Context, c.Concurrency}]
				if !ok {
					continue
				}
				delete(want, [2]int{c.Context, c.Concurrency})
				if c.Status != w {
					t.Errorf("%d × %d: %s (%s), want %s", c.Context, c.Concurrency, c.Status, c.Reason, w)
				}
				switch w {
				case vocab.StatusQueued:
					if !strings.Contains(c.Reason, "of 64 requests") {
						t.Errorf("queued reason %q does not say how many of 64 ran", c.Reason)
					}
				case vocab.StatusOverCapacity:
					if c.Reason != "64 × (32768 + 256) = 2113536 tokens > KV cache 1000000 tokens" {
						t.Errorf("over-capacity reason %q", c.Reason)
					}
				case vocab.StatusValid:
					if c.SpeculativeAcceptLen == nil || *c.SpeculativeAcceptLen <= 1 {
						t.Errorf("8K × 1: speculative acceptance %v, want SGLang's sglang:spec_accept_length above 1", c.SpeculativeAcceptLen)
					}
				}
			}
			if len(want) > 0 {
				t.Errorf("cells not measured: %v", want)
			}
			if tc.code == 1 && !strings.Contains(r.Stdout, "a single 8K stream decodes below the floor") {
				t.Errorf("the failed assert's message is missing:\n%s", r.Stdout)
			}
			if log, err := os.ReadFile(filepath.Join(out, "server.log")); err != nil || strings.Contains(string(log), "e2e-sglang-key") {
				t.Errorf("server.log unreadable (%v) or holds the API key", err)
			}
		})
	}
}

// TestEngineComparison (issue 23): one spec with a vLLM and an SGLang server
// for the same model runs both, one after the other, each on its own
// simulator; the merged report names each server's engine, and diff puts
// their cells side by side with intervals, lists the engine among the
// differing settings, needs -allow-settings-change, and informs only (exit
// 0 even where SGLang is slower).
func TestEngineComparison(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	server := func(name, engine string, port int, extra string) string {
		return fmt.Sprintf(`
server %q {
  engine            = %q
  model             = "Qwen/Qwen3.5-4B"
  served_model_name = "qwen"
  max_model_len     = 32768
  max_num_seqs      = 8
  host              = "127.0.0.1"
  port              = %d
  ready_timeout     = "20s"
  args              = ["--sim-tbt", %s, "--sim-ttft", "20ms", "--sim-prefill-tps", "2000000", "--sim-kv-tokens", "500000"%s]
}`, name, engine, port, map[string]string{"vllm": `"4ms"`, "sglang": `"8ms"`}[engine], extra)
	}
	path := specFile(t, "engines.hcl", server("vllm", "vllm", freePort(t), "")+server("sglang", "sglang", freePort(t), `, "--sim-drain-poll", "100ms"`)+`
measure {
  duration   = "500ms"
  max_output = 128
  repeat     = 4
}
matrix "decode" {
  contexts    = ["4K"]
  concurrency = [4]
}
`)
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-sim", "-out", out, path)
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	noLeftovers(t, mark)
	a, b := filepath.Join(out, "vllm", "results.json"), filepath.Join(out, "sglang", "results.json")
	for _, p := range []string{a, b} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%v\n%s", err, r.Stdout)
		}
	}
	merged := filepath.Join(t.TempDir(), "merged")
	if m := slogate(t, mark, time.Minute, "", nil, "merge", "-out", merged, filepath.Join(out, "vllm"), filepath.Join(out, "sglang")); m.Code != 0 {
		t.Fatalf("merge: exit %d\n%s%s", m.Code, m.Stdout, m.Stderr)
	}
	md, err := os.ReadFile(filepath.Join(merged, "report.md"))
	if err != nil || !strings.Contains(string(md), "| vllm |") || !strings.Contains(string(md), "| Engine |") ||
		!strings.Contains(string(md), "| sglang |") {
		t.Errorf("merged report lacks the engines (%v):\n%s", err, md)
	}
	// Each report is headed with its own run's engine and version: the
	// SGLang run's said "vllm · 0.5.5-slogate-sim".
	for _, h := range []struct{ file, want string }{
		{filepath.Join(out, "sglang", "report.md"), "\nsglang · 0.5.5-slogate-sim · "},
		{filepath.Join(out, "sglang", "report.html"), `<p class="summary">sglang · 0.5.5-slogate-sim · `},
		{filepath.Join(out, "vllm", "report.md"), "\nvllm · "},
		{filepath.Join(merged, "report.md"), "\nsglang · 0.5.5-slogate-sim · "},
		{filepath.Join(merged, "report.md"), "| sglang · 0.5.5-slogate-sim |"},
		{filepath.Join(merged, "report.html"), `<p class="summary">sglang · 0.5.5-slogate-sim · `},
	} {
		if b, err := os.ReadFile(h.file); err != nil || !strings.Contains(string(b), h.want) {
			t.Errorf("%s is not headed %q (%v):\n%s", h.file, h.want, err, b)
		}
	}
	// The side-by-side table holds each server's own cell in its column,
	// the numbers its results.json recorded.
	want := "| decode 4K × 4 |"
	for _, p := range []string{a, b} {
		c := readResults(t, filepath.Dir(p)).Decode[0]
		want += fmt.Sprintf(" %s tok/s · TTFT %s ms · TBT %s ms |", numfmt.Fixed(c.TotalTPS, 1), numfmt.Fixed(c.TTFTMs, 0), numfmt.Fixed(c.TBTMs, 1))
	}
	if !strings.Contains(string(md), "| Cell | vllm (vLLM ") || !strings.Contains(string(md), " | sglang (SGLang 0.5.5-slogate-sim) |") ||
		!strings.Contains(string(md), want) {
		t.Errorf("merged report lacks the side-by-side row %q under a header naming each engine:\n%s", want, md)
	}
	refused := slogate(t, mark, time.Minute, "", nil, "diff", a, b)
	if refused.Code != 2 || !strings.Contains(refused.Stderr, "engine: vllm → sglang") {
		t.Errorf("diff without -allow-settings-change: exit %d, want 2 naming the engine\n%s", refused.Code, refused.Stderr)
	}
	d := slogate(t, mark, time.Minute, "", nil, "diff", "-allow-settings-change", a, b)
	if d.Code != 0 {
		t.Errorf("diff across engines: exit %d, want 0 (it informs)\n%s%s", d.Code, d.Stdout, d.Stderr)
	}
	for _, w := range []string{"engine: vllm → sglang", "SGLang 0.5.5-slogate-sim, simulated", "version vLLM ", "→ SGLang 0.5.5-slogate-sim",
		"--max-running-requests 8 added", "total_tps", "CI ", "engines differ (vLLM → SGLang): the comparison informs"} {
		if !strings.Contains(d.Stdout, w) {
			t.Errorf("diff output lacks %q:\n%s", w, d.Stdout)
		}
	}
}

// TestEngineDiagnostics (issue 23): validate names the file and line of an
// unknown engine (with the closest), an attribute SGLang cannot take, and
// a speculative method SGLang lacks, and exits 2.
func TestEngineDiagnostics(t *testing.T) {
	t.Parallel()
	path := specFile(t, "bad.hcl", `server "a" {
  model  = "m"
  engine = "sglng"
}
server "b" {
  engine                 = "sglang"
  model                  = "m"
  enable_expert_parallel = true
  speculative {
    method = "suffix"
  }
}
matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1]
}
`)
	r := slogate(t, newMark(t), 30*time.Second, "", nil, "validate", path)
	if r.Code != 2 {
		t.Fatalf("exit %d, want 2\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	all := strings.Join(strings.Fields(r.Stdout+r.Stderr), " ") // diagnostics wrap at 100 columns
	for _, w := range []string{
		"Unknown engine", "on " + path + " line 3", `Did you mean "sglang"?`,
		"Attribute not supported by SGLang", "on " + path + " line 8", `SGLang has no equivalent of enable_expert_parallel (engine = "sglang")`,
		"Speculative method not supported by SGLang", "on " + path + " line 10", `SGLang has no speculative method "suffix"`,
	} {
		if !strings.Contains(all, w) {
			t.Errorf("validate output lacks %q:\n%s", w, all)
		}
	}
}

// TestSGLangDPStop (issue 23): an SGLang server with two data-parallel
// ranks, whose schedulers leave the server's process tree as SGLang's do
// (#23627, imitated by the simulator), is stopped with nothing left, and
// its KV capacity is both ranks' /server_info token_capacity.
func TestSGLangDPStop(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	path := specFile(t, "dp.hcl", fmt.Sprintf(`
server "qwen" {
  engine             = "sglang"
  model              = "Qwen/Qwen3.5-4B"
  served_model_name  = "qwen"
  data_parallel_size = 2
  max_model_len      = 16384
  host               = "127.0.0.1"
  port               = %d
  ready_timeout      = "20s"
  args               = ["--sim-kv-tokens", "300000", "--sim-tbt", "4ms", "--sim-ttft", "20ms", "--sim-prefill-tps", "2000000", "--sim-drain-poll", "100ms"]
}
measure {
  duration   = "500ms"
  max_output = 64
}
matrix "decode" {
  contexts    = ["4K"]
  concurrency = [2]
}
`, freePort(t)))
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, time.Minute, "", nil, "run", "-sim", "-out", out, path)
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	noLeftovers(t, mark)
	s := readResults(t, out).Server
	if s.KVCacheTokens != 600_000 || s.KVCacheSource != vocab.KVSourceServerInfo || s.KVCacheEngines != 2 {
		t.Errorf("KV %d from %q over %d engines, want 600000 from server_info over 2", s.KVCacheTokens, s.KVCacheSource, s.KVCacheEngines)
	}
}
