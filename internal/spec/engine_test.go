package spec

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/shellcmd"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/sglang")

// sglangSeeds maps each SGLang seed spec (specs/sglang/) to its server.
var sglangSeeds = map[string]string{
	"qwen3.5-4b-h200-dflash":     "qwen",
	"glm-5.3-flash-nvfp4-h200x2": "glm",
	"ling-3.0-flash-int4-h200x2": "ling",
}

// TestSGLangSeedLaunch renders each seed spec written for SGLang
// (specs/sglang/) as `slogate plan` prints it and compares it with its
// golden file, testdata/sglang/<name>.launch. Regenerate with:
//
//	go test ./spec -run TestSGLangSeedLaunch -update
func TestSGLangSeedLaunch(t *testing.T) {
	for name, server := range sglangSeeds {
		t.Run(name, func(t *testing.T) {
			s, diags := Load(filepath.Join("..", "..", "specs", "sglang", name+".hcl"), LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if len(s.Servers) != 1 || s.Servers[0].Name != server || s.Servers[0].Engine != EngineSGLang {
				t.Fatalf("servers = %v, want one SGLang server named %q", s.Servers, server)
			}
			srv := s.Servers[0]
			got := shellcmd.Line(srv.RedactedEnv(), srv.RedactedArgv()) + "\n"
			golden := filepath.Join("testdata", "sglang", name+".launch")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (regenerate with: go test ./spec -run TestSGLangSeedLaunch -update)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("launch (-golden +rendered; regenerate with: go test ./spec -run TestSGLangSeedLaunch -update):\n%s", diff)
			}
			if strings.Contains(strings.Join(srv.RedactedArgv(), " "), srv.APIKey) || !strings.Contains(strings.Join(srv.Argv(), " "), "--api-key "+srv.APIKey) {
				t.Errorf("the API key must reach Argv and never RedactedArgv")
			}
		})
	}
}

// TestSGLangRender checks how each typed attribute renders for SGLang,
// the speculative mapping of every builtin algorithm, and the container
// launch, against flags read in SGLang's source (docs/sglang.md#flags).
func TestSGLangRender(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{
			name: "typed attributes",
			body: `
  served_model_name      = "q"
  tensor_parallel_size   = 2
  pipeline_parallel_size = 1
  data_parallel_size     = 4
  max_model_len          = 32768
  gpu_memory_utilization = 0.9
  max_num_seqs           = 64
  attention_backend      = "flashinfer"
  kv_cache_dtype         = "fp8_e4m3"
  enable_prefix_caching  = false
  args                   = ["--schedule-policy", "fcfs"]`,
			want: "sglang serve m --served-model-name q --tp-size 2 --pp-size 1 --dp-size 4 --context-length 32768 --mem-fraction-static 0.9 --host 0.0.0.0 --port 8000 --max-running-requests 64 --attention-backend flashinfer --kv-cache-dtype fp8_e4m3 --disable-radix-cache --enable-metrics --schedule-policy fcfs",
		},
		{
			name: "prefix caching on is SGLang's default: no flag",
			body: `enable_prefix_caching = true`,
			want: "sglang serve m --host 0.0.0.0 --port 8000 --enable-metrics",
		},
		{
			name: "dflash: a verify window of N+1",
			body: `speculative {
    method = "dflash"
    model = "d"
    num_speculative_tokens = 7
  }`,
			want: "sglang serve m --host 0.0.0.0 --port 8000 --enable-metrics --speculative-algorithm DFLASH --speculative-draft-model-path d --speculative-dflash-block-size 8",
		},
		{
			name: "eagle3: a chain of N steps, top-1, N+1 verified",
			body: `speculative {
    method = "eagle3"
    model = "d"
    num_speculative_tokens = 3
  }`,
			want: "sglang serve m --host 0.0.0.0 --port 8000 --enable-metrics --speculative-algorithm EAGLE3 --speculative-draft-model-path d --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4",
		},
		{
			name: "vLLM's mtp is NEXTN, draft_model is STANDALONE; config keys are --speculative-K",
			body: `speculative {
    method = "mtp"
    num_speculative_tokens = 1
    config = { accept_threshold_single = 0.9, draft_kv_cache_dtype = "fp8_e4m3" }
  }`,
			want: "sglang serve m --host 0.0.0.0 --port 8000 --enable-metrics --speculative-algorithm NEXTN --speculative-num-steps 1 --speculative-eagle-topk 1 --speculative-num-draft-tokens 2 --speculative-accept-threshold-single 0.9 --speculative-draft-kv-cache-dtype fp8_e4m3",
		},
		{
			name: "SGLang's own name, any case",
			body: `speculative {
    method = "Standalone"
    model = "small"
  }`,
			want: "sglang serve m --host 0.0.0.0 --port 8000 --enable-metrics --speculative-algorithm STANDALONE --speculative-draft-model-path small",
		},
		{
			name: "a container runs sglang serve after the image, the key as a flag",
			body: `api_key = "k"
  container {
    image = "lmsysorg/sglang:v0.5.5"
    ipc   = "host"
  }`,
			want: "docker run --rm --name slogate-<run-id>-s --label slogate.run=<run-id> --label slogate.server=s -p 8000:8000 --ipc host lmsysorg/sglang:v0.5.5 sglang serve m --host 0.0.0.0 --port 8000 --api-key <redacted> --enable-metrics",
		},
		{
			name: "container command replaces the default",
			body: `container {
    image   = "lmsysorg/sglang:v0.4.0"
    command = ["python3", "-m", "sglang.launch_server", "--model-path"]
  }`,
			want: "docker run --rm --name slogate-<run-id>-s --label slogate.run=<run-id> --label slogate.server=s -p 8000:8000 lmsysorg/sglang:v0.4.0 python3 -m sglang.launch_server --model-path m --host 0.0.0.0 --port 8000 --enable-metrics",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := loadSource(t, "server \"s\" {\n  engine = \"sglang\"\n  model  = \"m\"\n  "+tt.body+"\n}\n")
			if got := strings.Join(s.Servers[0].RedactedArgv(), " "); got != tt.want {
				t.Errorf("argv:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestSGLangContainerKey checks that the real key reaches the container's
// launch and only there.
func TestSGLangContainerKey(t *testing.T) {
	s := loadSource(t, "server \"s\" {\n  engine = \"sglang\"\n  model = \"m\"\n  api_key = \"sekrit\"\n  container { image = \"i\" }\n}\n").Servers[0]
	if !strings.Contains(strings.Join(s.LaunchContainerArgv("r1"), " "), "--api-key sekrit") {
		t.Errorf("LaunchContainerArgv lacks the key: %v", s.LaunchContainerArgv("r1"))
	}
	if strings.Contains(strings.Join(s.ContainerArgv("r1"), " "), "sekrit") {
		t.Errorf("ContainerArgv leaks the key: %v", s.ContainerArgv("r1"))
	}
	if env := s.LaunchEnv(); env["VLLM_API_KEY"] != "" {
		t.Errorf("SGLang reads no VLLM_API_KEY; LaunchEnv = %v", env)
	}
}

// TestSGLangMaxNumSeqs checks the max_num_seqs plan and validate reason
// with: SGLang's --max-running-requests in args, and the 48 SGLang sets
// under speculative decoding when nothing does.
func TestSGLangMaxNumSeqs(t *testing.T) {
	tests := []struct {
		name string
		body string
		want int // 0: nil
	}{
		{name: "unset", body: ``},
		{name: "speculative without a bound: SGLang's 48", body: `speculative {
    method = "ngram"
  }`, want: 48},
		{name: "the attribute wins over the 48", body: `max_num_seqs = 128
  speculative {
    method = "ngram"
  }`, want: 128},
		{name: "args' flag wins", body: `max_num_seqs = 128
  args = ["--max-running-requests=16"]`, want: 16},
		{name: "vLLM's flag means nothing to SGLang", body: `args = ["--max-num-seqs", "16"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := loadSource(t, "server \"s\" {\n  engine = \"sglang\"\n  model  = \"m\"\n  "+tt.body+"\n}\n").Servers[0]
			got := 0
			if n := s.LaunchMaxNumSeqs(); n != nil {
				got = *n
			}
			if got != tt.want {
				t.Errorf("LaunchMaxNumSeqs = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestEngineDiagnostics checks what the engine diagnostics say: the
// did-you-mean of an unknown engine, the engine named for an attribute it
// cannot take, and SGLang's algorithms listed for a method it lacks.
func TestEngineDiagnostics(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		summary string
		line    int
		detail  []string
		absent  []string
	}{
		{name: "unknown engine", body: `engine = "sglnag"`, summary: "Unknown engine", line: 3,
			detail: []string{`"llamacpp", "sglang" or "vllm"`, `Did you mean "sglang"?`}},
		{name: "KV cache type llama-server exits on", body: "engine = \"llamacpp\"\n  kv_cache_dtype = \"q9_9\"", summary: "Unknown kv_cache_dtype", line: 4,
			detail: []string{"llama-server's -ctk and -ctv take f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1", `it exits on "q9_9" before loading`, `Did you mean "q8_0"?`}},
		{name: "vLLM's KV dtype on llama.cpp", body: "engine = \"llamacpp\"\n  kv_cache_dtype = \"bfloat16\"", summary: "Unknown kv_cache_dtype", line: 4,
			detail: []string{`"bfloat16" is another engine's spelling: llama.cpp writes "bf16"`}},
		{name: "fp8 on llama.cpp", body: "engine = \"llamacpp\"\n  kv_cache_dtype = \"fp8\"", summary: "Unknown kv_cache_dtype", line: 4,
			detail: []string{"no fp8 KV cache; its 8-bit type is q8_0"}},
		{name: "tensor parallelism on llama.cpp", body: "engine = \"llamacpp\"\n  tensor_parallel_size = 2", summary: "Attribute not supported by llama.cpp", line: 4,
			detail: []string{"LLAMA_SPLIT_MODE_TENSOR needs >= 1 devices", `args = ["--split-mode", "tensor"]`}},
		{name: "an attribute llama.cpp lacks", body: "engine = \"llamacpp\"\n  max_num_batched_tokens = 4096", summary: "Attribute not supported by llama.cpp", line: 4,
			detail: []string{`llama.cpp has no equivalent of max_num_batched_tokens (engine = "llamacpp")`, `args = ["-b", "N"]`}},
		{name: "flag=value on llama.cpp", body: "engine = \"llamacpp\"\n  args = [\"--ctx-size=4096\"]", summary: "Flag with a value after =", line: 4,
			detail: []string{`exits on "--ctx-size=4096"`, `write "--ctx-size", "4096" instead`}},
		{name: "speculative method llama.cpp lacks", body: "engine = \"llamacpp\"\n  speculative {\n    method = \"draft-simpel\"\n  }", summary: "Speculative method not supported by llama.cpp", line: 5,
			detail: []string{"draft-simple, draft-eagle3, draft-mtp, draft-dflash, draft-dspark, ngram-simple, ngram-map-k, ngram-map-k4v, ngram-mod, ngram-cache", "draft → draft-simple", `Did you mean "draft-simple"?`}},
		{name: "draft type without a draft model", body: "engine = \"llamacpp\"\n  speculative {\n    method = \"eagle3\"\n  }", summary: "Missing draft model", line: 4,
			detail: []string{"draft-eagle3 drafts with a second model (-md)", "serves without speculation"}},
		{name: "attribute SGLang cannot take", body: "engine = \"sglang\"\n  enable_expert_parallel = true", summary: "Attribute not supported by SGLang", line: 4,
			detail: []string{`SGLang has no equivalent of enable_expert_parallel (engine = "sglang")`, `--ep-size`}},
		{name: "speculative method SGLang lacks", body: "engine = \"sglang\"\n  speculative {\n    method = \"dflsh\"\n  }", summary: "Speculative method not supported by SGLang", line: 5,
			detail: []string{`SGLang has no speculative method "dflsh"`, "DFLASH, DSPARK, EAGLE, EAGLE3, FROZEN_KV_MTP, NEXTN, NGRAM, STANDALONE, UNO", `Did you mean "dflash"?`}},
		{name: "UNO with a draft model", body: "engine = \"sglang\"\n  speculative {\n    method = \"uno\"\n    model = \"d\"\n  }", summary: "Draft model not supported by UNO", line: 6,
			detail: []string{"reuses the target model", `args = ["--uno-lora-path", "PATH"]`}},
		{name: "UNO's width is a verify width", body: "engine = \"sglang\"\n  speculative {\n    method = \"uno\"\n    num_speculative_tokens = 4\n  }", summary: "Attribute not supported by SGLang", line: 6,
			detail: []string{"UNO takes --speculative-num-draft-tokens as its verify width Q", "config = { num_draft_tokens = Q }"}},
		{name: "kv_cache_dtype outside SGLang's list", body: "engine = \"sglang\"\n  kv_cache_dtype = \"fp8\"", summary: "Unknown kv_cache_dtype", line: 4,
			detail: []string{"SGLang's --kv-cache-dtype takes auto, fp8_e5m2, fp8_e4m3", `"fp8" is not one of them`,
				`"fp8" is another engine's spelling: SGLang writes "fp8_e4m3" (vLLM's fp8 is fp8_e4m3`},
			absent: []string{"Did you mean"}}, // "mxfp8", the nearest string, is another format
		{name: "vLLM's attention backend on SGLang", body: "engine = \"sglang\"\n  attention_backend = \"FLASH_ATTN\"", summary: "Unknown attention_backend", line: 4,
			detail: []string{`"FLASH_ATTN" is another engine's spelling: SGLang writes "fa3"`}},
		{name: "SGLang's kv_cache_dtype on vLLM", body: `kv_cache_dtype = "bf16"`, summary: "Unknown kv_cache_dtype", line: 3,
			detail: []string{"vLLM's --kv-cache-dtype takes", `"bf16" is another engine's spelling: vLLM writes "bfloat16"`}},
		{name: "fp4_e2m1 on SGLang", body: "engine = \"sglang\"\n  kv_cache_dtype = \"fp4_e2m1\"", summary: "KV cache dtype refused by newer SGLang", line: 4,
			detail: []string{`"ValueError: --kv-cache-dtype=fp4_e2m1 is deprecated. Use --kv-cache-dtype=fp4_mx_block16."`, `Write kv_cache_dtype = "fp4_mx_block16"`, "mem_cache/kv_cache_dtype.py"}},
		{name: "fp4_e2m1 in SGLang's args", body: "engine = \"sglang\"\n  args = [\"--kv-cache-dtype=fp4_e2m1\"]", summary: "KV cache dtype refused by newer SGLang", line: 4,
			detail: []string{"exit at startup on --kv-cache-dtype fp4_e2m1"}},
		{name: "a value no engine spells", body: "engine = \"sglang\"\n  kv_cache_dtype = \"fp8_e4m4\"", summary: "Unknown kv_cache_dtype", line: 4,
			detail: []string{`Did you mean "fp8_e4m3"?`}, absent: []string{"another engine's spelling"}},
		{name: "unknown device", body: `device = "cpus"`, summary: "Unknown device", line: 3,
			detail: []string{`device is "gpu" or "cpu"`, `Did you mean "cpu"?`, "docs/spec.md#device"}},
		{name: "a CPU build unsized", body: `device = "cpu"`, summary: "CPU KV cache not sized", line: 3,
			detail: []string{"reserves gpu_memory_utilization's default, 0.92, of the machine's memory", `env = { VLLM_CPU_KVCACHE_SPACE = "4" }`, "cpu_worker.py"}},
		{name: "a CPU build sized twice", body: "device = \"cpu\"\n  env = { VLLM_CPU_KVCACHE_SPACE = \"2\" }\n  gpu_memory_utilization = 0.5", summary: "gpu_memory_utilization ignored by the CPU build", line: 5,
			detail: []string{"sizes its KV cache by it (GiB) and not by gpu_memory_utilization", "remove one of them"}},
		{name: "a GPU backend on a CPU build", body: "device = \"cpu\"\n  gpu_memory_utilization = 0.1\n  attention_backend = \"FLASH_ATTN\"", summary: "attention_backend ignored by the CPU build", line: 5,
			detail: []string{"runs CPU_ATTN whatever --attention-backend says", `"Cannot use FLASH_ATTN backend on CPU."`}},
		{name: "a KV dtype the CPU backend does not list", body: "device = \"cpu\"\n  gpu_memory_utilization = 0.1\n  kv_cache_dtype = \"nvfp4\"", summary: "KV cache dtype not listed by the CPU build", line: 5,
			detail: []string{"lists kv_cache_dtype auto, fp8, fp8_e4m3 and fp8_e5m2", `with "nvfp4" it may find no attention backend`}},
		{name: "a CPU build's variable on a GPU server", body: `env = { VLLM_CPU_KVCACHE_SPACE = "2" }`, summary: "CPU build setting without device = \"cpu\"", line: 3,
			detail: []string{"env sets VLLM_CPU_KVCACHE_SPACE, which only vLLM's CPU build reads", `write device = "cpu"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "server \"s\" {\n  model = \"m\"\n  " + tt.body + "\n}\n"
			_, diags := loadSourceDiags(t, src)
			var d *hcl.Diagnostic
			for _, x := range diags {
				if x.Summary == tt.summary {
					d = x
				}
			}
			if d == nil {
				t.Fatalf("no %q diagnostic in %v", tt.summary, diags)
			}
			if d.Subject == nil || d.Subject.Start.Line != tt.line || d.Subject.Filename != "engine.hcl" {
				t.Errorf("subject %v, want engine.hcl line %d", d.Subject, tt.line)
			}
			for _, w := range tt.detail {
				if !strings.Contains(d.Detail, w) {
					t.Errorf("detail %q lacks %q", d.Detail, w)
				}
			}
			for _, w := range tt.absent {
				if strings.Contains(d.Detail, w) {
					t.Errorf("detail %q has %q", d.Detail, w)
				}
			}
		})
	}
}

// loadSourceDiags loads src as engine.hcl (with a decode matrix, so that
// only the server's diagnostics remain).
func loadSourceDiags(t *testing.T, src string) (*Spec, hcl.Diagnostics) {
	t.Helper()
	return LoadSource("engine.hcl", []byte(src+"matrix \"decode\" {\n  contexts = [\"8K\"]\n  concurrency = [1]\n}\n"), LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset})
}

// loadSource is loadSourceDiags of a spec that must load without errors.
func loadSource(t *testing.T, src string) *Spec {
	t.Helper()
	s, diags := loadSourceDiags(t, src)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return s
}

// TestSpeculativeMethod checks the method each engine states for a block.
func TestSpeculativeMethod(t *testing.T) {
	tests := []struct{ name, engine, method, want string }{
		{"vLLM as written", "vllm", "dflash", "dflash"},
		{"SGLang's spelling", "sglang", "dflash", "DFLASH"},
		{"vLLM's mtp on SGLang", "sglang", "mtp", "NEXTN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := loadSource(t, "server \"s\" {\n  engine = \""+tt.engine+"\"\n  model = \"m\"\n  speculative {\n    method = \""+tt.method+"\"\n    model = \"d\"\n  }\n}\n").Servers[0]
			if got := s.SpeculativeMethod(); got != tt.want {
				t.Errorf("SpeculativeMethod = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDeviceLaunch: device = "cpu" is a CPU build by the spec (CPUBuild),
// renders SGLang's --device cpu and nothing on vLLM, whose CPU build is
// the install; "gpu" is the default, left unset.
func TestDeviceLaunch(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		cpu      bool
		argv     string
		notInArg string
	}{
		{name: "vLLM CPU build", body: "device = \"cpu\"\n  env = { VLLM_CPU_KVCACHE_SPACE = \"2\" }", cpu: true, argv: "vllm serve m --host", notInArg: "--device"},
		{name: "SGLang on CPU", body: "engine = \"sglang\"\n  device = \"cpu\"", cpu: true, argv: "--device cpu"},
		{name: "gpu named", body: `device = "gpu"`, argv: "vllm serve m", notInArg: "--device"},
		{name: "unset", body: "", argv: "vllm serve m", notInArg: "--device"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := loadSource(t, "server \"s\" {\n  model = \"m\"\n  "+tt.body+"\n}\n")
			srv := s.Servers[0]
			if srv.CPUBuild() != tt.cpu {
				t.Errorf("CPUBuild() = %v, want %v", srv.CPUBuild(), tt.cpu)
			}
			argv := strings.Join(srv.RedactedArgv(), " ")
			if !strings.Contains(argv, tt.argv) || tt.notInArg != "" && strings.Contains(argv, tt.notInArg) {
				t.Errorf("argv %q: want %q in it, %q not", argv, tt.argv, tt.notInArg)
			}
		})
	}
}
