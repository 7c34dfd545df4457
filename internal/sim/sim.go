// Package sim is slogate's built-in imitation of a vLLM server: the same
// command line (`slogate sim serve MODEL [vLLM flags]`), the same HTTP
// surface and metrics, and a continuous-batching performance model fitted
// to real measurements (the seed reports), so that everything else in
// slogate can be run and tested without a GPU. It imports nothing from the
// rest of slogate except internal/exit: a real vLLM can take its place.
package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/numfmt"
)

// Main runs `slogate sim` with args (what follows "sim"). It returns nil
// when ctx is cancelled (SIGINT/SIGTERM): a clean shutdown.
func Main(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	if handled, err := runHiddenCommand(ctx, args); handled {
		return err
	}
	engine, args, err := splitEngine(args)
	if err != nil {
		fmt.Fprint(stderr, usageText)
		return err
	}
	if engine == "sglang" {
		return mainSGLang(ctx, stdout, stderr, args)
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usageText)
		if len(args) == 0 {
			return exit.Quiet(exit.Usage)
		}
		return nil
	}
	if args[0] != "serve" {
		fmt.Fprint(stderr, usageText)
		return exit.Usagef("unknown sim command %q: use 'slogate sim serve MODEL [flags]'", args[0])
	}
	for _, a := range args[1:] {
		if a == "-h" || a == "--help" || strings.HasPrefix(a, "--help=") {
			fmt.Fprint(stdout, usageText)
			return nil
		}
	}
	cfg, err := parseServe(args[1:])
	if err != nil {
		return err
	}
	return serve(ctx, stdout, stderr, cfg)
}

// settings are the derived numbers a run uses, checked for sense.
type settings struct {
	prof     *Profile
	params   engineParams // engine 0's; the others differ only in index
	engines  int          // --data-parallel-size
	maxLen   int
	kvTokens int // true KV capacity of one engine in tokens (what it admits against)
	maxSeqs  int
	gpuUtil  float64
	kv       kvReport // what vLLM reports about the KV cache, per engine
}

// kvReport is the KV cache as vLLM describes it: the log line and the
// vllm:cache_config_info labels.
type kvReport struct {
	blockSize      int     // cache_config_info block_size
	numGPUBlocks   int     // per engine (the label carries the sum over engines)
	sizeTokens     int     // kv_cache_size_tokens and the log line, per engine
	maxConcurrency float64 // kv_cache_max_concurrency: requests of max_model_len that fit
}

// v019SizeTokens is the "GPU KV cache size" vLLM 0.19 printed: the blocks
// divided evenly across the KV cache groups, times the block size
// (vLLM #40691; the hybrid layout has hybridAttnGroups+hybridStateGroups
// groups of one block size).
func (k kvReport) v019SizeTokens() int {
	if k.blockSize != hybridBlockSize {
		return k.sizeTokens
	}
	return k.numGPUBlocks / (hybridAttnGroups + hybridStateGroups) * k.blockSize
}

// The hybrid layout --sim-hybrid models (a Mamba / linear-attention model
// like Qwen3.5 or Ling-3.0): the KV pool is shared by hybridAttnGroups
// attention groups, whose blocks a request fills token by token, and
// hybridStateGroups linear-attention groups that hold one state block per
// request; block_size is aligned up to hybridBlockSize tokens so that a
// block's page matches the state's page. A request of L tokens takes
// hybridAttnGroups·⌈L/block_size⌉ + hybridStateGroups blocks, so
// num_gpu_blocks × block_size is about twice the token capacity, which
// kv_cache_size_tokens (= max concurrency × max_model_len, as vLLM's
// get_kv_cache_capacity) gives right. The simulator still admits against
// that token capacity at 16-token granularity: block-rounding waste within
// a request is not modelled.
const (
	hybridBlockSize   = 2112
	hybridAttnGroups  = 2
	hybridStateGroups = 6
)

// describeKV computes what vLLM reports for an engine holding kvTokens.
func describeKV(kvTokens, maxLen int, hybrid bool) kvReport {
	if !hybrid {
		n := kvTokens / blockSize
		return kvReport{blockSize: blockSize, numGPUBlocks: n, sizeTokens: n * blockSize,
			maxConcurrency: float64(n) / float64((maxLen+blockSize-1)/blockSize)}
	}
	perRequest := func(tokens int) int {
		return hybridAttnGroups*((tokens+hybridBlockSize-1)/hybridBlockSize) + hybridStateGroups
	}
	// The capacity is kvTokens exactly (as --sim-kv-tokens asks; vLLM's
	// own figure is int(concurrency × max_model_len), which an integer
	// block count makes land within a request's blocks of it): the blocks
	// are what holds it, rounded up.
	per := perRequest(maxLen)
	n := int(math.Ceil(float64(kvTokens) * float64(per) / float64(maxLen)))
	conc := float64(kvTokens) / float64(maxLen)
	return kvReport{blockSize: hybridBlockSize, numGPUBlocks: n, sizeTokens: kvTokens, maxConcurrency: conc}
}

// settle combines the profile with the flags, failing like vLLM would when
// the combination cannot start.
func settle(cfg *Config) (*settings, error) {
	p := chooseProfile(cfg)
	s := &settings{prof: p, maxLen: cfg.MaxModelLen, maxSeqs: cfg.MaxNumSeqs, gpuUtil: cfg.GPUMemUtil}
	if s.maxLen == 0 {
		s.maxLen = p.MaxModel
	}
	if s.maxSeqs == 0 {
		s.maxSeqs = 1024 // vLLM's default on ≥70 GiB GPUs (H200)
	}
	if s.gpuUtil == 0 {
		s.gpuUtil = p.GPUUtil
	}
	if cfg.KVTokens > 0 {
		s.kvTokens = cfg.KVTokens
	} else {
		// KV capacity scales with the memory left after weights, the number
		// of GPUs, and the bytes per KV element.
		weightsPerGPU := p.Weights * float64(p.TP) / float64(cfg.TensorParallel)
		free := s.gpuUtil - weightsPerGPU
		if free <= 0 {
			return nil, exit.With(1, fmt.Errorf("no available memory for the cache blocks: the model's weights take %.0f%% of each GPU at --tensor-parallel-size %d; try increasing --gpu-memory-utilization or --tensor-parallel-size",
				weightsPerGPU*100, cfg.TensorParallel))
		}
		profBytes, _ := kvDtypeBytes(p.KVDtype)
		bytesPer, _ := kvDtypeBytes(cfg.KVCacheDtype)
		scale := free * float64(cfg.TensorParallel) / ((p.GPUUtil - p.Weights) * float64(p.TP)) * profBytes / bytesPer
		s.kvTokens = int(float64(p.KVTokens) * scale)
	}
	s.kvTokens = s.kvTokens / blockSize * blockSize
	s.engines = cfg.DataParallel
	s.kv = describeKV(s.kvTokens, s.maxLen, cfg.Hybrid)
	// The engine admits against the capacity vLLM reports.
	s.kvTokens = s.kv.sizeTokens / blockSize * blockSize
	if s.maxLen > s.kvTokens && !cfg.sglang { // SGLang serves a context longer than its pool
		return nil, exit.With(1, fmt.Errorf("to serve at least one request with the model's max seq len (%d), (%.2f GiB KV cache is needed, which is larger than the available KV cache memory (%.2f GiB). Based on the available memory, the estimated maximum model length is %d. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine",
			s.maxLen, float64(s.maxLen)/float64(1<<20), float64(s.kvTokens)/float64(1<<20), s.kvTokens))
	}
	ep := engineParams{
		model: buildModel(p), maxLen: s.maxLen, numBlocks: s.kvTokens / blockSize, runCap: s.maxSeqs,
		prefixCache: cfg.PrefixCaching == nil || *cfg.PrefixCaching,
		acceptLen:   1, stepScale: 1, profAccept: 1,
		tbt: cfg.TBT, ttft: cfg.TTFT, prefillTPS: cfg.PrefillTPS, seed: cfg.Seed,
		noise: cfg.Noise, preempt: cfg.Preempt, slowAt: cfg.SlowAt, slowdown: cfg.Slowdown,
		bootFactor: bootFactor(cfg),
	}
	if p.RunCap > 0 {
		ep.runCap = min(ep.runCap, p.RunCap)
	}
	const draftOverhead = 1.25 // when the profile has none
	if p.Speculative != nil {
		ep.profAccept = p.Speculative.AcceptLen
	}
	if sc := cfg.Speculative; sc != nil {
		ep.numSpeculative = sc.NumSpeculativeTokens
		switch {
		case cfg.AcceptLen > 0:
			ep.acceptLen = cfg.AcceptLen
		case sc.SyntheticAcceptLen > 0:
			ep.acceptLen = sc.SyntheticAcceptLen
		case p.Speculative != nil:
			ep.acceptLen = p.Speculative.AcceptLen
		default:
			ep.acceptLen = 2
		}
		ep.acceptLen = math.Min(ep.acceptLen, float64(sc.NumSpeculativeTokens+1))
		if p.Speculative == nil {
			ep.stepScale = draftOverhead
		}
	} else if p.Speculative != nil {
		ep.stepScale = 1 / p.Speculative.DraftOverhead
	}
	if cfg.SpeculativeOff && cfg.Speculative != nil {
		// Configured and reported, never run: plain one-token steps.
		ep.draftsOff = true
		ep.acceptLen = 1
		ep.stepScale = 1
		if p.Speculative != nil {
			ep.stepScale = 1 / p.Speculative.DraftOverhead
		}
	}
	s.params = ep
	return s, nil
}

// bootFactor is --sim-boot-noise's step-time factor for this process
// start: log-normal with mean 1 and σ = the flag, drawn once from
// --sim-seed and the boot seed (Config.BootSeed), as a real server's
// clocks, placement and compiled kernels settle differently at every
// start. 1 without the flag.
func bootFactor(cfg *Config) float64 {
	sigma := cfg.BootNoise
	if sigma == 0 {
		return 1
	}
	z := rand.New(rand.NewPCG(cfg.Seed, cfg.BootSeed^0x626f6f74)).NormFloat64()
	return math.Exp(sigma*z - sigma*sigma/2)
}

// serve runs the simulator until ctx is done (nil) or --sim-exit-after
// fires (an error, exit 1, as a crashed server).
func serve(ctx context.Context, stdout, stderr io.Writer, cfg *Config) error {
	log := &logger{w: stdout, pid: os.Getpid()}
	st, err := settle(cfg)
	if err != nil {
		log.printf(engineProc(0, cfg.DataParallel), "ERROR", "core.py:708", "EngineCore failed to start.")
		return err
	}
	if cfg.IgnoreSIGTERM {
		// What `docker stop` meets in a server that does not exit on
		// SIGTERM: it waits out its grace period, then SIGKILLs. Ignore
		// also undoes slogate's own Notify for SIGTERM; SIGINT still
		// cancels ctx.
		signal.Ignore(syscall.SIGTERM)
		log.printf("APIServer", "WARNING", "sim.go:1", "ignoring SIGTERM (--sim-ignore-sigterm): only SIGINT or SIGKILL stops this server")
	}
	p := st.prof
	version := p.serverVersion()
	log.printf("APIServer", "INFO", "api_server.py:1839", "vLLM API server version %s", version)
	log.printf("APIServer", "INFO", "api_utils.py:286", "non-default args: {'model': '%s', %s}", cfg.Model, strings.Join(cfg.nonDefaultLog(), ", "))
	for _, ig := range cfg.Ignored {
		log.printf("APIServer", "WARNING", "sim.go:1", "ignoring vLLM flag %s (not modelled by the simulator)", ig)
	}
	log.printf("APIServer", "INFO", "sim.go:1", "simulator profile %q (%s)", p.Name, p.Source)
	if cfg.BootNoise > 0 {
		log.printf("APIServer", "INFO", "sim.go:1", "boot step-time factor %.4f (--sim-boot-noise %g, boot seed %d)", st.params.bootFactor, cfg.BootNoise, cfg.BootSeed)
	}
	log.printf("APIServer", "INFO", "model.py:1510", "Using max model len %d", st.maxLen)
	log.printf("APIServer", "INFO", "scheduler.py:225", "Chunked prefill is enabled with max_num_batched_tokens=%d.", cfg.MaxNumBatchedTokens)
	if sc := cfg.Speculative; sc != nil {
		log.printf(engineProc(0, st.engines), "INFO", "speculative.py:1", "Speculative decoding: method=%s num_speculative_tokens=%d mean acceptance length %.2f",
			sc.Method, sc.NumSpeculativeTokens, st.params.acceptLen)
	}
	startup := time.Now()
	if cfg.Startup > 0 {
		log.printf(engineProc(0, st.engines), "INFO", "gpu_model_runner.py:2602", "Loading weights (simulated, %v)…", cfg.Startup)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(cfg.Startup):
		}
	}
	// One KV report per engine (each data-parallel rank is its own
	// EngineCore process), as kv_cache_utils.py logs it.
	for i := range st.engines {
		proc := engineProc(i, st.engines)
		log.printf(proc, "INFO", "gpu_worker.py:298", "Available KV cache memory: %.2f GiB", float64(st.kvTokens)/float64(1<<20))
		size, maxLen := numfmt.Int(int64(st.kv.sizeTokens)), numfmt.Int(int64(st.maxLen))
		switch form := cfg.kvLogForm(); form {
		case kvLogTwoLines, kvLogV019:
			// Builds before PR #42206 print two lines; vLLM 0.19 computed
			// the size line as (num_blocks // KV groups) × the smallest
			// block size, wrong for hybrid models (vLLM #40691).
			if form == kvLogV019 {
				size = numfmt.Int(int64(st.kv.v019SizeTokens()))
			}
			log.printf(proc, "INFO", "kv_cache_utils.py:1087", "GPU KV cache size: %s tokens", size)
			log.printf(proc, "INFO", "kv_cache_utils.py:1091", "Maximum concurrency for %s tokens per request: %.2fx", maxLen, st.kv.maxConcurrency)
		case kvLogConcurrencyOnly:
			log.printf(proc, "INFO", "kv_cache_utils.py:1091", "Maximum concurrency for %s tokens per request: %.2fx", maxLen, st.kv.maxConcurrency)
		default:
			log.printf(proc, "INFO", "kv_cache_utils.py:1308", "GPU KV cache size: %s tokens, Maximum concurrency for %s tokens per request: %.2fx",
				size, maxLen, st.kv.maxConcurrency)
		}
		log.printf(proc, "INFO", "core.py:210", "init engine (profile, create kv cache, warmup model) took %.2f seconds", time.Since(startup).Seconds())
	}

	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
	if err != nil {
		return exit.With(1, fmt.Errorf("cannot listen on %s:%d: %w", cfg.Host, cfg.Port, err))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv, err := newServer(cfg, st, log)
	if err != nil {
		ln.Close()
		return exit.With(1, err)
	}
	if srv.record != nil {
		defer srv.record.close()
	}
	var wg sync.WaitGroup
	for _, eng := range srv.engs {
		wg.Add(2)
		go func() { defer wg.Done(); eng.run(ctx) }()
		go func() { defer wg.Done(); logStats(ctx, log, eng, cfg.LogInterval) }()
	}
	hs := &http.Server{Handler: srv.routes(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: nil}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	log.printf("APIServer", "INFO", "api_server.py:1884", "Starting vLLM API server 0 on http://%s", ln.Addr())
	fmt.Fprintln(stderr, "INFO:     Application startup complete.")

	var exitAfter <-chan time.Time
	if cfg.ExitAfter > 0 {
		exitAfter = time.After(cfg.ExitAfter)
	}
	var result error
	select {
	case <-ctx.Done():
		log.printf("APIServer", "INFO", "launcher.py:99", "Shutting down FastAPI HTTP server.")
	case <-exitAfter:
		log.printf(engineProc(0, st.engines), "ERROR", "core.py:1", "EngineCore encountered a fatal error (simulated by --sim-exit-after %v).", cfg.ExitAfter)
		result = exit.With(1, fmt.Errorf("simulated crash after %v (--sim-exit-after)", cfg.ExitAfter))
	case err := <-served:
		result = exit.With(1, fmt.Errorf("HTTP server: %w", err))
	}
	cancel()
	hs.Close()
	wg.Wait()
	if result == nil {
		if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			result = exit.With(1, err)
		}
	}
	return result
}

// newServer builds the HTTP side and its engines (not yet running).
func newServer(cfg *Config, st *settings, log *logger) (*server, error) {
	bodies := make(chan *bytes.Buffer, parseSlots)
	for range parseSlots {
		bodies <- new(bytes.Buffer)
	}
	s := &server{cfg: cfg, bodies: bodies, maxLen: st.maxLen,
		version: st.prof.serverVersion(), log: log,
		info: metricsInfo{modelName: cfg.ServedNames[0], numBlocks: st.params.numBlocks, created: float64(time.Now().UnixNano()) / 1e9,
			cacheConfig: cacheConfigLabels(cfg, st), numSpeculative: st.params.numSpeculative, waitingByReason: !cfg.NoWaitingByReason},
		errorRNG: rand.New(rand.NewPCG(cfg.Seed, 7)), adm: newAdmission(cfg),
		fingerprint: systemFingerprint(cfg, st.prof.serverVersion())}
	for i := range max(st.engines, 1) {
		p := st.params
		p.index = i
		s.engs = append(s.engs, newEngine(p))
	}
	if cfg.RecordFile != "" {
		r, err := openRecorder(cfg.RecordFile)
		if err != nil {
			return nil, err
		}
		s.record = r
	}
	return s, nil
}

// cacheConfigLabels are vllm:cache_config_info's labels: every CacheConfig
// field in vLLM 0.32.0's declaration order (vllm/config/cache.py;
// metrics_info() renders each with str(), so unset ones are "None"; the
// private _block_size_resolved last, as its __dict__ has it), engine
// appended by the writer. num_gpu_blocks is the sum over data-parallel
// engines (core_client.py _apply_ready_response adds up the engines'
// counts) while kv_cache_size_tokens and kv_cache_max_concurrency are one
// engine's (PR #42206; absent with --sim-no-kv-size-label, as in earlier
// builds). The values are a GPU server's: the CPU build vLLM 0.32.0 was
// recorded on differs in a few (mamba_ssm_cache_dtype "float32",
// kv_cache_memory_bytes from VLLM_CPU_KVCACHE_SPACE, block_size 128).
func cacheConfigLabels(cfg *Config, st *settings) []label {
	none := "None"
	hybrid := func(v, otherwise string) string {
		if cfg.Hybrid {
			return v
		}
		return otherwise
	}
	prefix := cfg.PrefixCaching == nil || *cfg.PrefixCaching
	mambaMode := "none"
	if cfg.Hybrid && prefix {
		mambaMode = "align"
	}
	bs := strconv.Itoa(st.kv.blockSize)
	ls := []label{
		{"block_size", bs},
		{"user_specified_block_size", "False"},
		{"kv_cache_layout", none},
		{"prefix_match_unit", none},
		{"gpu_memory_utilization", fmtFloat(st.gpuUtil)},
		{"cache_dtype", cfg.KVCacheDtype},
		{"is_attention_free", "False"},
		{"num_gpu_blocks_override", none},
		{"sliding_window", none},
		{"enable_prefix_caching", pyBool(prefix)},
		{"prefix_caching_hash_algo", "sha256"},
		{"prefix_cache_retention_interval", "0"},
		{"kv_cache_dtype_skip_layers", "[]"},
		{"mamba_page_size_padded", none},
		{"skip_page_size_padded", none},
		{"mamba_block_size", hybrid(bs, none)},
		{"mamba_cache_dtype", "auto"},
		{"mamba_ssm_cache_dtype", "auto"},
		{"mamba_cache_mode", mambaMode},
		{"enable_mamba_shared_prefix_checkpoint", "False"},
		{"replayssm_buffer_len", "16"},
		{"use_replayssm", "False"},
		{"use_kda_recoverssm", "False"},
		{"num_gpu_blocks", strconv.Itoa(st.kv.numGPUBlocks * max(st.engines, 1))},
		{"num_cpu_blocks", none},
	}
	if !cfg.NoKVSizeLabel {
		ls = append(ls,
			label{"effective_attention_block_size", bs},
			label{"kv_cache_size_tokens", strconv.Itoa(st.kv.sizeTokens)},
			label{"kv_cache_max_concurrency", fmtFloat(st.kv.maxConcurrency)})
	}
	return append(ls,
		label{"hash_block_size", none},
		label{"cache_hit_alignment_tokens", none},
		label{"kv_sharing_fast_prefill", "False"},
		label{"swa_bounded_replay", "True"},
		label{"kv_cache_memory_bytes", none},
		label{"kv_offloading_size", none},
		label{"kv_offloading_backend", "native"},
		label{"_block_size_resolved", "True"})
}

// logStats prints vLLM's periodic throughput line.
func logStats(ctx context.Context, log *logger, eng *engine, every time.Duration) {
	if every <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	prev, last := eng.snapshot(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			s := eng.snapshot()
			dt := now.Sub(last).Seconds()
			hit := 0.0
			if q := s.prefixQueries - prev.prefixQueries; q > 0 {
				hit = float64(s.prefixHits-prev.prefixHits) / float64(q) * 100
			}
			usage := 0.0
			if eng.p.numBlocks > 0 {
				usage = float64(s.usedBlocks) / float64(eng.p.numBlocks) * 100
			}
			log.printf("APIServer", "INFO", "loggers.py:236", "Engine %03d: Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, Running: %d reqs, Waiting: %d reqs, GPU KV cache usage: %.1f%%, Prefix cache hit rate: %.1f%%",
				eng.p.index, float64(s.promptTokens-prev.promptTokens)/dt, float64(s.generationTokens-prev.generationTokens)/dt, s.running, s.waiting, usage, hit)
			if d := s.drafts - prev.drafts; d > 0 {
				log.printf("APIServer", "INFO", "metrics.py:96", "SpecDecoding metrics: Mean acceptance length: %.2f, Accepted: %d tokens, Drafted: %d tokens",
					1+float64(s.acceptedTokens-prev.acceptedTokens)/float64(d), s.acceptedTokens-prev.acceptedTokens, s.draftTokens-prev.draftTokens)
			}
			prev, last = s, now
		}
	}
}

// engineProc is the log prefix of engine i of n: vLLM names its engine
// core process EngineCore_DP<i> under data parallelism and EngineCore
// without it (EngineCoreProc.run_engine_core, vllm/v1/engine/core.py).
func engineProc(i, n int) string {
	if n > 1 {
		return "EngineCore_DP" + strconv.Itoa(i)
	}
	return "EngineCore"
}

// logger writes vLLM-style log lines to stdout.
type logger struct {
	mu  sync.Mutex
	w   io.Writer
	pid int
}

func (l *logger) printf(proc, level, where, format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	pid := l.pid
	if rank, ok := strings.CutPrefix(proc, "EngineCore"); ok {
		n, _ := strconv.Atoi(strings.TrimPrefix(rank, "_DP"))
		pid += 1 + n // each engine core is a process of its own
	}
	fmt.Fprintf(l.w, "(%s pid=%d) %s %s [%s] %s\n", proc, pid, level, time.Now().Format("01-02 15:04:05"), where, fmt.Sprintf(format, a...))
}

const usageText = `Usage: slogate sim serve MODEL [vLLM flags] [--sim-* flags]
   or: slogate sim --engine sglang serve MODEL [SGLang flags]   (see 'slogate sim --engine sglang serve --help')

Runs a vLLM-compatible simulator: same flags, HTTP API and /metrics as
'vllm serve', with performance fitted to real measurements (profiles qwen,
glm, ling, generic; chosen from the model name or with --sim-profile).

vLLM flags it models (any other vLLM flag is accepted and ignored):
  --served-model-name NAME…      names the API answers to (default MODEL)
  --host H, --port P             listen address (0.0.0.0, 8000)
  --api-key K                    require "Authorization: Bearer K"
  --max-model-len N|128k|auto    context length
  --max-num-seqs N               most requests in the batch (1024)
  --max-num-batched-tokens N     tokens per engine step (8192)
  --max-num-queued-reqs N        refuse (503) a request that would make more than N unfinished
  --max-num-queued-tokens N      refuse (503) a request while N prompt tokens are in prefill
  --tensor-parallel-size N       GPUs per engine (-tp)
  --data-parallel-size N         N engines sharing the load, each its own KV and batch (-dp)
  --kv-cache-dtype D             auto, fp8, …
  --gpu-memory-utilization F     fraction of GPU memory vLLM may use
  --[no-]enable-prefix-caching   prefix caching on or off (16-token blocks, LRU eviction)
                                 (with --enable-prompt-tokens-details, usage has the cached tokens)
  --speculative-config JSON      e.g. '{"method":"dflash","num_speculative_tokens":7}' (-sc)
  --generation-config DIR        default sampling from DIR/generation_config.json (auto, vllm: none)
  --override-generation-config   default sampling as JSON, e.g. '{"min_p": 0.05}'; as vLLM, only
                                 repetition_penalty, temperature, top_k, top_p, min_p count
  --reasoning-parser NAME        chat streams reason first: a seeded share of each output in
                                 delta.reasoning (SGLang: delta.reasoning_content), then content

Simulator flags:
  --sim-profile NAME             qwen, glm, ling or generic
  --sim-startup D                refuse connections for D before serving
  --sim-tbt D                    flat time between tokens per sequence (e.g. 2ms)
  --sim-ttft D                   flat warm time to first token
  --sim-prefill-tps N            flat cold prefill rate, tokens/s
  --sim-kv-tokens N              KV cache capacity in tokens (per data-parallel engine)
  --sim-accept-len X             mean speculative acceptance length
  --sim-seed N                   random seed (1)
  --sim-log-interval D           stats log period (10s; 0 = off)
  --sim-noise F                  seeded log-normal jitter of step times (e.g. 0.03 = 3 %)
  --sim-slowdown F               every step F× as long, prefill and decode (1.2 = a 20 % slower build)
  --sim-boot-noise F             log-normal step-time factor drawn once per start (seed: --sim-seed
                                 and $SLOGATE_BOOT, else the start time): boot-to-boot variation
  --sim-slow-at-concurrency N:F  steps F× slower while N (or LO-HI) requests run: a non-monotone server
  --sim-record FILE              append one JSON line per generation request (what was sent)
  --sim-eos-mean N               mean answer length (log-normal, seeded per prompt) of requests
                                 without ignore_eos, which end at their EOS (256)
  --sim-reasoning-share F        with --reasoning-parser, the mean share of a chat output spent
                                 reasoning (0.5): each request F × [0.5, 1.5), seeded per prompt,
                                 at most all of it (2: every request reasons to its max tokens)
vLLM variants:
  --sim-hybrid                   hybrid (linear-attention) model: large block_size,
                                 num_gpu_blocks x block_size is not the token capacity
  --sim-no-kv-size-label         a build before PR #42206: no kv_cache_size_tokens label,
                                 KV size and concurrency on two log lines
  --sim-kv-log FORM              the KV log lines: one-line, two-lines, concurrency-only,
                                 or v0.19 (two lines, the size wrong for --sim-hybrid: #40691)
  --sim-no-waiting-by-reason     a build before PR #38435: no vllm:num_requests_waiting_by_reason
  --sim-refuse-over-length       a build before 0.32: max_tokens past max_model_len is refused (400),
                                 not shortened to the room the prompt leaves
  --sim-preempt                  admit without reserving KV; preempt (recompute) when it runs out
  --sim-spec-off                 speculative decoding configured but never running
  --sim-flat-errors              mid-stream errors as {"object":"error",…} (older builds)
Faults:
  --sim-exit-after D             crash (exit 1) after D
  --sim-stall-after N            streams stop sending after N chunks, connection kept open
  --sim-error-rate P             answer HTTP 500 to this fraction of generation requests
Correctness (a request with logprobs gets a greedy output seeded by its prompt):
  --sim-drift P                  this share of prompts diverges at a seeded position: half at
                                 a near tie, half at a mismatch
  --sim-accuracy A               outputs begin " #### N", N the prompt's answer with
                                 probability A (seeded by the prompt), else N + 1
  --sim-midstream-error-after N  send data: {"error":…} then [DONE] after N chunks
  --sim-truncate-after N         close streams after N chunks without [DONE]
  --sim-no-continuous-usage      ignore stream_options.continuous_usage_stats
  --sim-one-token-chunks         one token per chunk, even with speculative decoding
  --sim-ignore-sigterm           ignore SIGTERM, as a server 'docker stop' must kill; SIGINT still stops it

Examples:
  slogate sim serve Qwen/Qwen3.5-4B --port 8000 --sim-startup 5s
  slogate sim serve m --sim-profile glm -tp 2 --max-num-seqs 32 --kv-cache-dtype fp8
  slogate sim serve m --sim-tbt 2ms --sim-kv-tokens 65536 --sim-error-rate 0.01
`
