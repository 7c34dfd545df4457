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
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/numfmt"
)

// Main runs `slogate sim` with args (what follows "sim"). It returns nil
// when ctx is cancelled (SIGINT/SIGTERM): a clean shutdown.
func Main(ctx context.Context, stdout, stderr io.Writer, args []string) error {
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
	params   engineParams
	maxLen   int
	kvTokens int
	maxSeqs  int
	gpuUtil  float64
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
	if s.maxLen > s.kvTokens {
		return nil, exit.With(1, fmt.Errorf("to serve at least one request with the model's max seq len (%d), (%.2f GiB KV cache is needed, which is larger than the available KV cache memory (%.2f GiB). Based on the available memory, the estimated maximum model length is %d. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine",
			s.maxLen, float64(s.maxLen)/float64(1<<20), float64(s.kvTokens)/float64(1<<20), s.kvTokens))
	}
	ep := engineParams{
		model: buildModel(p), numBlocks: s.kvTokens / blockSize, runCap: s.maxSeqs,
		prefixCache: cfg.PrefixCaching == nil || *cfg.PrefixCaching,
		acceptLen:   1, stepScale: 1, profAccept: 1,
		tbt: cfg.TBT, ttft: cfg.TTFT, prefillTPS: cfg.PrefillTPS, seed: cfg.Seed,
	}
	if p.RunCap > 0 {
		ep.runCap = min(ep.runCap, p.RunCap)
	}
	const draftOverhead = 1.25 // when the profile has none
	if p.Spec != nil {
		ep.profAccept = p.Spec.AcceptLen
	}
	if sc := cfg.Speculative; sc != nil {
		ep.specTokens = sc.NumSpeculativeTokens
		switch {
		case cfg.AcceptLen > 0:
			ep.acceptLen = cfg.AcceptLen
		case sc.SyntheticAcceptLen > 0:
			ep.acceptLen = sc.SyntheticAcceptLen
		case p.Spec != nil:
			ep.acceptLen = p.Spec.AcceptLen
		default:
			ep.acceptLen = 2
		}
		ep.acceptLen = math.Min(ep.acceptLen, float64(sc.NumSpeculativeTokens+1))
		if p.Spec == nil {
			ep.stepScale = draftOverhead
		}
	} else if p.Spec != nil {
		ep.stepScale = 1 / p.Spec.DraftOverhead
	}
	s.params = ep
	return s, nil
}

// serve runs the simulator until ctx is done (nil) or --sim-exit-after
// fires (an error, exit 1, as a crashed server).
func serve(ctx context.Context, stdout, stderr io.Writer, cfg *Config) error {
	log := &logger{w: stdout, pid: os.Getpid()}
	st, err := settle(cfg)
	if err != nil {
		log.printf("EngineCore_DP0", "ERROR", "core.py:708", "EngineCore failed to start.")
		return err
	}
	p := st.prof
	version := p.Version + "-slogate-sim"
	log.printf("APIServer", "INFO", "api_server.py:1839", "vLLM API server version %s", version)
	log.printf("APIServer", "INFO", "utils.py:328", "non-default args: {'model': '%s', %s}", cfg.Model, strings.Join(cfg.nonDefaultLog(), ", "))
	for _, ig := range cfg.Ignored {
		log.printf("APIServer", "WARNING", "sim.go:1", "ignoring vLLM flag %s (not modelled by the simulator)", ig)
	}
	log.printf("APIServer", "INFO", "sim.go:1", "simulator profile %q (%s)", p.Name, p.Source)
	log.printf("APIServer", "INFO", "model.py:1510", "Using max model len %d", st.maxLen)
	log.printf("APIServer", "INFO", "scheduler.py:225", "Chunked prefill is enabled with max_num_batched_tokens=%d.", cfg.MaxNumBatchedTokens)
	if sc := cfg.Speculative; sc != nil {
		log.printf("EngineCore_DP0", "INFO", "speculative.py:1", "Speculative decoding: method=%s num_speculative_tokens=%d mean acceptance length %.2f",
			sc.Method, sc.NumSpeculativeTokens, st.params.acceptLen)
	}
	startup := time.Now()
	if cfg.Startup > 0 {
		log.printf("EngineCore_DP0", "INFO", "gpu_model_runner.py:2602", "Loading weights (simulated, %v)…", cfg.Startup)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(cfg.Startup):
		}
	}
	log.printf("EngineCore_DP0", "INFO", "gpu_worker.py:298", "Available KV cache memory: %.2f GiB", float64(st.kvTokens)/float64(1<<20))
	log.printf("EngineCore_DP0", "INFO", "kv_cache_utils.py:1087", "GPU KV cache size: %s tokens", commas(int64(st.kvTokens)))
	log.printf("EngineCore_DP0", "INFO", "kv_cache_utils.py:1091", "Maximum concurrency for %s tokens per request: %.2fx",
		commas(int64(st.maxLen)), float64(st.kvTokens)/float64(st.maxLen))
	log.printf("EngineCore_DP0", "INFO", "core.py:210", "init engine (profile, create kv cache, warmup model) took %.2f seconds", time.Since(startup).Seconds())

	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
	if err != nil {
		return exit.With(1, fmt.Errorf("cannot listen on %s:%d: %w", cfg.Host, cfg.Port, err))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := newServer(cfg, st, log)
	eng := srv.eng
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); eng.run(ctx) }()
	go func() { defer wg.Done(); logStats(ctx, log, eng, cfg.LogInterval) }()
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
		log.printf("EngineCore_DP0", "ERROR", "core.py:1", "EngineCore encountered a fatal error (simulated by --sim-exit-after %v).", cfg.ExitAfter)
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

// newServer builds the HTTP side and its engine (not yet running).
func newServer(cfg *Config, st *settings, log *logger) *server {
	bodies := make(chan *bytes.Buffer, parseSlots)
	for range parseSlots {
		bodies <- new(bytes.Buffer)
	}
	return &server{cfg: cfg, bodies: bodies, eng: newEngine(st.params), maxLen: st.maxLen,
		version: st.prof.Version + "-slogate-sim", log: log,
		info: metricsInfo{modelName: cfg.ServedNames[0], numBlocks: st.params.numBlocks, cacheDtype: cfg.KVCacheDtype,
			prefixCaching: st.params.prefixCache, specTokens: st.params.specTokens, gpuUtil: st.gpuUtil},
		errorRNG: rand.New(rand.NewPCG(cfg.Seed, 7))}
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
			log.printf("APIServer", "INFO", "loggers.py:236", "Engine 000: Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, Running: %d reqs, Waiting: %d reqs, GPU KV cache usage: %.1f%%, Prefix cache hit rate: %.1f%%",
				float64(s.promptTokens-prev.promptTokens)/dt, float64(s.generationTokens-prev.generationTokens)/dt, s.running, s.waiting, usage, hit)
			if d := s.specDrafts - prev.specDrafts; d > 0 {
				log.printf("APIServer", "INFO", "metrics.py:96", "SpecDecoding metrics: Mean acceptance length: %.2f, Accepted: %d tokens, Drafted: %d tokens",
					1+float64(s.specAccepted-prev.specAccepted)/float64(d), s.specAccepted-prev.specAccepted, s.specDraftTokens-prev.specDraftTokens)
			}
			prev, last = s, now
		}
	}
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
	fmt.Fprintf(l.w, "(%s pid=%d) %s %s [%s] %s\n", proc, l.pid, level, time.Now().Format("01-02 15:04:05"), where, fmt.Sprintf(format, a...))
}

// commas formats n with thousands separators, as vLLM's log does.
func commas(n int64) string { return numfmt.Int(n) }

const usageText = `Usage: slogate sim serve MODEL [vLLM flags] [--sim-* flags]

Runs a vLLM-compatible simulator: same flags, HTTP API and /metrics as
'vllm serve', with performance fitted to real measurements (profiles qwen,
glm, ling, generic; chosen from the model name or with --sim-profile).

vLLM flags it models (any other vLLM flag is accepted and ignored):
  --served-model-name NAME…   --host H (0.0.0.0)   --port P (8000)   --api-key K
  --max-model-len N|128k|256K|auto     --max-num-seqs N (1024)
  --max-num-batched-tokens N   --tensor-parallel-size N   --kv-cache-dtype D
  --gpu-memory-utilization F   --[no-]enable-prefix-caching
  --speculative-config '{"method":"dflash","num_speculative_tokens":7}'

Simulator flags:
  --sim-profile NAME             qwen, glm, ling or generic
  --sim-startup D                refuse connections for D before serving
  --sim-tbt D                    flat time between tokens per sequence (e.g. 2ms)
  --sim-ttft D                   flat warm time to first token
  --sim-prefill-tps N            flat cold prefill rate, tokens/s
  --sim-kv-tokens N              KV cache capacity in tokens
  --sim-accept-len X             mean speculative acceptance length
  --sim-seed N                   random seed (1)
  --sim-log-interval D           stats log period (10s; 0 = off)
Faults:
  --sim-exit-after D             crash (exit 1) after D
  --sim-stall-after N            streams stop sending after N chunks, connection kept open
  --sim-error-rate P             answer HTTP 500 to this fraction of generation requests
  --sim-midstream-error-after N  send data: {"error":…} then [DONE] after N chunks
  --sim-truncate-after N         close streams after N chunks without [DONE]
  --sim-no-continuous-usage      ignore stream_options.continuous_usage_stats
  --sim-one-token-chunks         one token per chunk, even with speculative decoding
`
