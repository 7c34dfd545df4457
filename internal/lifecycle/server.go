// Package lifecycle launches, readies and stops the server a run measures,
// and learns what it says about itself: server.go starts a process in its
// own process group (server.log, secrets redacted), waits until it is
// ready (TCP, GET /health, GET /v1/models) and stops the whole group
// (SIGTERM, the grace, SIGKILL); container.go runs a server from an image
// through docker or podman (the container block) and finds the containers
// an earlier run left behind; launch.go puts them together as a Server (a
// launched one, or an already running -endpoint); client.go talks to the
// server's endpoints (control requests, /tokenize, streaming generation);
// discovery.go learns version, GPUs, max_model_len, the KV capacity
// (discoverKVCapacity) and the facts the server states; what differs by
// engine it asks the server's engine.Engine (engine.go: internal/engine/vllm
// for vLLM's metric names and log lines, docs/vllm.md;
// internal/engine/sglang for SGLang's /server_info, metrics and log lines,
// docs/sglang.md). It knows nothing of plans or cells.
package lifecycle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/shellcmd"
)

// Process is a launched server (or a container runtime's attached client):
// its own process group, output in a log file.
type Process struct {
	cmd     *exec.Cmd
	pgid    int
	logPath string
	log     *os.File
	rw      *redactingWriter // nil when the output goes to log directly
	exited  chan struct{}
	waitErr error
}

// StartProcess launches argv with env merged over this process's
// environment, in a new process group, stdout and stderr to logPath. Every
// secret (the API key; vLLM logs its arguments) is replaced by "<redacted>"
// on its way to the log.
func StartProcess(argv []string, env map[string]string, logPath string, secrets ...string) (*Process, error) {
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
	p := &Process{cmd: cmd, logPath: logPath, log: logf, exited: make(chan struct{})}
	if rw, ok := out.(*redactingWriter); ok {
		p.rw = rw
	}
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
		return nil, commandError(argv[0], err)
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
		b = bytes.ReplaceAll(b, s, []byte(shellcmd.Redacted))
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
func (p *Process) exitedErr(when string) error {
	status := "exited"
	if p.waitErr != nil {
		status = p.waitErr.Error()
	}
	return exit.Infraf("the server %s (%s); last lines of %s:\n%s", when, status, p.logPath, strings.Join(lastLines(p.logPath, 40), "\n"))
}

// note writes one line of slogate's own to the process's log, between
// whole lines of the server's when they go through the redacting writer.
func (p *Process) note(line string) {
	if p == nil || p.log == nil {
		return
	}
	if p.rw != nil {
		p.rw.mu.Lock()
		defer p.rw.mu.Unlock()
	}
	p.log.WriteString(line + "\n")
}

// LogPath is the file the process's output goes to.
func (p *Process) LogPath() string { return p.logPath }

// Alive reports whether the process is still running.
func (p *Process) Alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Stop ends the whole process group: SIGTERM, up to grace for it to exit
// (cut short when force is closed), then SIGKILL; then it checks that no
// member of the group is left.
func (p *Process) Stop(grace time.Duration, force <-chan struct{}) error {
	defer p.log.Close()
	syscall.Kill(-p.pgid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
wait:
	for time.Now().Before(deadline) {
		if !p.Alive() && !groupExists(p.pgid) {
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
		if !p.Alive() && !groupExists(p.pgid) {
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

// PortInUse reports whether something already accepts connections at base,
// and the host:port it tried.
func PortInUse(base string) (string, bool) {
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

// ReadyInfo is what readiness learned.
type ReadyInfo struct {
	// MaxModelLen is the served model's max_model_len as GET /v1/models
	// lists it; 0 when it does not.
	MaxModelLen int
}

// waitReady polls until the server is ready: process alive → TCP connect →
// GET /health 200 → GET /v1/models lists the served name. p is nil for an
// already running endpoint. A wrong served name fails at once.
func waitReady(ctx context.Context, p *Process, c *Client, timeout time.Duration, progress func(event.LaunchNote)) (ReadyInfo, error) {
	start := time.Now()
	deadline := start.Add(timeout)
	stage := "waiting for the port to accept connections"
	lastNote := time.Time{}
	for {
		if p != nil && !p.Alive() {
			err := p.exitedErr("exited before it was ready")
			if hint := engine.ExitHint(c.engine, lastLines(p.logPath, 40)); hint != "" {
				err = exit.Infraf("%v\n%s", err, hint)
			}
			return ReadyInfo{}, err
		}
		if err := context.Cause(ctx); ctx.Err() != nil {
			return ReadyInfo{}, err
		}
		if time.Now().After(deadline) {
			tail := ""
			if p != nil {
				tail = "; last lines of " + p.logPath + ":\n" + strings.Join(lastLines(p.logPath, 40), "\n")
			}
			return ReadyInfo{}, exit.Infraf("the server was not ready within ready_timeout %v (%s)%s", timeout, stage, tail)
		}
		if time.Since(lastNote) > 30*time.Second && progress != nil && !lastNote.IsZero() {
			progress(event.StillWaiting{Stage: stage, Waited: time.Since(start)})
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
							return ReadyInfo{MaxModelLen: m.MaxModelLen}, nil
						}
						names = append(names, strconv.Quote(m.ID))
					}
					return ReadyInfo{}, exit.With(exit.Infra, &serverRefusal{fmt.Errorf("the server at %s serves %s, not %q: set served_model_name in the spec to the name the server uses (or fix the server's --served-model-name)",
						c.base, strings.Join(names, ", "), c.model)})
				}
				if se := (*StatusError)(nil); errors.As(err, &se) && se.Code == http.StatusUnauthorized {
					return ReadyInfo{}, exit.With(exit.Infra, &serverRefusal{errors.New("GET /v1/models was refused (401 Unauthorized): set api_key in the server block to the server's key")})
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
type serverRefusal struct{ err error }

func (e *serverRefusal) Error() string { return e.err.Error() }

func exitedChan(p *Process) <-chan struct{} {
	if p == nil {
		return nil
	}
	return p.exited
}
