package lifecycle

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/warning"
)

// A container server is run by the runtime's attached client (`docker run`
// without -d): its stdout and stderr are the container's logs, so they go to
// server.log like a process's, and its exit is the container's. But killing
// the client does not stop the container, so stopping goes through the
// runtime: `stop -t GRACE`, `rm -f`, then a check that no container of that
// name is left. A container that outlives slogate (kill -9 of slogate and its
// client) carries the label slogate.run: the next run reports it and
// `slogate clean` removes it (docs/spec.md#container).

// runtimeCommandTimeout bounds each runtime command but `stop`, whose
// bound is the grace period plus this.
var runtimeCommandTimeout = 30 * time.Second

// container is a running container server.
type container struct {
	runtime string // "docker" or "podman", as messages name it
	path    string // its executable, as found on PATH
	name    string
	// client is the attached `RUNTIME run`, its output in server.log.
	client *Process
}

// lookupRuntime finds the container runtime on PATH; its absence is an
// infrastructure error saying what to install or change.
func lookupRuntime(runtime string) (string, error) {
	path, err := exec.LookPath(runtime)
	if err != nil {
		other := spec.RuntimePodman
		if runtime == spec.RuntimePodman {
			other = spec.RuntimeDocker
		}
		return "", exit.Infraf("the container runtime %q is not on PATH (%v): install it, set runtime = %q in the container block if that is the one installed, or remove the container block to launch the server as a command",
			runtime, err, other)
	}
	return path, nil
}

// startContainer launches server srv as container name of run runID, its
// logs in logPath (the API key redacted).
func startContainer(runtimePath string, srv *spec.Server, runID, logPath string) (*container, error) {
	argv := srv.LaunchContainerArgv(runID) // the real key where the engine takes it as a flag (SGLang)
	argv[0] = runtimePath
	p, err := StartProcess(argv, srv.LaunchEnv(), logPath, srv.APIKey)
	if err != nil {
		return nil, err
	}
	return &container{runtime: srv.Container.Runtime, path: runtimePath, name: srv.ContainerName(runID), client: p}, nil
}

// Stop stops the container (`stop -t GRACE`; `rm -f` at once when force
// closes), removes it (`rm -f`), checks that the runtime no longer lists it,
// then makes sure its client has exited.
func (c *container) Stop(grace time.Duration, force <-chan struct{}) error {
	var errs []string
	// SIGTERM, grace, SIGKILL: the runtime does it inside the container,
	// where every process of the server is.
	ctx, cancel := context.WithTimeout(context.Background(), grace+runtimeCommandTimeout)
	go func() {
		select {
		case <-force:
			cancel()
		case <-ctx.Done():
		}
	}()
	secs := strconv.Itoa(int(math.Ceil(grace.Seconds())))
	out, err := runRuntime(ctx, c.path, "stop", "-t", secs, c.name)
	cut := ctx.Err() != nil // a second signal, or stop outlived its bound
	if err != nil && !noSuchContainer(out) && !cut {
		errs = append(errs, fmt.Sprintf("`%s stop -t %s %s`: %v: %s", c.runtime, secs, c.name, err, out))
	}
	cancel()
	if cut {
		// A stop cut short leaves the container "stopping", and podman
		// before 4.4 (Debian 12 ships 4.3.1) then lets `rm -f` forget it
		// with its processes still running (podman PR #17040): kill it
		// first.
		if err := killContainer(c.runtime, c.path, c.name); err != nil {
			errs = append(errs, err.Error())
		}
	}
	// --rm removes a stopped container; rm -f covers a runtime that has not
	// yet, a forced stop, and a stop that failed.
	if err := removeContainers(c.runtime, c.path, []string{c.name}); err != nil {
		errs = append(errs, err.Error())
	} else {
		// The client exits with its container; if it does not, its group goes.
		select {
		case <-c.client.exited:
		case <-time.After(10 * time.Second):
		}
	}
	if err := c.client.Stop(2*time.Second, force); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return exit.Infraf("stopping container %s: %s", c.name, strings.Join(errs, "; "))
	}
	return nil
}

// killContainer sends the container SIGKILL (`kill`); one that is gone or
// no longer running is not an error.
func killContainer(runtime, path, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), runtimeCommandTimeout)
	defer cancel()
	out, err := runRuntime(ctx, path, "kill", name)
	if err != nil && !noSuchContainer(out) && !notRunning(out) {
		return fmt.Errorf("`%s kill %s`: %v: %s", runtime, name, err, out)
	}
	return nil
}

// removeContainers removes names (`rm -f`, which also stops a running one)
// and checks, for up to 10 s, that the runtime lists none of them any more.
func removeContainers(runtime, path string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), runtimeCommandTimeout)
	defer cancel()
	out, rmErr := runRuntime(ctx, path, append([]string{"rm", "-f"}, names...)...)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var left []string
		for _, n := range names {
			ids, err := runRuntime(ctx, path, "ps", "-a", "-q", "--filter", "name=^/?"+regexp.QuoteMeta(n)+"$")
			if err != nil {
				return exit.Infraf("checking that container %s is gone (`%s ps -a --filter name=%s`): %v: %s", n, runtime, n, err, ids)
			}
			if strings.TrimSpace(ids) != "" {
				left = append(left, n)
			}
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			cause := ""
			if rmErr != nil {
				cause = fmt.Sprintf(" (%v: %s)", rmErr, out)
			}
			return exit.Infraf("container(s) %s still present after `%s rm -f`%s; remove them with `%s rm -f %s` (they may hold GPU memory)",
				strings.Join(left, ", "), runtime, cause, runtime, strings.Join(left, " "))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// LeftoverContainers lists, by name, every container (running or not) that
// runtime knows and that carries the label slogate.run: containers slogate
// started whose run did not stop them (slogate and the runtime's client were
// killed), or those of another run going on now against the same runtime.
// An unreachable runtime (no daemon) is an infrastructure error carrying the
// runtime's own message.
func LeftoverContainers(ctx context.Context, runtime string) ([]string, error) {
	path, err := lookupRuntime(runtime)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, runtimeCommandTimeout)
	defer cancel()
	out, err := runRuntime(ctx, path, "ps", "-a", "--filter", "label="+spec.LabelRun, "--format", "{{.Names}}")
	if err != nil {
		return nil, exit.Infraf("listing containers with `%s ps`: %v: %s", runtime, err, out)
	}
	return strings.Fields(out), nil
}

// RemoveContainers removes the named containers with `RUNTIME rm -f` and
// checks that they are gone (slogate clean).
func RemoveContainers(runtime string, names []string) error {
	path, err := lookupRuntime(runtime)
	if err != nil {
		return err
	}
	return removeContainers(runtime, path, names)
}

// runRuntime runs one runtime command and returns its combined output,
// trimmed. The command is killed when ctx ends.
func runRuntime(ctx context.Context, runtime string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, runtime, args...)
	cmd.WaitDelay = 2 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%w (%v)", err, context.Cause(ctx))
	}
	return strings.TrimSpace(out.String()), err
}

// noSuchContainer reports whether the runtime said the container does not
// exist (it was removed already: --rm, or it never started).
func noSuchContainer(out string) bool {
	return strings.Contains(strings.ToLower(out), "no such container")
}

// notRunning reports whether the runtime refused to signal a container
// because it is not running (docker: "is not running"; podman: "can only
// kill running containers … container state improper").
func notRunning(out string) bool {
	out = strings.ToLower(out)
	return strings.Contains(out, "not running") || strings.Contains(out, "can only kill running containers")
}

// bootContainer checks the runtime and reports the containers earlier runs
// left behind (a warning: they may be another run's, going on now), then
// starts the server's container. The caller waits for readiness as for a
// process.
func (l *Launcher) bootContainer(ctx context.Context) (*container, error) {
	srv := l.srv
	runtime := srv.Container.Runtime
	path, err := lookupRuntime(runtime)
	if err != nil {
		return nil, err
	}
	left, err := LeftoverContainers(ctx, runtime)
	if err != nil {
		return nil, err
	}
	if len(left) > 0 {
		l.cfg.Warn(warning.New(warning.LeftoverContainers,
			fmt.Sprintf("%s lists %d container(s) labelled %s by an earlier slogate run", runtime, len(left), spec.LabelRun),
			fmt.Sprintf("%s; they may hold GPU memory or the port. If no other slogate run is going on, remove them with `slogate clean -runtime %s`", strings.Join(left, ", "), runtime),
			map[string]float64{warning.FigContainers: float64(len(left))}).About(runtime))
	}
	id := l.cfg.RunID
	l.cfg.note(event.Starting{Env: srv.RedactedEnv(), Argv: srv.ContainerArgv(id)})
	return startContainer(path, srv, id, l.cfg.LogPath)
}
