// Package runner executes a plan against one server: it boots the server
// (or uses an already running endpoint), waits until it is ready, measures
// cold prefill and sustained decode exactly as docs/method.md describes, and
// writes results.json, cells.jsonl and server.log into the output folder as
// it goes, so an interrupted or crashed run keeps every measured cell (and
// can be resumed: Config.Resume). Events go to an Observer; the runner
// never prints.
package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/plan"
	"github.com/slogate/slogate/result"
	"github.com/slogate/slogate/spec"
)

// Defaults for Config's zero values.
const (
	DefaultReadyTimeout      = 30 * time.Minute
	DefaultStopGrace         = 30 * time.Second
	DefaultStreamIdleTimeout = 60 * time.Second
)

// endpointReadyTimeout bounds the checks of an already running -endpoint
// (a variable so tests can shorten it).
var endpointReadyTimeout = 5 * time.Second

// Config is one server's run.
type Config struct {
	Spec   *spec.Spec
	Server *spec.Server
	Plan   *plan.Plan
	// OutDir receives results.json, cells.jsonl and server.log.
	OutDir string
	// Endpoint, when set, is the base URL of an already running server to
	// measure: no boot, no stop.
	Endpoint string
	// Sim launches the server's argv with this program's `sim` subcommand
	// in place of the command (SimExecutable, default os.Executable()).
	Sim           bool
	SimExecutable string
	// Tool is slogate's version, recorded in results.json.
	Tool string
	// Observer receives events; nil discards them.
	Observer Observer
	// StopGrace is how long the server gets to exit after SIGTERM.
	StopGrace time.Duration
	// ForceStop, when closed, cuts StopGrace short: the server's process
	// group gets SIGKILL at once (a second Ctrl-C). nil never fires.
	ForceStop <-chan struct{}
	// StreamIdleTimeout ends a stream that sends nothing for this long (the
	// cell becomes an error; the run goes on).
	StreamIdleTimeout time.Duration
	// SteadyHold overrides plan.SteadyHold (tests only).
	SteadyHold time.Duration
	// Resume continues an interrupted run in OutDir: its cells.jsonl records
	// (this server's) are kept as measured, appended to rather than
	// replaced, and only the plan's missing cells are measured. Previous is
	// that run's results.json, when readable (server facts, start time).
	Resume   []result.CellRecord
	Previous *result.Results
}

// run is the state of one Run.
type run struct {
	cfg   Config
	obs   Observer
	res   *result.Results
	proc  *process
	c     *apiClient
	ids   []int
	mml   int
	kv    int64
	runID string
	cells *os.File
	done  int
	total int
	// measuredRefs are the cells already measured (by a resumed run).
	measuredRefs map[result.CellRef]bool
	started      time.Time
	// chat is measure.endpoint = "chat": prompts are user messages
	// calibrated through /tokenize (charsPerToken is the first estimate),
	// and prompt is the current context's.
	chat          bool
	charsPerToken float64
	prompt        chatPrompt
}

// Run measures cfg.Plan. It always returns the Results (with whatever was
// measured, Error set when the run ended early) and writes them to
// OUT/results.json; the error carries its exit code (exit.Infra for
// server trouble; a context cause such as a signal's exit code as is).
func Run(ctx context.Context, cfg Config) (*result.Results, error) {
	if cfg.Observer == nil {
		cfg.Observer = nopObserver{}
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = DefaultStopGrace
	}
	if cfg.StreamIdleTimeout <= 0 {
		cfg.StreamIdleTimeout = DefaultStreamIdleTimeout
	}
	if cfg.SteadyHold <= 0 {
		cfg.SteadyHold = plan.SteadyHold
	}
	r := &run{cfg: cfg, obs: cfg.Observer, started: time.Now()}
	var b [6]byte
	rand.Read(b[:])
	r.runID = "slogate-" + hex.EncodeToString(b[:])
	r.res = r.initialResults()
	r.total = len(cfg.Plan.Cells())

	err := r.run(ctx)
	if r.proc != nil {
		if serr := r.proc.stop(cfg.StopGrace, cfg.ForceStop); serr != nil && err == nil {
			err = serr
		} else if addr, busy := portInUse(r.c.base); serr == nil && busy {
			r.warn(fmt.Sprintf("port %s still accepts connections after the server's process group ended: another process listens there", addr))
		}
	}
	if r.c != nil {
		r.c.close()
	}
	if r.cells != nil {
		r.cells.Close()
	}
	r.res.Finished = time.Now().UTC()
	r.sortCells()
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Cause(ctx)) {
			r.res.Interrupted = true
		}
		r.res.Error = err.Error()
	}
	if werr := r.writeResults(); werr != nil && err == nil {
		err = werr
	}
	return r.res, err
}

func (r *run) initialResults() *result.Results {
	srv, sp := r.cfg.Server, r.cfg.Spec
	rs := result.Server{
		Name: srv.Name, Model: srv.Model, ServedModel: srv.ServedName(), Argv: srv.RedactedArgv(),
		Env: srv.RedactedEnv(), Endpoint: srv.BaseURL(), KVCacheDtype: srv.KVCacheDtype, Labels: srv.Labels,
		Simulated: r.cfg.Sim,
	}
	if r.cfg.Endpoint != "" {
		rs.Endpoint = strings.TrimRight(r.cfg.Endpoint, "/")
		rs.Argv = nil
	}
	if srv.TensorParallelSize != nil {
		rs.TensorParallelSize = *srv.TensorParallelSize
	}
	if srv.MaxNumSeqs != nil {
		rs.MaxNumSeqs = *srv.MaxNumSeqs
	}
	if srv.Speculative != nil {
		rs.Speculative = srv.Speculative.Method
	}
	m := result.Measure{Duration: "30s", DurationS: 30, MaxOutput: 4096, Endpoint: "completions", Repeat: 1}
	if sp.Measure != nil {
		m = result.Measure{Duration: sp.Measure.DurationText, DurationS: sp.Measure.Duration.Seconds(),
			MaxOutput: sp.Measure.MaxOutput, Endpoint: sp.Measure.Endpoint, Repeat: max(sp.Measure.Repeat, 1)}
		if m.Duration == "" || parseDurS(m.Duration) != m.DurationS {
			m.Duration = sp.Measure.Duration.String()
		}
	}
	return &result.Results{Schema: result.Schema, Spec: sp.Filename, Tool: r.cfg.Tool, Server: rs, Measure: m,
		Started: time.Now().UTC(), Prefill: []result.PrefillCell{}, Decode: []result.DecodeCell{}, Verdicts: []result.Verdict{}}
}

func parseDurS(s string) float64 {
	d, err := time.ParseDuration(s)
	if err != nil {
		return math.NaN()
	}
	return d.Seconds()
}

func (r *run) measure() result.Measure { return r.res.Measure }

func (r *run) window() time.Duration {
	return time.Duration(r.res.Measure.DurationS * float64(time.Second))
}

func (r *run) logf(format string, args ...any) { r.obs.Log(fmt.Sprintf(format, args...)) }

func (r *run) warn(msg string) {
	if slices.Contains(r.res.Warnings, msg) { // a resumed run repeats the first one's
		return
	}
	r.res.Warnings = append(r.res.Warnings, msg)
	r.obs.Log("warning: " + msg)
}

func (r *run) run(ctx context.Context) error {
	if err := os.MkdirAll(r.cfg.OutDir, 0o755); err != nil {
		return exit.Infraf("creating the output folder: %v", err)
	}
	remaining, err := r.resume() // rewrites cells.jsonl when resuming
	if err != nil {
		return err
	}
	mode := os.O_CREATE | os.O_WRONLY | os.O_APPEND | os.O_TRUNC
	if r.cfg.Resume != nil {
		mode &^= os.O_TRUNC
	}
	f, err := os.OpenFile(filepath.Join(r.cfg.OutDir, "cells.jsonl"), mode, 0o644)
	if err != nil {
		return exit.Infraf("creating cells.jsonl: %v", err)
	}
	r.cells = f
	if err := r.writeResults(); err != nil {
		return err
	}
	if remaining == 0 {
		if r.cfg.Resume != nil {
			r.logf("%s: nothing left to measure: every cell of the plan is in %s", r.cfg.Server.Name, filepath.Join(r.cfg.OutDir, "cells.jsonl"))
		}
		return nil
	}
	if err := r.boot(ctx); err != nil {
		return err
	}
	if err := r.discover(ctx); err != nil {
		return err
	}
	for _, step := range r.cfg.Plan.Steps {
		if err := r.step(ctx, step); err != nil {
			return err
		}
	}
	return nil
}

// boot starts the server (or checks the endpoint) and waits until it is ready.
func (r *run) boot(ctx context.Context) error {
	srv := r.cfg.Server
	if r.cfg.Endpoint != "" {
		r.c = newAPIClient(r.cfg.Endpoint, srv.APIKey, srv.ServedName())
		r.logf("measuring the running server at %s (no boot, no stop)", r.c.base)
		info, err := waitReady(ctx, nil, r.c, endpointReadyTimeout, nil)
		if err != nil {
			if exit.Code(err) == exit.Infra && !strings.Contains(err.Error(), "serves") && !strings.Contains(err.Error(), "401") {
				return exit.Infraf("the endpoint %s is unreachable or not ready: %v (is the server running? check -endpoint)", r.c.base, err)
			}
			return err
		}
		r.mml = info.maxModelLen
		return nil
	}
	argv, env := srv.Argv(), srv.Env
	shown := srv.RedactedArgv()
	if r.cfg.Sim {
		exe := r.cfg.SimExecutable
		if exe == "" {
			var err error
			if exe, err = os.Executable(); err != nil {
				return exit.Infraf("finding the slogate binary for -sim: %v", err)
			}
		}
		argv = append([]string{exe, "sim"}, argv[1:]...)
		shown = append([]string{"slogate", "sim"}, shown[1:]...)
	}
	r.c = newAPIClient(srv.BaseURL(), srv.APIKey, srv.ServedName())
	if addr, busy := portInUse(r.c.base); busy {
		return exit.Infraf("port %s already accepts connections before the server was started: a stale server would answer instead of the new one; stop it (e.g. `fuser -k %s/tcp`) or choose another port", addr, strings.Split(addr, ":")[len(strings.Split(addr, ":"))-1])
	}
	logPath := filepath.Join(r.cfg.OutDir, "server.log")
	r.logf("starting server: %s", spec.ShellCommand(srv.RedactedEnv(), shown))
	p, err := startProcess(argv, env, logPath, srv.APIKey)
	if err != nil {
		return err
	}
	r.proc = p
	timeout := srv.ReadyTimeout
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	t0 := time.Now()
	info, err := waitReady(ctx, p, r.c, timeout, func(s string) { r.logf("%s", s) })
	if err != nil {
		return err
	}
	r.mml = info.maxModelLen
	r.logf("server ready in %.1fs (log: %s)", time.Since(t0).Seconds(), logPath)
	return nil
}

// discover reads the version, KV capacity, max_model_len, GPUs and the
// prompt token pattern.
func (r *run) discover(ctx context.Context) error {
	srv := r.cfg.Server
	rs := &r.res.Server
	rs.Endpoint = r.c.base
	rs.Version = r.c.version(ctx)
	for _, g := range gpus(ctx) {
		rs.GPUs = append(rs.GPUs, result.GPU{Index: g.Index, Name: g.Name, MemoryMiB: g.MemoryMiB})
	}
	if snap, _, err := r.c.metrics(ctx); err == nil && snap.KVCacheTokens > 0 {
		r.kv, rs.KVCacheSource = snap.KVCacheTokens, "metrics"
	} else if r.proc != nil {
		if n := kvFromLog(r.proc.logPath); n > 0 {
			r.kv, rs.KVCacheSource = n, "log"
		}
	}
	if r.kv == 0 && srv.KVCacheTokens != nil && *srv.KVCacheTokens > 0 {
		r.kv, rs.KVCacheSource = *srv.KVCacheTokens, "spec"
	}
	rs.KVCacheTokens = r.kv
	if r.kv == 0 {
		r.warn("KV cache capacity unknown (no vllm:cache_config_info in /metrics, no \"GPU KV cache size\" log line, no kv_cache_tokens in the spec): no cell is skipped as over capacity")
	}
	ids, mml, src := promptIDs(ctx, r.c)
	r.ids = ids
	if r.res.Measure.Endpoint == "chat" {
		r.chat = true
		if src != "tokenize" {
			return exit.Infraf("measure.endpoint = \"chat\" sizes its prompts through POST /tokenize, which %s does not serve; measure this server with endpoint = \"completions\" (token-ID prompts)", r.c.base)
		}
		if _, err := r.c.tokenizeChat(ctx, chatMessages("Hello")); err != nil {
			return exit.Infraf("measure.endpoint = \"chat\" sizes its prompts through POST /tokenize with messages, which failed at %s: %v; measure this server with endpoint = \"completions\" (token-ID prompts)", r.c.base, err)
		}
		r.charsPerToken = float64(len(neutralText)) / float64(len(ids))
	}
	if r.mml == 0 && srv.MaxModelLen != nil {
		r.mml = *srv.MaxModelLen
	}
	if r.mml == 0 {
		r.mml = mml
	}
	rs.MaxModelLen = r.mml
	if src != "tokenize" {
		r.warn("POST /tokenize is not available: prompts use a fixed range of token IDs")
	}
	kv := "unknown"
	if r.kv > 0 {
		kv = fmt.Sprintf("%d tokens (from %s)", r.kv, rs.KVCacheSource)
	}
	r.logf("server %s: version %s, max_model_len %d, KV cache %s", srv.Name, orDash(rs.Version), r.mml, kv)
	return ctx.Err()
}

func orDash(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// step measures one context: the cold prefill request (recorded when the
// plan says so; it warms the prompt cache either way), then its decode cells.
func (r *run) step(ctx context.Context, st plan.Step) error {
	salt := fmt.Sprintf("%s-%d", r.runID, st.Context)
	record := st.Prefill && !r.measuredRefs[result.CellRef{Phase: result.PhasePrefill, Context: st.Context}]
	var todo []result.CellRef
	for _, ref := range st.Decode {
		if !r.measuredRefs[ref] {
			todo = append(todo, ref)
		}
	}
	needWarm := record
	for _, ref := range todo {
		if !plan.OverCapacity(ref.Concurrency, ref.Context, r.measure().MaxOutput, r.kv) {
			needWarm = true
		}
	}
	if r.chat && needWarm {
		if err := r.calibrate(ctx, st.Context); err != nil {
			return err
		}
	}
	if needWarm {
		cell, err := r.prefill(ctx, st.Context, salt, record)
		if err != nil {
			return err
		}
		if record {
			if err := r.recordPrefill(cell); err != nil {
				return err
			}
		}
	}
	var body []byte
	for _, ref := range todo {
		if body == nil {
			mo := r.measure().MaxOutput
			body = r.requestBody(st.Context, mo, mo, salt)
		}
		cell, err := r.decode(ctx, ref, body)
		if err != nil {
			return err
		}
		if r.chat && r.prompt.tokens != st.Context && cell.Status.Measured() {
			cell.Warnings = append(cell.Warnings, r.promptShortfall(st.Context))
		}
		if err := r.recordDecode(cell); err != nil {
			return err
		}
	}
	return nil
}

// calibrate sizes the chat prompt of a context (capped below max_model_len
// like the prefill prompt) through /tokenize.
func (r *run) calibrate(ctx context.Context, ctxLen int) error {
	n := ctxLen
	if r.mml > 0 && n > r.mml-1 {
		n = r.mml - 1
	}
	p, err := calibrateChat(ctx, r.c, n, r.charsPerToken)
	if err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return exit.Infraf("sizing the chat prompt of %s tokens through POST /tokenize: %v", result.FormatTokens(ctxLen), err)
	}
	r.prompt = p
	if p.tokens != n {
		r.warn(r.promptShortfall(ctxLen))
	}
	return nil
}

// promptShortfall says that no message renders to exactly the context.
func (r *run) promptShortfall(ctxLen int) string {
	return fmt.Sprintf("chat prompt at %s: no message renders to exactly %d tokens through the chat template; the closest below, %d tokens, is used",
		result.FormatTokens(ctxLen), ctxLen, r.prompt.tokens)
}

// genPath is the streaming endpoint measure.endpoint names.
func (r *run) genPath() string {
	if r.chat {
		return "/v1/chat/completions"
	}
	return "/v1/completions"
}

// requestBody encodes a streaming request for the current context's prompt
// of n tokens: token IDs for completions, the calibrated messages for chat.
func (r *run) requestBody(n, maxTokens, minTokens int, salt string) []byte {
	if r.chat {
		return chatBody(r.c.model, r.prompt.messages, maxTokens, minTokens, salt)
	}
	return completionBody(r.c.model, r.ids, n, maxTokens, minTokens, salt)
}

func (r *run) recordPrefill(c result.PrefillCell) error {
	r.res.Prefill = append(r.res.Prefill, c)
	r.done++
	r.obs.PrefillDone(c, time.Duration(c.ElapsedS*float64(time.Second)))
	return r.persist(result.CellRecord{Server: r.cfg.Server.Name, Phase: result.PhasePrefill, Prefill: &c})
}

func (r *run) recordDecode(c result.DecodeCell) error {
	r.res.Decode = append(r.res.Decode, c)
	r.done++
	r.obs.DecodeDone(c, time.Duration(c.ElapsedS*float64(time.Second)))
	return r.persist(result.CellRecord{Server: r.cfg.Server.Name, Phase: result.PhaseDecode, Decode: &c})
}

// persist appends the cell to cells.jsonl (synced) and rewrites results.json.
func (r *run) persist(rec result.CellRecord) error {
	if err := result.AppendCell(r.cells, rec); err != nil {
		return exit.Infraf("writing cells.jsonl: %v", err)
	}
	if err := r.cells.Sync(); err != nil {
		return exit.Infraf("syncing cells.jsonl: %v", err)
	}
	return r.writeResults()
}

func (r *run) writeResults() error {
	if err := r.res.Write(filepath.Join(r.cfg.OutDir, "results.json")); err != nil {
		return exit.Infraf("writing results.json: %v", err)
	}
	return nil
}

// eta estimates the time left from the plan's estimate and the cells done.
func (r *run) eta() time.Duration {
	if r.total == 0 {
		return 0
	}
	left := r.cfg.Plan.Estimated * time.Duration(r.total-r.done) / time.Duration(r.total)
	return left
}

// serverTrouble checks, after a stream failed, whether the server itself is
// gone; it returns an infrastructure error when it is.
func (r *run) serverTrouble(ctx context.Context) error {
	if r.proc != nil {
		select {
		case <-r.proc.exited:
			return r.proc.exitedErr("exited during the run")
		case <-time.After(1500 * time.Millisecond):
		case <-ctx.Done():
			return nil
		}
		return nil
	}
	for i := 0; i < 3; i++ {
		if r.c.health(ctx) == nil {
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	return exit.Infraf("the endpoint %s stopped answering GET /health during the run", r.c.base)
}

// procExited returns the server's exit as an error, nil while it runs.
func (r *run) procExited() error {
	if r.proc != nil && !r.proc.alive() {
		return r.proc.exitedErr("exited during the run")
	}
	return nil
}
