package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
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
)

// sglangLogger writes SGLang's log lines: Python logging's
// "[%(asctime)s] %(message)s" on stderr (prepare_server_args), the
// scheduler's lines with its rank after the time as run_scheduler_process
// builds it: " DP{d}" under data parallelism, " TP{t}" when --tp-size is
// above 1 ("[… TP0]", "[… DP1 TP0]"; docs/sglang.md#log-lines).
type sglangLogger struct {
	mu  sync.Mutex
	w   io.Writer
	dp  int              // --dp-size
	tp  int              // --tp-size
	dpa bool             // --enable-dp-attention: the DP ranks share one TP group
	now func() time.Time // the clock the timestamps read (time.Now)
}

func (l *sglangLogger) line(prefix, format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now
	if l.now != nil {
		now = l.now
	}
	fmt.Fprintf(l.w, "[%s%s] %s\n", now().Format("2006-01-02 15:04:05"), prefix, fmt.Sprintf(format, a...))
}

// http logs a line of the HTTP server / TokenizerManager process.
func (l *sglangLogger) http(format string, a ...any) { l.line("", format, a...) }

// rank logs a line of DP rank r's first scheduler: its TP rank is 0, or
// under DP attention r × (tp ÷ dp), the TP rank of the group's first GPU
// (the DP ranks split one TP group).
func (l *sglangLogger) rank(r int, format string, a ...any) {
	l.line(l.rankPrefix(r), format, a...)
}

// rankPrefix is DP rank r's first scheduler's prefix.
func (l *sglangLogger) rankPrefix(r int) string {
	prefix := ""
	if l.dp > 1 {
		prefix = " DP" + strconv.Itoa(r)
	}
	if l.tp > 1 {
		t := 0
		if l.dpa && l.dp > 1 {
			t = r * max(l.tp/l.dp, 1)
		}
		prefix += " TP" + strconv.Itoa(t)
	}
	return prefix
}

// firstRank reports whether DP rank r's first scheduler has TP rank 0, the
// one that logs the scheduler's summary line ("if self.tp_rank == 0",
// managers/scheduler.py): every DP rank's under plain data parallelism,
// DP0's only under DP attention.
func (l *sglangLogger) firstRank(r int) bool { return r == 0 || !(l.dpa && l.dp > 1) }

// raw writes a line as is (uvicorn's, Python warnings).
func (l *sglangLogger) raw(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(l.w, s)
}

// sglangStartupError is a ValueError SGLang raises while resolving its
// arguments: the process prints the traceback's last line and exits 1.
type sglangStartupError struct{ msg string }

func (e *sglangStartupError) Error() string { return e.msg }

// resolve applies SGLang's argument resolution the simulator models
// (arg_groups/speculative_hook.py, docs/sglang.md#speculative-decoding):
// the speculative algorithm's defaults and refusals, max_running_requests
// 48 under speculative decoding. It sets the core model's speculative
// config: the drafts per step are speculative_num_draft_tokens − 1
// (docs/sglang.md#speculative-token-mapping).
func (c *sglangConfig) resolve(log *sglangLogger) error {
	if c.kvCacheDtype == "fp4_e2m1" && !c.legacyBuild {
		// configure_kv_cache_dtype (mem_cache/kv_cache_dtype.py, 2026):
		// argparse still lists the choice, startup refuses it.
		return &sglangStartupError{"ValueError: --kv-cache-dtype=fp4_e2m1 is deprecated. Use --kv-cache-dtype=fp4_mx_block16."}
	}
	algo := c.specAlgorithm
	if algo == "" {
		return nil
	}
	if algo == "NEXTN" {
		algo = "EAGLE" // _resolve_speculative_algorithm_alias
		c.specAlgorithm = algo
	}
	warn := log.http // SGLang's format shows no level: "[time] message"
	one := func(p **int, name string) {
		if *p == nil {
			v := 1
			*p = &v
		} else if **p != 1 {
			warn("%s only supports %s == 1; overriding %s=%d to 1.", algo, name, name, **p)
			v := 1
			*p = &v
		}
	}
	switch algo {
	case "DFLASH":
		switch {
		case c.enableDPAttention:
			return &sglangStartupError{"ValueError: Currently DFLASH speculative decoding does not support dp attention."}
		case c.ppSize != 1:
			return &sglangStartupError{"ValueError: Currently DFLASH speculative decoding only supports pp_size == 1."}
		case c.draftModel == "":
			return &sglangStartupError{"ValueError: DFLASH speculative decoding requires setting --speculative-draft-model-path."}
		}
		one(&c.numSteps, "speculative_num_steps")
		one(&c.eagleTopK, "speculative_eagle_topk")
		if b := c.dflashBlock; b != nil {
			if *b <= 0 {
				return &sglangStartupError{fmt.Sprintf("ValueError: DFLASH requires --speculative-dflash-block-size to be positive, got %d.", *b)}
			}
			if n := c.numDraftTokens; n != nil && *n != *b {
				return &sglangStartupError{fmt.Sprintf("ValueError: Both --speculative-num-draft-tokens and --speculative-dflash-block-size are set but they differ. For DFLASH they must match. speculative_num_draft_tokens=%d, speculative_dflash_block_size=%d.", *n, *b)}
			}
			v := *b
			c.numDraftTokens = &v
		}
		if c.numDraftTokens == nil {
			// SGLang reads block_size from the draft model's config; the
			// simulator has no model files, so it takes the fallback.
			v := 16
			c.numDraftTokens = &v
			warn("speculative_num_draft_tokens is not set; defaulting to %d for DFLASH.", v)
		}
	case "EAGLE", "EAGLE3", "STANDALONE":
		if c.numSteps == nil {
			// auto_choose_speculative_params picks per model; the
			// simulator takes 3 steps, topk 1, 4 draft tokens.
			s, k, d := 3, 1, 4
			c.numSteps, c.eagleTopK, c.numDraftTokens = &s, &k, &d
		}
		if c.eagleTopK == nil {
			k := 1
			c.eagleTopK = &k
		}
		if *c.eagleTopK == 1 && (c.numDraftTokens == nil || *c.numDraftTokens != *c.numSteps+1) {
			warn("speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1")
			d := *c.numSteps + 1
			c.numDraftTokens = &d
		}
		if c.numDraftTokens == nil {
			d := *c.numSteps + 1
			c.numDraftTokens = &d
		}
	case "NGRAM":
		if c.numDraftTokens == nil {
			d := 12
			c.numDraftTokens = &d
			warn("speculative_num_draft_tokens is set to 12 by default for ngram speculative decoding. You can override this by explicitly setting --speculative-num-draft-tokens.")
		}
	default:
		return &sglangStartupError{fmt.Sprintf("ValueError: unknown speculative algorithm %q (the simulator models DFLASH, EAGLE, EAGLE3, NEXTN, STANDALONE and NGRAM)", c.specAlgorithm)}
	}
	if c.maxRunning == nil {
		v := 48
		c.maxRunning = &v
		warn("Max running requests is reset to 48 for speculative decoding. You can override this by explicitly setting --max-running-requests.")
	}
	if *c.numDraftTokens < 2 {
		return &sglangStartupError{fmt.Sprintf("ValueError: the simulator needs speculative_num_draft_tokens ≥ 2 (one draft per step), got %d", *c.numDraftTokens)}
	}
	c.core.Speculative = &SpeculativeConfig{Method: strings.ToLower(algo), Model: c.draftModel, NumSpeculativeTokens: *c.numDraftTokens - 1}
	return nil
}

// settleSGLang settles the core model for SGLang's flags: the KV pool is
// the memory-derived capacity capped by --max-total-tokens, and
// max_running_requests unset is the pool over 2 (at most 4096), as the
// scheduler resolved it.
func settleSGLang(c *sglangConfig) (*settings, error) {
	st, err := settle(c.core)
	if err != nil {
		if strings.Contains(err.Error(), "no available memory") {
			return nil, exit.With(1, &sglangStartupError{"RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."})
		}
		return nil, err
	}
	if c.maxTotalTokens > 0 && c.maxTotalTokens < st.kvTokens {
		c.core.KVTokens = c.maxTotalTokens
		if st, err = settle(c.core); err != nil {
			return nil, err
		}
	}
	running := min(st.kvTokens/2, 4096)
	if c.maxRunning != nil {
		running = *c.maxRunning
	}
	st.maxSeqs = running
	st.params.runCap = running
	if !c.core.Preempt {
		st.params.ratio = sglangTokenRatio() // SGLang's admission, unless --sim-preempt asks for vLLM's
	}
	if st.prof.RunCap > 0 {
		st.params.runCap = min(running, st.prof.RunCap)
	}
	return st, nil
}

// logPools writes each DP rank's KV pool line and the scheduler's summary
// as SGLang's startup does (docs/sglang.md#log-lines): the pool line from
// KVCache._finalize_allocation_log (mem_cache/memory_pool.py) on every
// rank, the summary from the TP-rank-0 scheduler only.
func logPools(log *sglangLogger, c *sglangConfig, st *settings) {
	for i := range st.engines {
		kvGB := float64(st.kvTokens) * kvBytesPerToken / 2 / 1e9
		if c.legacyBuild { // before KVCache._finalize_allocation_log named the dtype
			log.rank(i, "KV Cache is allocated. #tokens: %d, K size: %.2f GB, V size: %.2f GB", st.kvTokens, kvGB, kvGB)
		} else {
			log.rank(i, "KV Cache is allocated. dtype: %s, #tokens: %d, K size: %.2f GB, V size: %.2f GB", sglangTorchDtype(c.kvCacheDtype), st.kvTokens, kvGB, kvGB)
		}
	}
	for i := range st.engines {
		if log.firstRank(i) {
			log.rank(i, "max_total_num_tokens=%d, chunked_prefill_size=%d, max_prefill_tokens=%d, max_running_requests=%d, context_len=%d, available_gpu_mem=%.2f GB",
				st.kvTokens, c.core.MaxNumBatchedTokens, c.maxPrefillTokens, st.maxSeqs, st.maxLen, 10.0)
		}
	}
}

// sglangTorchDtype is the torch dtype SGLang's KV line names for a
// --kv-cache-dtype (configure_kv_cache_dtype, mem_cache/kv_cache_dtype.py):
// auto is the model's dtype, bfloat16 for the simulator's models.
func sglangTorchDtype(kvCacheDtype string) string {
	switch kvCacheDtype {
	case "fp8_e4m3", "mxfp8":
		return "torch.float8_e4m3fn"
	case "fp8_e5m2":
		return "torch.float8_e5m2"
	case "nvfp4", "fp4_mx_block16", "fp4_e2m1":
		return "torch.float4_e2m1fn_x2"
	}
	return "torch.bfloat16"
}

// maxReqInputLen is the scheduler's max_req_input_len.
func maxReqInputLen(st *settings) int { return min(st.maxLen-1, st.kvTokens-1) }

// serveSGLang runs the SGLang imitation until ctx is done. A SIGTERM (the
// cause interrupt.Notify gives ctx) drains in-flight requests with no
// timeout before exiting; SIGINT stops at once (docs/sglang.md#shutdown).
func serveSGLang(ctx context.Context, stderr io.Writer, c *sglangConfig) error {
	log := &sglangLogger{w: stderr, dp: c.core.DataParallel, tp: c.core.TensorParallel, dpa: c.enableDPAttention}
	if c.core.IgnoreSIGTERM {
		signal.Ignore(syscall.SIGTERM) // as serve: only SIGINT or SIGKILL stops it
	}
	if c.launchServer {
		log.raw("<frozen runpy>:128: UserWarning: 'python -m sglang.launch_server' is still supported, but 'sglang serve' is the recommended entrypoint.\n  Example: sglang serve --model-path <model> [options]")
	}
	if err := c.resolve(log); err != nil {
		log.raw(err.Error())
		return exit.With(1, err)
	}
	log.http("server_args=ServerArgs(%s)", c.serverArgsRepr())
	for _, ig := range c.ignored {
		log.http("sim: ignoring SGLang flag %s (not modelled by the simulator)", ig)
	}
	st, err := settleSGLang(c)
	if err != nil {
		log.raw(err.Error())
		return err
	}
	log.http("sim: simulator profile %q (%s)", st.prof.Name, st.prof.Source)
	// The schedulers load the model and allocate the KV pool before the
	// HTTP server starts listening: connections are refused meanwhile.
	if st.engines > 1 {
		// Data-parallel schedulers escape the launcher's process tree
		// (#23627): stand-ins only a signal to the group reaches.
		if err := spawnEscapedSchedulers(st.engines); err != nil {
			return exit.With(1, err)
		}
	}
	for i := range st.engines {
		log.rank(i, "Load weight begin. avail mem=%.2f GB", 80.0)
	}
	if c.core.Startup > 0 {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(c.core.Startup):
		}
	}
	srv, err := newSGLangServer(c, st, log)
	if err != nil {
		return exit.With(1, err)
	}
	if srv.record != nil {
		defer srv.record.close()
	}
	logPools(log, c, st)
	ln, err := net.Listen("tcp", net.JoinHostPort(c.core.Host, strconv.Itoa(c.core.Port)))
	if err != nil {
		return exit.With(1, fmt.Errorf("cannot listen on %s:%d: %w", c.core.Host, c.core.Port, err))
	}
	engCtx, stopEngines := context.WithCancel(context.WithoutCancel(ctx))
	defer stopEngines()
	var wg sync.WaitGroup
	for _, eng := range srv.engs {
		wg.Add(1)
		go func() { defer wg.Done(); eng.run(engCtx) }()
	}
	hs := &http.Server{Handler: srv.routes(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	log.raw(fmt.Sprintf("INFO:     Started server process [%d]", os.Getpid()))
	log.raw("INFO:     Waiting for application startup.")
	log.raw("INFO:     Application startup complete.")
	log.raw(fmt.Sprintf("INFO:     Uvicorn running on http://%s (Press CTRL+C to quit)", ln.Addr()))
	go srv.warmupAndReady(engCtx)

	var exitAfter <-chan time.Time
	if c.core.ExitAfter > 0 {
		exitAfter = time.After(c.core.ExitAfter)
	}
	var result error
	drained := false
	select {
	case <-ctx.Done():
		if exit.Code(context.Cause(ctx)) == exit.SIGTERM {
			srv.drain(engCtx)
			drained = true
		}
	case <-exitAfter:
		log.rank(0, "Scheduler hit an exception: simulated crash after %v (--sim-exit-after)", c.core.ExitAfter)
		result = exit.With(1, fmt.Errorf("simulated crash after %v (--sim-exit-after)", c.core.ExitAfter))
	case err := <-served:
		result = exit.With(1, fmt.Errorf("HTTP server: %w", err))
	}
	stopEngines()
	hs.Close()
	wg.Wait()
	if result == nil {
		if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			result = exit.With(1, err)
		}
	}
	if drained && result == nil {
		// kill_process_tree(os.getpid(), include_parent=True) ends with
		// itself.kill(): after the drain SGLang dies of its own SIGKILL.
		if srv.record != nil {
			srv.record.close()
		}
		selfKill()
	}
	return result
}

// selfKill is the SIGKILL SGLang sends itself after a SIGTERM drain; tests
// that serve in-process replace it.
var selfKill = func() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }

// kvBytesPerToken is what the simulator reports a token of KV to take
// (K plus V), for the "KV Cache is allocated" line: the vLLM imitation's
// 1 KiB per token, so the two engines' logs agree on the pool's size.
const kvBytesPerToken = 1 << 10

// serverArgsRepr renders the flags given as the start of SGLang's
// "server_args=ServerArgs(…)" line (the real one lists every field).
func (c *sglangConfig) serverArgsRepr() string {
	parts := []string{fmt.Sprintf("model_path='%s'", c.core.Model)}
	for _, g := range c.given {
		name, value, _ := strings.Cut(strings.TrimPrefix(g, "--"), " ")
		key := strings.ReplaceAll(name, "-", "_")
		if key == "model_path" || key == "model" {
			continue
		}
		switch {
		case key == "api_key":
			value = "'***'"
		case value == "":
			value = "True"
		default:
			value = pyRepr(value)
		}
		parts = append(parts, key+"="+value)
	}
	return strings.Join(parts, ", ")
}

// drain is TokenizerManager.sigterm_watchdog: the flag is looked at every
// drain-poll period (5 s) since startup, then every period "Gracefully
// exiting... Remaining number of requests N" until no request is left —
// no timeout.
func (s *sglangServer) drain(ctx context.Context) {
	s.draining.Store(true)
	poll := s.c.drainPoll
	// The watchdog sleeps in whole periods from its start.
	since := time.Since(s.started)
	wait := poll - since%poll
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = poll
		rids := s.inflightRIDs()
		quoted := make([]string, len(rids))
		for i, r := range rids {
			quoted[i] = "'" + r + "'"
		}
		s.log.http("Gracefully exiting... Remaining number of requests %d. Remaining requests remaining_rids=[%s].", len(rids), strings.Join(quoted, ", "))
		if len(rids) == 0 {
			return
		}
	}
}
