package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/suggest"
)

// engines are the servers the simulator imitates (--engine).
var engines = []string{"vllm", "sglang"}

// splitEngine takes `--engine NAME` (or `--engine=NAME`) off the front of
// args; `-m sglang.launch_server …`, how `python -m sglang.launch_server`
// reaches the simulator when slogate swaps the interpreter for it, means
// sglang on its own. The default is vllm.
func splitEngine(args []string) (engine string, rest []string, err error) {
	engine = "vllm"
	switch {
	case len(args) > 0 && strings.HasPrefix(args[0], "--engine="):
		engine, args = strings.TrimPrefix(args[0], "--engine="), args[1:]
	case len(args) > 0 && (args[0] == "--engine" || args[0] == "-engine"):
		if len(args) < 2 {
			return "", nil, exit.Usagef("--engine needs a value: vllm or sglang")
		}
		engine, args = args[1], args[2:]
	case len(args) > 1 && args[0] == "-m" && args[1] == "sglang.launch_server":
		engine = "sglang"
	}
	if !slices.Contains(engines, engine) {
		if s := suggest.Closest(engine, engines); s != "" {
			return "", nil, exit.Usagef("unknown engine %q for 'slogate sim --engine'; did you mean %s? (have %s)", engine, s, strings.Join(engines, ", "))
		}
		return "", nil, exit.Usagef("unknown engine %q for 'slogate sim --engine' (have %s)", engine, strings.Join(engines, ", "))
	}
	return engine, args, nil
}

// mainSGLang runs `slogate sim --engine sglang serve MODEL [flags]` or
// `… -m sglang.launch_server --model-path MODEL [flags]`.
func mainSGLang(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, sglangUsageText)
		if len(args) == 0 {
			return exit.Quiet(exit.Usage)
		}
		return nil
	}
	launchServer := false
	switch {
	case args[0] == "serve":
		args = args[1:]
	case len(args) > 1 && args[0] == "-m" && args[1] == "sglang.launch_server":
		launchServer, args = true, args[2:]
	default:
		fmt.Fprint(stderr, sglangUsageText)
		return exit.Usagef("unknown sim command %q for --engine sglang: use 'slogate sim --engine sglang serve MODEL [flags]' or '… -m sglang.launch_server --model-path MODEL [flags]'", args[0])
	}
	for _, a := range args {
		if a == "-h" || a == "--help" {
			fmt.Fprint(stdout, sglangUsageText)
			return nil
		}
	}
	c, err := parseSGLang(args, launchServer)
	if err != nil {
		var ae *argparseError
		if errors.As(err, &ae) {
			return writeArgparseError(stderr, ae)
		}
		return err
	}
	return serveSGLang(ctx, stderr, c)
}

const sglangUsageText = `Usage: slogate sim --engine sglang serve MODEL [SGLang flags] [--sim-* flags]
   or: slogate sim --engine sglang -m sglang.launch_server --model-path MODEL [flags]
   or: slogate sim -m sglang.launch_server --model-path MODEL [flags]

Runs an SGLang-compatible simulator: SGLang's flags (an unknown flag is an
error, as argparse makes it; unambiguous prefixes work), its HTTP API,
/metrics with SGLang's names and update cadence, its log lines (on stderr)
and its SIGTERM drain, over the same performance model as the vLLM
simulator (docs/sglang.md#the-simulator).

SGLang flags it models (other known SGLang flags are accepted and ignored):
  --model-path M (--model)          the model; 'serve MODEL' takes it first
  --served-model-name NAME          the one name the API answers to (default MODEL)
  --host H, --port P                listen address (127.0.0.1, 30000)
  --api-key K                       require "Authorization: Bearer K" (not on /health*, /metrics)
  --tp-size N (--tensor-parallel-size)   GPUs per engine
  --dp-size N (--data-parallel-size)     N engines, each its own KV pool and batch
  --context-length N                context length (default the model's)
  --mem-fraction-static F           fraction of GPU memory for weights and the KV pool
  --max-running-requests N          most requests running (default pool/2, at most 4096; 48 speculative)
  --max-total-tokens N              cap on the KV pool in tokens
  --chunked-prefill-size N          shown in logs and /server_info (the budget is not modelled)
  --kv-cache-dtype D                auto, fp8_e5m2, fp8_e4m3, mxfp8, bf16, bfloat16, nvfp4, fp4_mx_block16, fp4_e2m1
  --attention-backend B             checked against SGLang's choices
  --disable-radix-cache             prefix caching off (on by default)
  --enable-metrics                  serve /metrics
  --decode-log-interval N           decode steps between gauge updates and "Decode batch" lines (40)
  --stream-response-default-include-usage   usage chunk without stream_options
  --skip-server-warmup              ready without the warmup request
  --speculative-algorithm A         DFLASH, EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM
  --speculative-draft-model-path P, --speculative-num-steps N, --speculative-eagle-topk K,
  --speculative-num-draft-tokens N, --speculative-dflash-block-size B
                                    resolved as SGLang does; drafts per step = draft tokens − 1

Simulator flags: the vLLM simulator's --sim-* flags (see 'slogate sim serve --help'), and
  --sim-warmup D                    extra time the warmup request takes (/health 503 meanwhile)
  --sim-drain-poll D                the SIGTERM watchdog's period (SGLang's 5s)
  --sim-tokenize-prompt-only        a build whose /tokenize has no messages form
  --sim-kv-log-only                 a fault: only the log tells the KV capacity (no /server_info,
                                    no sglang:max_total_num_tokens)
  --sim-legacy-build                a 2025 build: the KV line without its dtype, fp4_e2m1 served

Examples:
  slogate sim --engine sglang serve Qwen/Qwen3.5-4B --port 30000 --enable-metrics
  slogate sim --engine sglang serve m --tp-size 2 --speculative-algorithm DFLASH \
      --speculative-draft-model-path z-lab/Qwen3.5-4B-DFlash --speculative-dflash-block-size 8
  slogate sim -m sglang.launch_server --model-path m --max-total-tokens 65536 --sim-tbt 2ms
`
