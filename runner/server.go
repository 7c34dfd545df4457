package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/runner/sse"
	"github.com/slogate/slogate/spec"
)

// process is a launched server: its own process group, output in a log file.
type process struct {
	cmd     *exec.Cmd
	pgid    int
	logPath string
	log     *os.File
	exited  chan struct{}
	waitErr error
}

// startProcess launches argv with env merged over this process's
// environment, in a new process group, stdout and stderr to logPath. Every
// secret (the API key; vLLM logs its arguments) is replaced by "<redacted>"
// on its way to the log.
func startProcess(argv []string, env map[string]string, logPath string, secrets ...string) (*process, error) {
	if len(argv) == 0 {
		return nil, exit.Usagef("the server has no command to launch")
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, exit.Infraf("creating the server log: %v", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = os.Environ()
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cmd.Env = append(cmd.Env, k+"="+env[k])
	}
	var out io.Writer = logf
	if rw := newRedactingWriter(logf, secrets); rw != nil {
		out = rw
		// The output then goes through a pipe: bound the wait for it once
		// the server has exited (a grandchild may hold the pipe open).
		cmd.WaitDelay = 5 * time.Second
	}
	cmd.Stdout, cmd.Stderr = out, out
	// Own process group (stopped as a whole), and SIGTERM to the server if
	// slogate dies without cleaning up (kill -9): the server must never
	// outlive it. SIGTERM, not SIGKILL, so vLLM still stops its engine
	// cores (SIGKILL orphans them: docs/vllm.md#shutdown).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	p := &process{cmd: cmd, logPath: logPath, log: logf, exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// Pdeathsig fires when the *thread* that forked the child exits, and
		// Go may retire idle threads: pin this goroutine to its thread until
		// the child is gone (the locked goroutine's exit then ends the thread).
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.waitErr = cmd.Wait()
		if rw, ok := out.(*redactingWriter); ok {
			rw.flush()
		}
		close(p.exited)
	}()
	if err := <-started; err != nil {
		logf.Close()
		return nil, exit.Infraf("starting the server %q: %v (is the command installed and on PATH? set `command` in the server block)", argv[0], err)
	}
	p.pgid = cmd.Process.Pid
	return p, nil
}

// redactingWriter writes whole lines with every secret replaced.
type redactingWriter struct {
	mu      sync.Mutex
	w       io.Writer
	secrets [][]byte
	buf     []byte
}

// newRedactingWriter returns nil when there is no secret to hide.
func newRedactingWriter(w io.Writer, secrets []string) *redactingWriter {
	rw := &redactingWriter{w: w}
	for _, s := range secrets {
		if s != "" {
			rw.secrets = append(rw.secrets, []byte(s))
		}
	}
	if len(rw.secrets) == 0 {
		return nil
	}
	return rw
}

func (rw *redactingWriter) Write(p []byte) (int, error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.buf = append(rw.buf, p...)
	i := bytes.LastIndexByte(rw.buf, '\n')
	if i < 0 && len(rw.buf) < 64<<10 {
		return len(p), nil // wait for the end of the line
	}
	if i < 0 {
		i = len(rw.buf) - 1
	}
	rw.emit(rw.buf[:i+1])
	rw.buf = append(rw.buf[:0], rw.buf[i+1:]...)
	return len(p), nil
}

func (rw *redactingWriter) emit(b []byte) {
	for _, s := range rw.secrets {
		b = bytes.ReplaceAll(b, s, []byte(spec.Redacted))
	}
	rw.w.Write(b)
}

// flush writes a last unterminated line.
func (rw *redactingWriter) flush() {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if len(rw.buf) > 0 {
		rw.emit(rw.buf)
		rw.buf = rw.buf[:0]
	}
}

// exitedErr describes how the process ended, with the last lines of its log.
func (p *process) exitedErr(when string) error {
	status := "exited"
	if p.waitErr != nil {
		status = p.waitErr.Error()
	}
	return exit.Infraf("the server %s (%s); last lines of %s:\n%s", when, status, p.logPath, strings.Join(lastLines(p.logPath, 40), "\n"))
}

// alive reports whether the process is still running.
func (p *process) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop ends the whole process group: SIGTERM, up to grace for it to exit
// (cut short when force is closed), then SIGKILL; then it checks that no
// member of the group is left.
func (p *process) stop(grace time.Duration, force <-chan struct{}) error {
	defer p.log.Close()
	syscall.Kill(-p.pgid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
wait:
	for time.Now().Before(deadline) {
		if !p.alive() && !groupExists(p.pgid) {
			return nil
		}
		select {
		case <-force:
			break wait
		case <-tick.C:
		}
	}
	syscall.Kill(-p.pgid, syscall.SIGKILL)
	deadline = time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if !p.alive() && !groupExists(p.pgid) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return exit.Infraf("server process group %d still has members after SIGKILL; check with `ps -g %d` and kill them (they may hold GPU memory)", p.pgid, p.pgid)
}

// groupExists reports whether any process is left in group pgid.
func groupExists(pgid int) bool {
	return syscall.Kill(-pgid, 0) != syscall.ESRCH
}

// lastLines returns the last n lines of a file.
func lastLines(path string, n int) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return []string{"(no log: " + err.Error() + ")"}
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		lines[i] = "    " + l
	}
	return lines
}

// portInUse reports whether something already accepts connections at base.
func portInUse(base string) (string, bool) {
	addr := hostPort(base)
	c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return addr, false
	}
	c.Close()
	return addr, true
}

func hostPort(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	if u.Port() == "" {
		if u.Scheme == "https" {
			return net.JoinHostPort(u.Hostname(), "443")
		}
		return net.JoinHostPort(u.Hostname(), "80")
	}
	return u.Host
}

// readyInfo is what readiness learned.
type readyInfo struct {
	maxModelLen int
}

// waitReady polls until the server is ready: process alive → TCP connect →
// GET /health 200 → GET /v1/models lists the served name. p is nil for an
// already running endpoint. A wrong served name fails at once.
func waitReady(ctx context.Context, p *process, c *apiClient, timeout time.Duration, progress func(string)) (readyInfo, error) {
	start := time.Now()
	deadline := start.Add(timeout)
	stage := "waiting for the port to accept connections"
	lastNote := time.Time{}
	for {
		if p != nil && !p.alive() {
			return readyInfo{}, p.exitedErr("exited before it was ready")
		}
		if err := context.Cause(ctx); ctx.Err() != nil {
			return readyInfo{}, err
		}
		if time.Now().After(deadline) {
			msg := fmt.Sprintf("the server was not ready within ready_timeout %v (%s)", timeout, stage)
			if p != nil {
				msg += "; last lines of " + p.logPath + ":\n" + strings.Join(lastLines(p.logPath, 40), "\n")
			}
			return readyInfo{}, exit.Infraf("%s", msg)
		}
		if time.Since(lastNote) > 30*time.Second && progress != nil && !lastNote.IsZero() {
			progress(fmt.Sprintf("still %s (%.0fs)", stage, time.Since(start).Seconds()))
			lastNote = time.Now()
		}
		if lastNote.IsZero() {
			lastNote = time.Now()
		}
		conn, err := net.DialTimeout("tcp", hostPort(c.base), time.Second)
		if err == nil {
			conn.Close()
			stage = "waiting for GET /health to answer 200"
			if c.health(ctx) == nil {
				stage = "waiting for GET /v1/models"
				models, err := c.models(ctx)
				if err == nil {
					var names []string
					for _, m := range models {
						if m.ID == c.model {
							return readyInfo{maxModelLen: m.MaxModelLen}, nil
						}
						names = append(names, strconv.Quote(m.ID))
					}
					return readyInfo{}, exit.With(exit.Infra, &serverRefusal{fmt.Sprintf("the server at %s serves %s, not %q: set served_model_name in the spec to the name the server uses (or fix the server's --served-model-name)",
						c.base, strings.Join(names, ", "), c.model)})
				}
				if se := (*statusError)(nil); errors.As(err, &se) && se.code == http.StatusUnauthorized {
					return readyInfo{}, exit.With(exit.Infra, &serverRefusal{"GET /v1/models was refused (401 Unauthorized): set api_key in the server block to the server's key"})
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		case <-exitedChan(p):
		}
	}
}

// serverRefusal is a readiness failure the server itself answered for: it
// serves another model name, or refuses the API key. It is the spec's
// configuration to fix, never an unreachable endpoint.
type serverRefusal struct{ msg string }

func (e *serverRefusal) Error() string { return e.msg }

func exitedChan(p *process) <-chan struct{} {
	if p == nil {
		return nil
	}
	return p.exited
}

// boot starts the server (or checks the endpoint) and waits until it is ready.
func (r *run) boot(ctx context.Context) error {
	srv := r.cfg.Server
	if r.cfg.Endpoint != "" {
		r.client = newAPIClient(r.cfg.Endpoint, srv.APIKey, srv.ServedName())
		r.logf("measuring the running server at %s (no boot, no stop)", r.client.base)
		if r.boots() > 1 {
			return exit.Usagef("measure.boots = %d restarts the server between groups of repeats, which -endpoint cannot (slogate did not start it): drop -endpoint, or set boots = 1", r.boots())
		}
		info, err := waitReady(ctx, nil, r.client, endpointReadyTimeout, nil)
		if err == nil {
			r.upSince = time.Now()
		}
		if err != nil {
			if refusal := (*serverRefusal)(nil); exit.Code(err) == exit.Infra && !errors.As(err, &refusal) {
				return exit.Infraf("the endpoint %s is unreachable or not ready: %v (is the server running? check -endpoint)", r.client.base, err)
			}
			return err
		}
		r.maxModelLen = info.maxModelLen
		return nil
	}
	if r.cfg.Sim && srv.Container != nil {
		r.logf("-sim: the simulator runs as a process; the container block is not used")
		srv = srv.WithoutContainer()
	}
	argv, env := srv.Argv(), maps.Clone(srv.Env)
	if env == nil {
		env = map[string]string{}
	}
	// The boot number, for a server that wants to know (the simulator's
	// --sim-boot-noise seeds its per-start offset with it).
	env["SLOGATE_BOOT"] = strconv.Itoa(r.bootNo)
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
	r.client = newAPIClient(srv.BaseURL(), srv.APIKey, srv.ServedName())
	if addr, busy := portInUse(r.client.base); busy {
		return exit.Infraf("port %s already accepts connections before the server was started: a stale server would answer instead of the new one; stop it (e.g. `fuser -k %s/tcp`) or choose another port", addr, strings.Split(addr, ":")[len(strings.Split(addr, ":"))-1])
	}
	logPath := filepath.Join(r.cfg.OutDir, "server.log")
	var p *process
	r.upSince = time.Now()
	if srv.Container != nil {
		c, err := r.bootContainer(ctx, srv, logPath)
		if err != nil {
			return err
		}
		p, r.server = c.client, c
	} else {
		r.logf("starting server: %s", spec.ShellCommand(srv.RedactedEnv(), shown))
		var err error
		if p, err = startProcess(argv, env, logPath, srv.APIKey); err != nil {
			return err
		}
		r.server = p
	}
	r.serverProcess = p
	timeout := srv.ReadyTimeout
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	t0 := time.Now()
	info, err := waitReady(ctx, p, r.client, timeout, func(s string) { r.logf("%s", s) })
	if err != nil {
		return err
	}
	r.maxModelLen = info.maxModelLen
	r.startups = append(r.startups, time.Since(t0))
	r.logf("server ready in %.1fs (log: %s)", time.Since(t0).Seconds(), logPath)
	return nil
}

// serverTrouble checks, after a stream failed, whether the server itself is
// gone; it returns an infrastructure error when it is.
func (r *run) serverTrouble(ctx context.Context, failure error) error {
	if err := r.samplingRejected(failure); err != nil {
		return err
	}
	if r.serverProcess != nil {
		select {
		case <-r.serverProcess.exited:
			return r.serverProcess.exitedErr("exited during the run")
		case <-time.After(1500 * time.Millisecond):
		case <-ctx.Done():
			return nil
		}
		return nil
	}
	for i := 0; i < 3; i++ {
		if r.client.health(ctx) == nil {
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	return exit.Infraf("the endpoint %s stopped answering GET /health during the run", r.client.base)
}

// specDecodeSamplingMessage is the start of vLLM's answer to a request
// whose min_p or logit_bias its speculative decoding cannot take
// (SamplingParams._validate_spec_decode, vLLM PR #31982).
const specDecodeSamplingMessage = "The min_p and logit_bias sampling parameters are not yet supported with speculative decoding"

// samplingRejected returns the run-ending error (exit 3) when failure is
// the server refusing the workload's sampling under speculative decoding:
// every request of the run would fail the same way. The spec cannot send
// min_p or logit_bias with a speculative block (spec load refuses it), so
// the min_p the server objects to is the model's generation_config.json
// default (docs/vllm.md#sampling-defaults), or the server speculates
// without the spec saying so. The remedy is the user's: slogate never
// changes the workload by itself. nil for any other failure.
func (r *run) samplingRejected(failure error) error {
	var se *streamStatusError
	var ae *sse.APIError
	var msg string
	switch {
	case errors.As(failure, &se) && se.code == http.StatusBadRequest:
		msg = se.Error()
	case errors.As(failure, &ae):
		msg = ae.Error()
	default:
		return nil
	}
	if !strings.Contains(msg, specDecodeSamplingMessage) {
		return nil
	}
	srv := r.cfg.Server
	w := r.cfg.Spec.Workload
	// min_p counts as sent when vLLM would reject it: above _SAMPLING_EPS
	// (an explicit min_p = 0 pins it and is never the cause) at a
	// temperature that is not greedy (below 1e-5 vLLM resets min_p first).
	minP, _ := w.Sampling["min_p"].Float64()
	sentMinP := minP > 1e-5
	if t, err := w.Sampling["temperature"].Float64(); err == nil && t < 1e-5 {
		sentMinP = false
	}
	var why, remedy string
	switch {
	case srv.Speculative == nil && (sentMinP || len(w.LogitBias) > 0):
		why = "the spec sends min_p or logit_bias, and the server runs speculative decoding although the server block has no speculative block"
		remedy = "remove min_p and logit_bias from workload.sampling, or serve without speculative decoding"
	default:
		why = "the spec sends no min_p above 1e-5 and no logit_bias, so the min_p comes from the server's defaults: the model's generation_config.json or the server's --override-generation-config, which vLLM applies to every request that leaves min_p out"
		remedy = "add sampling = { min_p = 0 } to the workload block (or start the server with --generation-config vllm and no min_p in --override-generation-config)"
	}
	return exit.Infraf("server %s rejects every request: %s. %s (docs/vllm.md#sampling-defaults): %s; slogate does not change the workload by itself", srv.Name, msg, why, remedy)
}

// procExited returns the server's exit as an error, nil while it runs.
func (r *run) procExited() error {
	if r.serverProcess != nil && !r.serverProcess.alive() {
		return r.serverProcess.exitedErr("exited during the run")
	}
	return nil
}
