package sim

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/slogate/slogate/internal/exit"
)

func TestParseSeedLaunchCommands(t *testing.T) {
	tests := []struct {
		name           string
		served         []string
		maxLen, tp     int
		dtype          string
		maxSeqs        int
		numSpeculative int
		wantIgnored    []string
	}{
		{"qwen", []string{"qwen"}, 262144, 1, "auto", 0, 7, []string{"--trust-remote-code",
			"--enable-auto-tool-choice", "--tool-call-parser qwen3_coder", "--attention-backend flash_attn"}},
		{"glm", []string{"nvidia/GLM-5.3-Flash-NVFP4"}, 1048576, 2, "fp8", 32, 7, []string{
			"--enable-auto-tool-choice", "--tool-call-parser glm47", "--enable-expert-parallel",
			"--enable-ep-weight-filter", `--model-loader-extra-config {"enable_multithread_load":true,"num_threads":128}`,
			"--enable-chunked-prefill", "--attention-backend FLASHINFER_MLA_SPARSE_SM90", "--linear-backend humming", "--moe-backend humming"}},
		{"ling", []string{"ling"}, 262144, 2, "auto", 0, 0, []string{"--trust-remote-code",
			"--enable-auto-tool-choice", "--tool-call-parser ling3", "--mamba-cache-mode align"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseServe(seedArgv[tt.name])
			if err != nil {
				t.Fatal(err)
			}
			spec := 0
			if c.Speculative != nil {
				spec = c.Speculative.NumSpeculativeTokens
			}
			got := []any{c.ServedNames, c.MaxModelLen, c.TensorParallel, c.KVCacheDtype, c.MaxNumSeqs, spec, c.Ignored, c.APIKeys}
			want := []any{tt.served, tt.maxLen, tt.tp, tt.dtype, tt.maxSeqs, tt.numSpeculative, tt.wantIgnored, []string{"k"}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if p := chooseProfile(c); p.Name != tt.name {
				t.Errorf("profile %s, want %s", p.Name, tt.name)
			}
		})
	}
}

func TestParseForms(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		check func(c *Config) bool
	}{
		{"equals form", []string{"m", "--port=9000"}, func(c *Config) bool { return c.Port == 9000 }},
		{"underscores", []string{"m", "--max_num_seqs", "7"}, func(c *Config) bool { return c.MaxNumSeqs == 7 }},
		{"short -tp", []string{"m", "-tp", "4"}, func(c *Config) bool { return c.TensorParallel == 4 }},
		{"model flag", []string{"--model", "x/y"}, func(c *Config) bool { return c.Model == "x/y" && c.ServedNames[0] == "x/y" }},
		{"served names nargs", []string{"m", "--served-model-name", "a", "b", "--port", "1"},
			func(c *Config) bool { return len(c.ServedNames) == 2 && c.Port == 1 }},
		{"128k is decimal", []string{"m", "--max-model-len", "128k"}, func(c *Config) bool { return c.MaxModelLen == 128000 }},
		{"256K is binary", []string{"m", "--max-model-len", "256K"}, func(c *Config) bool { return c.MaxModelLen == 262144 }},
		{"auto", []string{"m", "--max-model-len", "auto"}, func(c *Config) bool { return c.MaxModelLen == 0 }},
		{"no prefix caching", []string{"m", "--no-enable-prefix-caching"}, func(c *Config) bool { return !*c.PrefixCaching }},
		{"dotted speculative config", []string{"m", "--speculative-config.method", "dflash", "--speculative-config.num_speculative_tokens", "5"},
			func(c *Config) bool {
				return c.Speculative.Method == "dflash" && c.Speculative.NumSpeculativeTokens == 5
			}},
		{"dflash detected from the draft name", []string{"m", "-sc", `{"model":"z/Foo-DFlash","num_speculative_tokens":3}`},
			func(c *Config) bool { return c.Speculative.Method == "dflash" }},
		{"unknown flag with value", []string{"m", "--foo", "bar", "--port", "2"},
			func(c *Config) bool { return c.Port == 2 && c.Ignored[0] == "--foo bar" }},
		{"vLLM flag typo: accepted and ignored, like any vLLM flag", []string{"m", "--max-num-seq", "4"},
			func(c *Config) bool { return c.MaxNumSeqs == 0 && c.Ignored[0] == "--max-num-seq 4" }},
		{"admission limits", []string{"m", "--max-num-queued-reqs", "3", "--max_num_queued_tokens=0"},
			func(c *Config) bool { return *c.MaxNumQueuedReqs == 3 && *c.MaxNumQueuedTokens == 0 }},
		{"no admission limits by default", []string{"m"},
			func(c *Config) bool { return c.MaxNumQueuedReqs == nil && c.MaxNumQueuedTokens == nil }},
		{"sim durations", []string{"m", "--sim-tbt", "2ms", "--sim-startup=1s"},
			func(c *Config) bool { return c.TBT == 2*time.Millisecond && c.Startup == time.Second }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseServe(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(c) {
				t.Errorf("%v parsed to %+v", tt.args, c)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no model", []string{"--port", "1"}, "missing MODEL"},
		{"bad port", []string{"m", "--port", "x"}, "--port: want a port number"},
		{"bad max-num-seqs", []string{"m", "--max-num-seqs", "0"}, "--max-num-seqs: want an integer ≥ 1"},
		{"negative queue limit", []string{"m", "--max-num-queued-reqs", "-1"}, "--max-num-queued-reqs: want an integer ≥ 0"},
		{"bad token limit", []string{"m", "--max-num-queued-tokens", "lots"}, "--max-num-queued-tokens: want an integer ≥ 0"},
		{"bad utilization", []string{"m", "--gpu-memory-utilization", "1.5"}, "--gpu-memory-utilization: want a fraction"},
		{"bad dtype", []string{"m", "--kv-cache-dtype", "fp7"}, "unknown KV cache dtype"},
		{"bad spec json", []string{"m", "--speculative-config", "{method:x}"}, "--speculative-config: want a JSON object"},
		{"spec without tokens", []string{"m", "--speculative-config", `{"method":"dflash"}`}, "num_speculative_tokens must be ≥ 1"},
		{"bad max-model-len", []string{"m", "--max-model-len", "lots"}, "--max-model-len: want a token count"},
		{"unknown sim flag", []string{"m", "--sim-warp-drive", "9"}, "unknown simulator flag --sim-warp-drive (run 'slogate sim serve --help'"},
		{"sim flag typo", []string{"m", "--sim-profil", "qwen"}, "unknown simulator flag --sim-profil; did you mean --sim-profile?"},
		{"sim flag typo, underscores", []string{"m", "--sim_kv_tokns=4096"}, "unknown simulator flag --sim-kv-tokns; did you mean --sim-kv-tokens?"},
		{"sim flag prefix", []string{"m", "--sim-slow-at", "4:2"}, "did you mean --sim-slow-at-concurrency?"},
		{"sim flag typo", []string{"m", "--sim-slowdwn", "1.2"}, "did you mean --sim-slowdown?"},
		{"bad sim duration", []string{"m", "--sim-tbt", "fast"}, "--sim-tbt: want a duration"},
		{"bad error rate", []string{"m", "--sim-error-rate", "2"}, "--sim-error-rate: want a fraction"},
		{"unknown profile", []string{"m", "--sim-profile", "llama"}, `unknown profile "llama"`},
		{"missing value", []string{"m", "--port"}, "--port needs a value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseServe(tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			if exit.Code(err) != exit.Usage {
				t.Errorf("exit code %d, want %d", exit.Code(err), exit.Usage)
			}
		})
	}
}

func TestSettle(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		kvTokens int
		runCap   int
		wantErr  string
	}{
		{"qwen seed (hybrid)", seedArgv["qwen"], 24_000_000, 1024, ""},
		{"glm seed caps running at 24", seedArgv["glm"], 3_200_000, 24, ""},
		{"glm without fp8 holds half", append(append([]string{}, seedArgv["glm"]...), "--kv-cache-dtype", "auto"), 1_600_000, 24, ""},
		{"override", []string{"m", "--sim-kv-tokens", "100000", "--max-model-len", "4096"}, 100000, 1024, ""},
		{"too small for max_model_len", []string{"m", "--sim-kv-tokens", "1000"}, 0, 0, "estimated maximum model length is 992"},
		{"glm on one GPU has no room", []string{"GLM", "--kv-cache-dtype", "fp8"}, 0, 0, "no available memory for the cache blocks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseServe(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			s, err := settle(c)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.kvTokens != tt.kvTokens || s.params.runCap != tt.runCap {
				t.Errorf("kv %d cap %d, want %d and %d", s.kvTokens, s.params.runCap, tt.kvTokens, tt.runCap)
			}
		})
	}
}

// TestMainStartsAndStops runs the whole command: it logs vLLM's KV lines
// and returns nil within a second of its context being cancelled.
func TestMainStartsAndStops(t *testing.T) {
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Main(ctx, &out, &out, []string{"serve", "Qwen/Qwen3.5-4B", "--host", "127.0.0.1", "--port", "0", "--sim-log-interval", "0"})
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "Application startup complete") {
		if time.Now().After(deadline) {
			t.Fatalf("no startup line:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Second):
		t.Fatal("Main did not return within 1s of cancellation")
	}
	for _, want := range []string{"GPU KV cache size: 24,000,000 tokens", "Maximum concurrency for 262,144 tokens per request: 91.55x"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, out.String())
		}
	}
}

func TestMainUsage(t *testing.T) {
	var out bytes.Buffer
	if err := Main(context.Background(), &out, &out, nil); exit.Code(err) != exit.Usage {
		t.Errorf("no args: %v", err)
	}
	if err := Main(context.Background(), &out, &out, []string{"run"}); exit.Code(err) != exit.Usage {
		t.Errorf("unknown subcommand: %v", err)
	}
	out.Reset()
	if err := Main(context.Background(), &out, &out, []string{"serve", "--help"}); err != nil || !strings.Contains(out.String(), "--sim-tbt") {
		t.Errorf("help: %v %q", err, out.String())
	}
}

// syncBuffer is a bytes.Buffer safe for the server's concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestUsageListsEveryFlag checks `slogate sim serve --help` against the
// parser: every flag it models is listed, and every flag line's text
// starts in the same column.
func TestUsageListsEveryFlag(t *testing.T) {
	for name := range modelledFlags(&Config{}) {
		if name == "model" || name == "no-enable-prefix-caching" || name == "enable-prefix-caching" {
			continue // the positional MODEL; listed as --[no-]enable-prefix-caching
		}
		if !strings.Contains(usageText, "--"+name+" ") && !strings.Contains(usageText, "--"+name+",") {
			t.Errorf("--%s is not in the help", name)
		}
	}
	const column = len("  --sim-slow-at-concurrency N:F  ")
	for _, line := range strings.Split(usageText, "\n") {
		if !strings.HasPrefix(strings.TrimLeft(line, " "), "--") {
			continue
		}
		r := []rune(line) // "NAME…" is one column, three bytes
		if !strings.HasPrefix(line, "  --") || len(r) <= column || r[column-1] != ' ' || r[column] == ' ' || !strings.Contains(string(r[2:column]), "  ") {
			t.Errorf("flag line not aligned at column %d:\n%s", column, line)
		}
	}
}

// TestServerVersion: every profile reports a vLLM version marked once as
// the simulator's (the generic one was "0.0.0+slogate.sim-slogate-sim").
func TestServerVersion(t *testing.T) {
	// A vLLM version, PEP 440 local part included (the seeds' dev builds,
	// "0.26.1rc1.dev914+gc3dabcddc"), then the simulator's mark once.
	ok := regexp.MustCompile(`^\d+(\.\d+)+[\w.]*(\+g[0-9a-f]+)?-slogate-sim$`)
	for _, name := range profileNames() {
		p, _ := profileByName(name)
		if v := p.serverVersion(); !ok.MatchString(v) || strings.Count(v, "slogate") != 1 {
			t.Errorf("profile %s: version %q, want a vLLM version then -slogate-sim", name, v)
		}
	}
}

// TestNonDefaultArgsLine: the simulator's "non-default args" line is
// vLLM's Python dict, so a reader of vLLM's line (the speculative method,
// the dtype) reads the simulator's; the API key is redacted as vLLM's
// redact_sensitive_args writes it.
func TestNonDefaultArgsLine(t *testing.T) {
	c, err := parseServe([]string{"m", "--kv-cache-dtype", "fp8", "--max-num-seqs", "64", "--enable-prefix-caching", "--api-key", "sk-1",
		"--speculative-config", `{"method":"dflash","model":"z-lab/x","num_speculative_tokens":7}`})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(c.nonDefaultLog(), ", ")
	want := `'kv_cache_dtype': 'fp8', 'max_num_seqs': 64, 'enable_prefix_caching': True, 'api_key': '***', 'speculative_config': {'method': 'dflash', 'model': 'z-lab/x', 'num_speculative_tokens': 7}`
	if got != want {
		t.Errorf("non-default args\n got %s\nwant %s", got, want)
	}
}
