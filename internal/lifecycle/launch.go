package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/warning"
)

// launched is a server slogate started and must stop: a process group
// (*Process) or a container (*container).
type launched interface {
	// Stop ends the server (within grace, at once when force closes) and
	// checks that nothing of it is left.
	Stop(grace time.Duration, force <-chan struct{}) error
}

// Server is the server a run measures: one slogate launched (a process
// group, or a container run by the runtime's attached client), or an
// already running endpoint it neither started nor stops.
type Server struct {
	// Client talks to the server.
	Client *Client
	// proc is the server's process, or for a container the runtime's
	// attached client (its output is server.log, its exit the
	// container's); nil for an endpoint.
	proc *Process
	// stopper stops what was launched; nil for an endpoint.
	stopper launched
	// versionFrom is where Discover read the version ("GET /version").
	versionFrom string
}

// Endpoint is the already running server c talks to (-endpoint): no
// process, no stop.
func Endpoint(c *Client) *Server { return &Server{Client: c} }

// Launched reports whether slogate started s (and so must stop it); false
// for an endpoint and for nil.
func (s *Server) Launched() bool { return s != nil && s.stopper != nil }

// ProcessGroup is the process group of a server slogate launched as a
// process (its threads and its children's are what the scheduler reading
// of docs/method.md#environment sums); false for a container, whose
// processes the runtime's own daemon or monitor starts, and for an
// endpoint.
func (s *Server) ProcessGroup() (int, bool) {
	if s == nil {
		return 0, false
	}
	if p, ok := s.stopper.(*Process); ok && p.pgid > 0 {
		return p.pgid, true
	}
	return 0, false
}

// StopNormal is the reason of the stop at the end of a run that finished
// (Server.Stop's why).
const StopNormal = "normal stop, the run is done"

// Stop ends a launched server's process group or container: SIGTERM (or
// the runtime's stop), up to grace for it to exit (cut short when force
// closes), then SIGKILL; then it checks that nothing of it is left. First
// it says in server.log why and how ("slogate: normal stop, the run is
// done: stopping the server: SIGTERM, up to 30s to exit, then SIGKILL"),
// so that the server's shutdown lines after it are not read as a crash.
func (s *Server) Stop(why string, grace time.Duration, force <-chan struct{}) error {
	s.proc.note(fmt.Sprintf("slogate: %s: stopping the server: SIGTERM, up to %v to exit, then SIGKILL", why, grace))
	return s.stopper.Stop(grace, force)
}

// WaitReady polls until a launched server is ready (waitReady): it fails
// at once when the process exits, and after timeout otherwise; progress
// hears a StillWaiting every 30 s of waiting.
func (s *Server) WaitReady(ctx context.Context, timeout time.Duration, progress func(event.LaunchNote)) (ReadyInfo, error) {
	return waitReady(ctx, s.proc, s.Client, timeout, progress)
}

// WaitEndpoint checks, for up to timeout, that an endpoint's server is
// ready (waitReady). A server that cannot be reached is an infrastructure
// error saying so; one that answers but refuses (another served name, the
// API key) says what to fix.
func (s *Server) WaitEndpoint(ctx context.Context, timeout time.Duration) (ReadyInfo, error) {
	info, err := waitReady(ctx, nil, s.Client, timeout, nil)
	if err != nil {
		if refusal := (*serverRefusal)(nil); exit.Code(err) == exit.Infra && !errors.As(err, &refusal) {
			return info, exit.Infraf("the endpoint %s is unreachable or not ready: %v (is the server running? check -endpoint)", s.Client.base, err)
		}
		return info, err
	}
	return info, nil
}

// Exited returns a launched server's exit as an error, nil while it runs
// (and always for an endpoint).
func (s *Server) Exited() error {
	if s.proc != nil && !s.proc.Alive() {
		return s.proc.exitedErr("exited during the run")
	}
	return nil
}

// Gone checks, after a request failed, whether the server itself is gone:
// a launched server whose process exited (waiting up to 1.5 s for the exit
// to show), an endpoint that stops answering GET /health. It returns an
// infrastructure error when it is, nil when the server is still there (or
// ctx ended).
func (s *Server) Gone(ctx context.Context) error {
	if s.proc != nil {
		select {
		case <-s.proc.exited:
			return s.proc.exitedErr("exited during the run")
		case <-time.After(1500 * time.Millisecond):
		case <-ctx.Done():
			return nil
		}
		return nil
	}
	for i := 0; i < 3; i++ {
		if s.Client.health(ctx) == nil {
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	return exit.Infraf("the endpoint %s stopped answering GET /health during the run", s.Client.base)
}

// deadExitWait is how long a server whose engine died is given to exit
// (vLLM's API server shuts down after its EngineCore's death: a few
// seconds on two loaded cores).
const deadExitWait = 15 * time.Second

// EngineDied is the run-ending error of a server that answered a request
// saying its engine died (why, its message; engine.EngineDead): the
// server's exit, with the last lines of its log, once its process ends
// (waiting up to deadExitWait), else that answer itself. Either way an
// infrastructure error: a dead engine is never a slow one.
func (s *Server) EngineDied(ctx context.Context, why string) error {
	if s.proc != nil {
		select {
		case <-s.proc.exited:
			return s.proc.exitedErr("exited during the run, its engine dead (" + why + ")")
		case <-time.After(deadExitWait):
		case <-ctx.Done():
		}
		return exit.Infraf("the server's engine died during the run (%s), and the server had not exited %s later; see %s", why, deadExitWait, s.proc.logPath)
	}
	return exit.Infraf("the endpoint %s's engine died during the run (%s)", s.Client.base, why)
}

// LaunchConfig is how to launch one server.
type LaunchConfig struct {
	Server *spec.Server
	// Sim launches the server's argv with this program's `sim` subcommand
	// in place of the command (SimExecutable, default os.Executable()).
	Sim           bool
	SimExecutable string
	// Boot is the boot's number (1, 2, … for measure.boots), given to the
	// server as SLOGATE_BOOT.
	Boot int
	// RunID names and labels the run's container.
	RunID string
	// LogPath receives the server's output.
	LogPath string
	// Note and Warn hear what the launch says (the command it starts, the
	// containers earlier runs left behind); a nil Note hears nothing.
	Note func(event.LaunchNote)
	Warn func(warning.Warning)
}

func (c LaunchConfig) note(n event.LaunchNote) {
	if c.Note != nil {
		c.Note(n)
	}
}

// Launcher is a server ready to be started: its command, environment and
// client decided, its port checked free.
type Launcher struct {
	cfg   LaunchConfig
	srv   *spec.Server // cfg.Server, without its container block under -sim
	argv  []string
	env   map[string]string
	shown []string // argv as the log shows it: secrets redacted
	// Client will talk to the server once it is started.
	Client *Client
}

// NewLauncher prepares cfg's launch: the argv (the simulator's under
// -sim), the environment with SLOGATE_BOOT, the client, and a check that
// nothing already accepts connections at the server's port (a stale
// server would answer instead of the new one).
func NewLauncher(cfg LaunchConfig) (*Launcher, error) {
	srv := cfg.Server
	if cfg.Sim && srv.Container != nil {
		cfg.note(event.SimNoContainer{})
		srv = srv.WithoutContainer()
	}
	argv, env := srv.Argv(), maps.Clone(srv.Env)
	if env == nil {
		env = map[string]string{}
	}
	// The boot number, for a server that wants to know (the simulator's
	// --sim-boot-noise seeds its per-start offset with it).
	env["SLOGATE_BOOT"] = strconv.Itoa(cfg.Boot)
	shown := srv.RedactedArgv()
	if err := checkSim(srv, cfg.Sim); err != nil {
		return nil, err
	}
	if cfg.Sim {
		exe := cfg.SimExecutable
		if exe == "" {
			var err error
			if exe, err = os.Executable(); err != nil {
				return nil, exit.Infraf("finding the slogate binary for -sim: %v", err)
			}
		}
		sim := engineFor(srv).SimFlags()
		argv = append(append([]string{exe, "sim"}, sim...), argv[1:]...)
		shown = append(append([]string{"slogate", "sim"}, sim...), shown[1:]...)
	}
	l := &Launcher{cfg: cfg, srv: srv, argv: argv, env: env, shown: shown, Client: NewClient(srv.BaseURL(), srv.APIKey, srv.ServedName()).ForServer(srv)}
	if addr, busy := PortInUse(l.Client.base); busy {
		return l, portTaken(addr)
	}
	return l, nil
}

// checkSim refuses -sim on a server of an engine the simulator does not
// imitate (a usage error).
func checkSim(srv *spec.Server, sim bool) error {
	if sim && srv.SyntaxOf().NoSimulator {
		return exit.Usagef("-sim: slogate's simulator imitates vLLM and SGLang, not %s (server %q, engine = %q): drop -sim to launch the real server (docs/spec.md#engines)",
			spec.EngineTitle(srv.Engine), srv.Name, srv.Engine)
	}
	return nil
}

// Check finds what would stop the launch of srv before it starts, so that
// a run refuses it before it prints its plan or creates a folder: -sim on
// an engine the simulator does not imitate (a usage error, exit 2); a
// command that is not an executable file on PATH (or at its path), a
// container runtime that is not installed, and a port that already
// accepts connections (the server cannot start: exit 3). NewLauncher and
// Start make the same checks when they launch (what changed in between
// is caught there).
func Check(srv *spec.Server, sim bool) error {
	if err := checkSim(srv, sim); err != nil {
		return err
	}
	if sim {
		srv = srv.WithoutContainer() // the simulator runs as slogate's own process
	}
	switch {
	case srv.Container != nil:
		if _, err := lookupRuntime(srv.Container.Runtime); err != nil {
			return err
		}
	case !sim:
		argv := srv.Argv()
		if len(argv) == 0 {
			return exit.Usagef("server %q has no command to launch", srv.Name)
		}
		if _, err := exec.LookPath(argv[0]); err != nil {
			return commandError(argv[0], err)
		}
	}
	base := NewClient(srv.BaseURL(), srv.APIKey, srv.ServedName()).base
	if addr, busy := PortInUse(base); busy {
		return portTaken(addr)
	}
	return nil
}

// commandError is the error of a server command that cannot be run.
func commandError(command string, err error) error {
	return exit.Infraf("the server's command %q cannot be run: %v (is the command installed and on PATH? set `command` in the server block)", command, err)
}

// portTaken is the error of a port that accepts connections before the
// server is started.
func portTaken(addr string) error {
	_, port, _ := net.SplitHostPort(addr)
	return exit.Infraf("port %s already accepts connections before the server was started: a stale server would answer instead of the new one; stop it (e.g. `fuser -k %s/tcp`) or choose another port", addr, port)
}

// Start starts the server: its container (bootContainer) or its process.
// The caller waits for readiness (Server.WaitReady) and stops it.
func (l *Launcher) Start(ctx context.Context) (*Server, error) {
	srv := l.srv
	if srv.Container != nil {
		c, err := l.bootContainer(ctx)
		if err != nil {
			return nil, err
		}
		return &Server{Client: l.Client, proc: c.client, stopper: c}, nil
	}
	l.cfg.note(event.Starting{Env: srv.RedactedEnv(), Argv: l.shown})
	p, err := StartProcess(l.argv, l.env, l.cfg.LogPath, srv.APIKey)
	if err != nil {
		return nil, err
	}
	return &Server{Client: l.Client, proc: p, stopper: p}, nil
}
