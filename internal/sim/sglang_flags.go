package sim

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/exit"
)

// sglangConfig is what `slogate sim --engine sglang …` was asked for: the
// engine-independent Config the core model runs with, plus the SGLang
// surface's own settings (docs/sglang.md#flags).
type sglangConfig struct {
	core *Config

	launchServer bool // the `python -m sglang.launch_server` form (it warns)

	apiKey            string
	enableMetrics     bool
	decodeLogInterval int // --decode-log-interval (40)
	chunkedPrefill    *int
	maxPrefillTokens  int
	maxRunning        *int
	maxTotalTokens    int // --max-total-tokens: caps the KV pool; 0 = unset
	memFraction       *float64
	contextLength     *int
	kvCacheDtype      string
	attentionBackend  *string
	schedulePolicy    string
	defaultUsage      bool // --stream-response-default-include-usage
	skipWarmup        bool
	cacheReport       bool // --enable-cache-report
	ppSize, epSize    int
	enableDPAttention bool

	specAlgorithm  string // upper-cased, "" = none
	draftModel     string
	numSteps       *int
	eagleTopK      *int
	numDraftTokens *int
	dflashBlock    *int

	// Simulator settings of the SGLang surface.
	warmup             time.Duration // --sim-warmup: extra time the warmup request takes (JIT, first batch)
	drainPoll          time.Duration // --sim-drain-poll: the SIGTERM watchdog's period (SGLang's 5 s)
	tokenizePromptOnly bool          // --sim-tokenize-prompt-only: a build before /tokenize took messages
	kvLogOnly          bool          // --sim-kv-log-only: only the log tells the KV capacity
	legacyBuild        bool          // --sim-legacy-build: a 2025 build (KV line without dtype, fp4_e2m1 accepted)

	given   []string // the SGLang flags given, dashed, for the server_args log line
	ignored []string // known SGLang flags the simulator does not model
}

// sglangKind says how an SGLang flag takes its value (argparse's action).
type sglangKind int

const (
	sgValue    sglangKind = iota // --flag V or --flag=V (store)
	sgTrue                       // --flag (store_true)
	sgBoolOpt                    // --flag / --no-flag (BooleanOptionalAction)
	sgList                       // --flag V1 V2 … (nargs='+' or '*')
	sgSimFlag                    // a --sim-* flag, parsed by the vLLM table's setter
	sgSimFlagB                   // a boolean --sim-* flag
)

// sglangFlag is one option of SGLang's parser: its option strings (the
// first is the dest's dashed name), its kind, the choices argparse checks,
// and what the simulator does with it (nil: accepted and ignored).
type sglangFlag struct {
	names   []string
	kind    sglangKind
	choices []string
	isInt   bool // argparse type=int
	isFloat bool // type=float
	set     func(c *sglangConfig, v string) error
}

// SGLang's choice lists the simulator checks (server_args.py @001067ff).
var (
	sglangKVDtypes          = []string{"auto", "fp8_e5m2", "fp8_e4m3", "mxfp8", "bf16", "bfloat16", "nvfp4", "fp4_mx_block16", "fp4_e2m1"}
	sglangAttentionBackends = []string{"triton", "torch_native", "flex_attention", "dsa", "nsa", "dsv4", "compressed",
		"cutlass_mla", "fa3", "fa4", "flashinfer", "flashmla", "trtllm_mla", "cutedsl_mla", "tokenspeed_mla", "trtllm_mha",
		"dual_chunk_flash_attn", "hpc_ops", "minicpm_flashattn", "minicpm_flashinfer", "aiter", "wave", "intel_amx", "ascend", "intel_xpu"}
	sglangSchedulePolicies = []string{"lpm", "random", "fcfs", "dfs-weight", "lof", "priority", "routing-key"}
	sglangDraftKVDtypes    = []string{"auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16"}
	sglangDtypes           = []string{"auto", "half", "float16", "bfloat16", "float", "float32"}
)

// sglangKVSizeName maps an SGLang KV cache dtype to the name the core
// model sizes KV elements by (kvDtypeBytes).
func sglangKVSizeName(dtype string) string {
	switch dtype {
	case "mxfp8":
		return "fp8" // one byte per element (the block scales are not counted)
	case "fp4_mx_block16", "fp4_e2m1":
		return "nvfp4"
	}
	return dtype
}

func intPtr(dst **int, min int) func(*sglangConfig, string) error {
	return func(_ *sglangConfig, v string) error {
		n, _ := strconv.Atoi(v) // argparse checked the type
		if n < min {
			return fmt.Errorf("must be at least %d, got %d", min, n)
		}
		*dst = &n
		return nil
	}
}

// sglangFlags is the simulator's copy of SGLang's option table: every flag
// it models and the other ServerArgs flags it knows by name (read from
// server_args.py @001067ff; SGLang has more, which the simulator rejects as
// unrecognized arguments, docs/sglang.md#the-simulator). Argparse rejects
// anything not in its table, so the simulator needs the table to tell a
// real flag it does not model from a mistyped one.
func sglangFlags(c *sglangConfig) []sglangFlag {
	core := c.core
	str := func(dst *string) func(*sglangConfig, string) error {
		return func(_ *sglangConfig, v string) error { *dst = v; return nil }
	}
	flags := []sglangFlag{
		{names: []string{"--model-path", "--model"}, set: str(&core.Model)},
		{names: []string{"--served-model-name"}, set: func(_ *sglangConfig, v string) error { core.ServedNames = []string{v}; return nil }},
		{names: []string{"--host"}, set: str(&core.Host)},
		{names: []string{"--port"}, isInt: true, set: func(_ *sglangConfig, v string) error {
			n, _ := strconv.Atoi(v)
			if n < 0 || n > 65535 {
				return fmt.Errorf("port %d is out of range", n)
			}
			core.Port = n
			return nil
		}},
		{names: []string{"--api-key"}, set: str(&c.apiKey)},
		{names: []string{"--tp-size", "--tensor-parallel-size"}, isInt: true, set: func(_ *sglangConfig, v string) error {
			return parseIntFlag(&core.TensorParallel, 1)(core, v)
		}},
		{names: []string{"--dp-size", "--data-parallel-size"}, isInt: true, set: func(_ *sglangConfig, v string) error {
			return parseIntFlag(&core.DataParallel, 1)(core, v)
		}},
		{names: []string{"--pp-size", "--pipeline-parallel-size"}, isInt: true, set: func(_ *sglangConfig, v string) error {
			return parseIntFlag(&c.ppSize, 1)(core, v)
		}},
		{names: []string{"--ep-size", "--expert-parallel-size"}, isInt: true, set: func(_ *sglangConfig, v string) error {
			return parseIntFlag(&c.epSize, 1)(core, v)
		}},
		{names: []string{"--enable-dp-attention"}, kind: sgTrue, set: func(c *sglangConfig, _ string) error { c.enableDPAttention = true; return nil }},
		{names: []string{"--context-length"}, set: func(c *sglangConfig, v string) error {
			n, err := parseHumanInt(v)
			if err != nil || n == 0 {
				return fmt.Errorf("invalid human_readable_int value: %q", v)
			}
			c.contextLength = &n
			return nil
		}},
		{names: []string{"--mem-fraction-static"}, isFloat: true, set: func(c *sglangConfig, v string) error {
			f, _ := strconv.ParseFloat(v, 64)
			if f <= 0 || f > 1 {
				return fmt.Errorf("want a fraction in (0, 1], got %v", f)
			}
			c.memFraction = &f
			return nil
		}},
		{names: []string{"--max-running-requests"}, isInt: true, set: intPtr(&c.maxRunning, 1)},
		{names: []string{"--max-total-tokens"}, set: func(c *sglangConfig, v string) error {
			n, err := parseHumanInt(v)
			if err != nil || n < 16 {
				return fmt.Errorf("invalid human_readable_int value: %q", v)
			}
			c.maxTotalTokens = n
			return nil
		}},
		{names: []string{"--chunked-prefill-size"}, isInt: true, set: func(c *sglangConfig, v string) error {
			n, _ := strconv.Atoi(v)
			c.chunkedPrefill = &n
			return nil
		}},
		{names: []string{"--max-prefill-tokens"}, set: func(c *sglangConfig, v string) error {
			n, err := parseHumanInt(v)
			if err != nil {
				return fmt.Errorf("invalid human_readable_int value: %q", v)
			}
			c.maxPrefillTokens = n
			return nil
		}},
		{names: []string{"--kv-cache-dtype"}, choices: sglangKVDtypes, set: str(&c.kvCacheDtype)},
		{names: []string{"--attention-backend"}, choices: sglangAttentionBackends, set: func(c *sglangConfig, v string) error {
			c.attentionBackend = &v
			return nil
		}},
		{names: []string{"--schedule-policy"}, choices: sglangSchedulePolicies, set: str(&c.schedulePolicy)},
		{names: []string{"--disable-radix-cache"}, kind: sgTrue, set: func(_ *sglangConfig, _ string) error {
			off := false
			core.PrefixCaching = &off
			return nil
		}},
		{names: []string{"--enable-metrics"}, kind: sgTrue, set: func(c *sglangConfig, _ string) error { c.enableMetrics = true; return nil }},
		{names: []string{"--decode-log-interval"}, isInt: true, set: func(c *sglangConfig, v string) error {
			return parseIntFlag(&c.decodeLogInterval, 1)(core, v)
		}},
		{names: []string{"--stream-response-default-include-usage"}, kind: sgTrue, set: func(c *sglangConfig, _ string) error { c.defaultUsage = true; return nil }},
		{names: []string{"--skip-server-warmup"}, kind: sgTrue, set: func(c *sglangConfig, _ string) error { c.skipWarmup = true; return nil }},
		{names: []string{"--enable-cache-report"}, kind: sgTrue, set: func(c *sglangConfig, _ string) error { c.cacheReport = true; return nil }},
		{names: []string{"--speculative-algorithm"}, set: func(c *sglangConfig, v string) error { c.specAlgorithm = strings.ToUpper(v); return nil }},
		{names: []string{"--speculative-draft-model-path", "--speculative-draft-model"}, set: str(&c.draftModel)},
		{names: []string{"--speculative-num-steps"}, isInt: true, set: intPtr(&c.numSteps, 0)},
		{names: []string{"--speculative-eagle-topk"}, isInt: true, set: intPtr(&c.eagleTopK, 0)},
		{names: []string{"--speculative-num-draft-tokens"}, isInt: true, set: intPtr(&c.numDraftTokens, 0)},
		{names: []string{"--speculative-dflash-block-size"}, isInt: true, set: intPtr(&c.dflashBlock, -1<<31)},
		{names: []string{"--speculative-draft-kv-cache-dtype"}, choices: sglangDraftKVDtypes},
		{names: []string{"--dtype"}, choices: sglangDtypes},
		{names: []string{"--trust-remote-code"}, kind: sgTrue},
		{names: []string{"--reasoning-parser"}, set: str(&core.ReasoningParser)},
	}
	for _, n := range sglangKnownValueFlags {
		flags = append(flags, sglangFlag{names: []string{n}})
	}
	for _, n := range sglangKnownBoolFlags {
		flags = append(flags, sglangFlag{names: []string{n}, kind: sgTrue})
	}
	for _, n := range sglangKnownListFlags {
		flags = append(flags, sglangFlag{names: []string{n}, kind: sgList})
	}
	for _, n := range []string{"--dcp-replicate-q-proj", "--enable-tp-lm-head-all-to-all"} {
		flags = append(flags, sglangFlag{names: []string{n, "--no-" + n[2:]}, kind: sgBoolOpt})
	}
	// The simulator's own flags, as for vLLM (their setters are shared).
	for name, s := range modelledFlags(core) {
		if !strings.HasPrefix(name, "sim-") {
			continue
		}
		kind := sgSimFlag
		if s.kind == kindBool {
			kind = sgSimFlagB
		}
		set := s.set
		flags = append(flags, sglangFlag{names: []string{"--" + name}, kind: kind, set: func(_ *sglangConfig, v string) error { return set(core, v) }})
	}
	dur := func(dst *time.Duration) func(*sglangConfig, string) error {
		return func(_ *sglangConfig, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return fmt.Errorf("want a duration like 2ms or 1.5s, got %q", v)
			}
			*dst = d
			return nil
		}
	}
	flags = append(flags,
		sglangFlag{names: []string{"--sim-warmup"}, kind: sgSimFlag, set: dur(&c.warmup)},
		sglangFlag{names: []string{"--sim-drain-poll"}, kind: sgSimFlag, set: func(c *sglangConfig, v string) error {
			if err := dur(&c.drainPoll)(c, v); err != nil {
				return err
			}
			if c.drainPoll <= 0 {
				return fmt.Errorf("want a positive duration, got %q", v)
			}
			return nil
		}},
		sglangFlag{names: []string{"--sim-tokenize-prompt-only"}, kind: sgSimFlagB, set: func(c *sglangConfig, v string) error {
			b, err := strconv.ParseBool(v)
			c.tokenizePromptOnly = b
			return err
		}},
		// A fault, not a build: /server_info and /get_server_info answer
		// 404 and /metrics has no sglang:max_total_num_tokens, so only the
		// log tells the KV capacity (a client's last resort).
		sglangFlag{names: []string{"--sim-kv-log-only"}, kind: sgSimFlagB, set: func(c *sglangConfig, v string) error {
			b, err := strconv.ParseBool(v)
			c.kvLogOnly = b
			return err
		}},
		// An older build: the KV line without its dtype ("KV Cache is
		// allocated. #tokens: N, …"), --kv-cache-dtype fp4_e2m1 served.
		sglangFlag{names: []string{"--sim-legacy-build"}, kind: sgSimFlagB, set: func(c *sglangConfig, v string) error {
			b, err := strconv.ParseBool(v)
			c.legacyBuild = b
			return err
		}},
	)
	return flags
}

// sglangKnownValueFlags are ServerArgs flags that take one value and that
// the simulator accepts without modelling (server_args.py @001067ff).
var sglangKnownValueFlags = []string{
	"--tokenizer-path", "--tokenizer-mode", "--tokenizer-backend", "--tokenizer-worker-num", "--detokenizer-worker-num",
	"--load-format", "--model-loader-extra-config", "--revision", "--model-impl", "--model-config-parser",
	"--json-model-override-args", "--quantization", "--quantization-param-path", "--modelopt-quant",
	"--modelopt-checkpoint-restore-path", "--modelopt-checkpoint-save-path", "--modelopt-export-path", "--rl-quant-profile",
	"--max-queued-requests", "--prefill-decode-interval", "--prefill-max-requests", "--default-priority-value",
	"--priority-scheduling-preemption-threshold", "--retraction-policy", "--schedule-conservativeness", "--page-size",
	"--c128-page-size", "--swa-full-tokens-ratio", "--radix-eviction-policy", "--num-continuous-decode-steps",
	"--scheduler-recv-interval", "--nccl-port", "--dist-timeout", "--dist-init-addr", "--nccl-init-addr", "--gated-launch-port",
	"--nnodes", "--node-rank", "--dcp-size", "--decode-context-parallel-size", "--pp-max-micro-batch-size",
	"--pp-async-batch-depth", "--load-balance-method", "--attn-cp-size", "--attention-context-parallel-size", "--moe-dp-size",
	"--moe-data-parallel-size", "--dwdp-size", "--dcp-comm-backend", "--cp-strategy", "--device", "--base-gpu-id",
	"--gpu-id-step", "--random-seed", "--watchdog-timeout", "--soft-watchdog-timeout", "--fastapi-root-path", "--grpc-port",
	"--sidecar", "--sidecar-args", "--warmups", "--http2-max-concurrent-streams", "--ssl-keyfile", "--ssl-certfile",
	"--ssl-ca-certs", "--ssl-keyfile-password", "--admin-api-key", "--weight-version", "--chat-template",
	"--hf-chat-template-name", "--completion-template", "--file-storage-path",
	"--default-chat-template-kwargs", "--tool-call-parser", "--tool-server", "--sampling-defaults", "--asr-max-buffer-seconds",
	"--asr-max-concurrent-sessions", "--preferred-sampling-params", "--stream-interval", "--batch-notify-size", "--log-level",
	"--log-level-http", "--log-requests-level", "--log-requests-format", "--crash-dump-folder", "--smg-http-sidecar-port",
	"--grpc-http-sidecar-port", "--load-snapshot-publish-interval", "--tokenizer-metrics-custom-labels-header",
	"--extra-metric-labels", "--gc-warning-threshold-secs", "--kv-events-config", "--trace-modules", "--otlp-traces-endpoint",
	"--export-metrics-to-file-dir", "--constrained-json-whitespace-pattern", "--decode-attention-backend",
	"--prefill-attention-backend", "--sampling-backend", "--grammar-backend", "--radix-cache-backend", "--mm-attention-backend",
	"--fp8-gemm-backend", "--fp4-gemm-backend", "--bf16-gemm-backend", "--dsa-prefill-backend", "--dsv4-prefill-backend",
	"--dsa-decode-backend", "--dsa-paged-mqa-logits-backend", "--dsa-topk-backend", "--mamba-backend", "--cuda-graph-config",
	"--cuda-graph-backend-decode", "--cuda-graph-backend-prefill", "--cuda-graph-max-bs-decode", "--cuda-graph-max-bs-prefill",
	"--cuda-graph-tc-compiler", "--cuda-graph-max-bs", "--triton-attention-num-kv-splits", "--triton-attention-split-tile-size",
	"--flashinfer-allreduce-fusion-backend", "--torch-compile-max-bs", "--speculative-draft-model-revision",
	"--speculative-draft-load-format", "--speculative-dspark-block-size", "--speculative-dspark-sps-table-path",
	"--speculative-dspark-confidence-sts-path", "--speculative-accept-threshold-single", "--speculative-accept-threshold-acc",
	"--speculative-token-map", "--speculative-attention-mode", "--speculative-draft-attention-backend",
	"--speculative-dsa-topk-backend", "--speculative-draft-window-size", "--speculative-moe-runner-backend",
	"--speculative-moe-a2a-backend", "--speculative-draft-model-quantization", "--speculative-adaptive-config",
	"--spec-trace-dir", "--speculative-ngram-min-bfs-breadth", "--speculative-ngram-max-bfs-breadth",
	"--speculative-ngram-match-type", "--speculative-ngram-max-trie-depth", "--speculative-ngram-capacity",
	"--speculative-ngram-external-corpus-path", "--moe-runner-backend", "--moe-a2a-backend", "--mamba-ssm-dtype",
	"--max-mamba-cache-size", "--config",
}

// sglangKnownBoolFlags are store_true ServerArgs flags accepted without
// modelling.
var sglangKnownBoolFlags = []string{
	"--skip-tokenizer-init", "--is-embedding", "--enable-multimodal", "--enable-fp32-lm-head", "--quantize-and-serve",
	"--enable-tf32-matmul", "--enable-dynamic-chunking", "--enable-priority-scheduling", "--disable-priority-preemption",
	"--abort-on-priority-when-disabled", "--schedule-low-priority-values-first", "--disable-hybrid-swa-memory",
	"--prefill-only-disable-kv-cache", "--enable-page-major-kv-layout", "--enable-unified-memory",
	"--disable-chunked-prefix-cache", "--disable-overlap-schedule", "--enable-mixed-chunk", "--enable-prefill-cp",
	"--enable-dsa-cache-layer-split", "--enable-cp-decode-attn-tp", "--enable-dp-attention-local-control-broadcast",
	"--enable-dp-lm-head", "--enable-attn-tp-input-scattered", "--enable-shared-experts-attn-tp", "--enable-dense-mlp-attn-tp",
	"--disable-attn-tp-gather", "--enable-p2p-check", "--mlx-enable-sampling", "--sleep-on-idle", "--use-ray",
	"--smg-grpc-mode", "--grpc-mode", "--enable-http2", "--enable-ssl-refresh", "--strip-thinking-cache",
	"--enable-strict-thinking", "--allow-auto-truncate", "--incremental-streaming-output", "--enable-streaming-session",
	"--enable-session-radix-cache", "--log-requests", "--show-time-cost", "--enable-mfu-metrics",
	"--enable-metrics-for-all-schedulers", "--enable-request-time-stats-logging", "--enable-forward-pass-metrics",
	"--enable-trace", "--export-metrics-to-file", "--constrained-json-disable-any-whitespace", "--disable-flashinfer-autotune",
	"--disable-prefill-cuda-graph", "--disable-decode-cuda-graph", "--disable-cuda-graph", "--disable-cuda-graph-padding",
	"--enable-profile-cuda-graph", "--enable-cudagraph-gc", "--debug-cuda-graph", "--enable-layerwise-nvtx-marker",
	"--enable-nccl-nvls", "--enable-symm-mem", "--triton-attention-reduce-in-fp32", "--flashinfer-mla-disable-ragged",
	"--enable-fused-qk-norm-rope", "--enable-precise-embedding-interpolation", "--enable-fused-moe-sum-all-reduce",
	"--enable-deepseek-v4-fp4-indexer", "--disable-custom-all-reduce", "--enable-mscclpp", "--enable-torch-symm-mem",
	"--enable-scattered-sconv", "--pre-warm-nccl", "--enable-quant-communications",
	"--enforce-disable-flashinfer-allreduce-fusion", "--enable-aiter-allreduce-fusion", "--enable-torch-compile",
	"--enable-torch-compile-debug-mode", "--speculative-dspark-align-verify-tokens-to-graph-tier",
	"--speculative-use-rejection-sampling", "--speculative-skip-dp-mlp-sync", "--enable-multi-layer-eagle",
	"--speculative-adaptive", "--enable-lora",
}

// sglangKnownListFlags take one or more values (nargs).
var sglangKnownListFlags = []string{
	"--numa-node", "--gc-threshold", "--log-requests-target", "--uvicorn-access-log-exclude-prefixes",
	"--tokenizer-metrics-allowed-custom-labels", "--bucket-time-to-first-token", "--bucket-inter-token-latency",
	"--bucket-e2e-request-latency", "--prompt-tokens-buckets", "--generation-tokens-buckets", "--flashinfer-autotune-skip-ops",
	"--cuda-graph-bs-decode", "--cuda-graph-bs-prefill", "--lora-paths",
}

// argparseError is SGLang's parser refusing the command line: argparse
// prints its usage and "prog: error: msg" on stderr and exits 2.
type argparseError struct{ msg string }

func (e *argparseError) Error() string { return "sglang serve: error: " + e.msg }

// sglangUsageLine is the head of argparse's usage, as far as the
// simulator reproduces it (SGLang's lists every option: hundreds).
const sglangUsageLine = "usage: sglang serve [-h] --model-path MODEL_PATH [options]"

// writeArgparseError prints err as argparse does and returns the exit
// error (2, already reported).
func writeArgparseError(stderr io.Writer, err *argparseError) error {
	fmt.Fprintf(stderr, "%s\n%s\n", sglangUsageLine, err.Error())
	return exit.Quiet(exit.Usage)
}

// parseSGLang parses SGLang's command line the way its argparse parser does
// (prepare_server_args: exact or abbreviated long options, --flag=value,
// store_true flags, unknown arguments rejected together at the end). In the
// serve form a first argument not starting with '-' is the model
// (cli/serve.py _normalize_positional_model_path); launchServer is the
// `python -m sglang.launch_server` form, which has no positional model.
func parseSGLang(args []string, launchServer bool) (*sglangConfig, error) {
	core := &Config{
		Host: "127.0.0.1", Port: 30000, TensorParallel: 1, DataParallel: 1, KVCacheDtype: "auto",
		MaxNumBatchedTokens: 8192, Seed: 1, LogInterval: 0, sglang: true,
		speculativeDotKeys: map[string]string{},
	}
	c := &sglangConfig{core: core, launchServer: launchServer, decodeLogInterval: 40, maxPrefillTokens: 16384,
		kvCacheDtype: "auto", schedulePolicy: "fcfs", drainPoll: 5 * time.Second, ppSize: 1, epSize: 1}
	if !launchServer && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		args = append([]string{"--model-path", args[0]}, args[1:]...)
	}
	p := newSGLangParser(c, args)
	for i := 0; i < len(args); i++ {
		last, err := p.parseArg(i)
		if err != nil {
			return nil, err
		}
		i = last
	}
	if len(p.unrecognized) > 0 {
		return nil, &argparseError{"unrecognized arguments: " + strings.Join(p.unrecognized, " ")}
	}
	if core.Model == "" {
		return nil, &argparseError{"the following arguments are required: --model-path/--model"}
	}
	c.fillCore()
	return c, nil
}

// sglangParser is SGLang's argparse parser reading one command line into
// c: its options by option string, the option strings sorted (argparse
// matches abbreviations against them), and the arguments it did not
// recognize, refused together at the end.
type sglangParser struct {
	c             *sglangConfig
	args          []string
	byName        map[string]*sglangFlag
	optionStrings []string
	unrecognized  []string
}

// newSGLangParser builds the parser of args over c's option table.
func newSGLangParser(c *sglangConfig, args []string) *sglangParser {
	p := &sglangParser{c: c, args: args, byName: map[string]*sglangFlag{}}
	flags := sglangFlags(c)
	for i := range flags {
		for _, n := range flags[i].names {
			p.byName[n] = &flags[i]
			p.optionStrings = append(p.optionStrings, n)
		}
	}
	slices.Sort(p.optionStrings)
	return p
}

// parseArg reads args[i], with the values its option takes after it, and
// returns the index of the last argument used. An argument that is not a
// known option (nor a prefix of exactly one) is set aside as unrecognized.
func (p *sglangParser) parseArg(i int) (int, error) {
	a := p.args[i]
	if !strings.HasPrefix(a, "--") || a == "--" {
		p.unrecognized = append(p.unrecognized, a)
		return i, nil
	}
	name, value, hasValue := strings.Cut(a, "=")
	f, name, err := p.lookup(name)
	if err != nil {
		return i, err
	}
	if f == nil {
		p.unrecognized = append(p.unrecognized, a)
		// argparse leaves a following value-looking word unconsumed:
		// it is an unrecognized argument of its own.
		return i, nil
	}
	display := strings.Join(f.names, "/")
	values, i, err := f.values(name, display, value, hasValue, p.args, i)
	if err != nil {
		return i, err
	}
	if err := f.check(display, values[0]); err != nil {
		return i, err
	}
	return i, p.c.apply(f, name, display, values)
}

// lookup finds the option written as name: exactly, else as argparse's
// allow_abbrev does, by a unique prefix of one option string (returned as
// the name). It returns no option for an unknown name, and an error for an
// ambiguous prefix or a mistyped --sim-* flag.
func (p *sglangParser) lookup(name string) (*sglangFlag, string, error) {
	if f, ok := p.byName[name]; ok {
		return f, name, nil
	}
	var cands []string
	for _, o := range p.optionStrings {
		if strings.HasPrefix(o, name) {
			cands = append(cands, o)
		}
	}
	switch {
	case len(cands) == 1:
		return p.byName[cands[0]], cands[0], nil
	case len(cands) > 1:
		return nil, name, &argparseError{fmt.Sprintf("ambiguous option: %s could match %s", name, strings.Join(cands, ", "))}
	}
	if sim, ok := strings.CutPrefix(name, "--sim-"); ok {
		// Not SGLang's: the simulator's own flag was mistyped.
		return nil, name, unknownSimFlag("sim-"+sim, modelledFlags(p.c.core))
	}
	return nil, name, nil
}

// values are the values the option written as name takes from args[i] on,
// as its argparse action reads them, with the index of the last argument
// used. display is the option's strings joined, as argparse names it.
func (f *sglangFlag) values(name, display, value string, hasValue bool, args []string, i int) ([]string, int, error) {
	switch f.kind {
	case sgTrue, sgSimFlagB, sgBoolOpt:
		v, err := f.switchValue(name, display, value, hasValue)
		return []string{v}, i, err
	case sgList:
		return listValues(display, value, hasValue, args, i)
	}
	if hasValue {
		return []string{value}, i, nil
	}
	if i+1 < len(args) && !(strings.HasPrefix(args[i+1], "-") && len(args[i+1]) > 1 && !isNumber(args[i+1])) {
		return []string{args[i+1]}, i + 1, nil
	}
	return nil, i, &argparseError{fmt.Sprintf("argument %s: expected one argument", display)}
}

// switchValue is the value of a switch: "true", or "false" for the --no-
// form of a BooleanOptionalAction. Only a boolean --sim-* flag takes an
// explicit =VALUE; argparse refuses one on SGLang's own switches.
func (f *sglangFlag) switchValue(name, display, value string, hasValue bool) (string, error) {
	if hasValue && f.kind != sgSimFlagB {
		return "", &argparseError{fmt.Sprintf("argument %s: ignored explicit argument '%s'", display, value)}
	}
	v := "true"
	if hasValue {
		v = value
	}
	if f.kind == sgBoolOpt && strings.HasPrefix(name, "--no-") {
		v = "false"
	}
	return v, nil
}

// listValues are a list option's values (nargs): its =VALUE, then the
// following words up to the next option; at least one. It returns them
// with the index of the last argument used.
func listValues(display, value string, hasValue bool, args []string, i int) ([]string, int, error) {
	var values []string
	if hasValue {
		values = []string{value}
	}
	for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
		i++
		values = append(values, args[i])
	}
	if len(values) == 0 {
		return nil, i, &argparseError{fmt.Sprintf("argument %s: expected at least one argument", display)}
	}
	return values, i, nil
}

// check refuses v as argparse does when it is not of the option's type
// (int or float) or not one of its choices.
func (f *sglangFlag) check(display, v string) error {
	switch {
	case f.isInt:
		if _, err := strconv.Atoi(v); err != nil {
			return &argparseError{fmt.Sprintf("argument %s: invalid int value: '%s'", display, v)}
		}
	case f.isFloat:
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return &argparseError{fmt.Sprintf("argument %s: invalid float value: '%s'", display, v)}
		}
	}
	if f.choices != nil && !slices.Contains(f.choices, v) {
		quoted := make([]string, len(f.choices))
		for i, ch := range f.choices {
			quoted[i] = "'" + ch + "'"
		}
		return &argparseError{fmt.Sprintf("argument %s: invalid choice: '%s' (choose from %s)", display, v, strings.Join(quoted, ", "))}
	}
	return nil
}

// isSim reports whether f is one of the simulator's --sim-* flags.
func (f *sglangFlag) isSim() bool { return f.kind == sgSimFlag || f.kind == sgSimFlagB }

// apply gives the option's first value to its setter, or remembers it as
// accepted and ignored, and notes an SGLang option for the server_args
// log line. A setter's refusal is a usage error for a --sim-* flag and
// argparse's error for SGLang's own.
func (c *sglangConfig) apply(f *sglangFlag, name, display string, values []string) error {
	shown := strings.Join(values, " ")
	if f.kind == sgTrue || f.kind == sgBoolOpt {
		shown = "" // a switch: its name says it
	}
	if f.set == nil {
		c.ignored = append(c.ignored, strings.TrimSpace(name+" "+shown))
	} else if err := f.set(c, values[0]); err != nil {
		if f.isSim() {
			return usageError("%s: %v", name, err)
		}
		return &argparseError{fmt.Sprintf("argument %s: %v", display, err)}
	}
	if !f.isSim() {
		c.given = append(c.given, strings.TrimSpace(f.names[0]+" "+shown))
	}
	return nil
}

// fillCore carries the SGLang settings the core model runs with into
// c.core, and fills the core defaults that depend on other flags (served
// names, hybrid layout) and the boot seed.
func (c *sglangConfig) fillCore() {
	core := c.core
	if len(core.ServedNames) == 0 {
		core.ServedNames = []string{core.Model} // _handle_missing_default_values
	}
	if c.apiKey != "" {
		core.APIKeys = []string{c.apiKey}
	}
	if c.contextLength != nil {
		core.MaxModelLen = *c.contextLength
	}
	if c.memFraction != nil {
		core.GPUMemUtil = *c.memFraction
	}
	core.KVCacheDtype = sglangKVSizeName(c.kvCacheDtype)
	if c.chunkedPrefill != nil && *c.chunkedPrefill > 0 {
		core.MaxNumBatchedTokens = *c.chunkedPrefill
	}
	if !core.hybridSet {
		core.Hybrid = HybridModel(core.Model)
	}
	core.BootSeed = bootSeed()
}

// isNumber reports whether a looks like a negative number, which argparse
// takes as a value rather than an option (its _negative_number_matcher).
func isNumber(a string) bool {
	_, err := strconv.ParseFloat(a, 64)
	return err == nil
}
