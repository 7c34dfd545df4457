// Command fakeruntime stands in for docker (or podman) in the e2e tests of
// the container block: it records every invocation's argv, and implements
// the few commands slogate uses against a state folder instead of a daemon.
//
//   - run: starts `slogate sim serve <the arguments after the image>` as
//     the "container", in a session of its own (it outlives this client, as
//     a real container outlives a killed `docker run`); the client prints the
//     container's log, forwards SIGINT/SIGTERM to it (docker's sig-proxy),
//     and exits with its exit code, removing its state when --rm was given.
//     An image named missing/… fails the way a failed pull does; one named
//     sticky/… makes a container that stop and rm report as done but leave
//     running (a runtime that lost track of it); one named stubborn/… makes
//     a container whose server ignores stop's SIGTERM (only SIGKILL, after
//     the -t seconds, ends it).
//   - stop -t N NAME: SIGTERM, N seconds, SIGKILL.
//   - kill NAME: SIGKILL.
//   - rm -f NAME…: SIGKILL, then forget the container; but a container
//     whose stop was cut short (the stop process killed) is forgotten
//     with its process still running, as podman before 4.4 does (podman
//     PR #17040): a `kill` must come first.
//   - ps [-a] [-q] [--filter label=K[=V]] [--filter name=REGEX] [--format {{.Names}}].
//
// Environment: FAKE_RUNTIME_STATE (the state folder: argv.log, one JSON argv
// per line, and c/NAME.json per container) and FAKE_RUNTIME_SLOGATE (the
// slogate binary), and FAKE_RUNTIME_DOWN (when set, every command fails as
// docker does without its daemon). Variables named SLOGATE_E2E_* reach the container too, so
// the tests find its process.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// state is one container.
type state struct {
	Name      string
	Labels    map[string]string
	Env       map[string]string // what the container got through -e
	PID       int               // the container's process
	ClientPID int               // the `run` that started it
	Remove    bool              // --rm
	Sticky    bool              // an image sticky/…: stop and rm leave it
	Stubborn  bool              // an image stubborn/…: stop's SIGTERM is ignored
	Running   bool
	Stopping  bool // a stop is (or was, when killed) under way
}

var dir = os.Getenv("FAKE_RUNTIME_STATE")

func main() {
	if dir == "" {
		fail(125, "FAKE_RUNTIME_STATE is not set")
	}
	os.MkdirAll(filepath.Join(dir, "c"), 0o755)
	record(os.Args[1:])
	if os.Getenv("FAKE_RUNTIME_DOWN") != "" {
		fail(1, "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?")
	}
	all() // the daemon's bookkeeping
	if len(os.Args) < 2 {
		fail(125, "no command")
	}
	args := os.Args[2:]
	switch os.Args[1] {
	case "run":
		run(args)
	case "stop":
		stop(args)
	case "rm":
		rm(args)
	case "kill":
		killCmd(args)
	case "ps":
		ps(args)
	default:
		fail(125, "fakeruntime: unknown command %q", os.Args[1])
	}
}

func fail(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(code)
}

// record appends argv to argv.log (O_APPEND: whole lines, even from
// concurrent invocations).
func record(argv []string) {
	b, _ := json.Marshal(argv)
	f, err := os.OpenFile(filepath.Join(dir, "argv.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fail(125, "%v", err)
	}
	f.Write(append(b, '\n'))
	f.Close()
}

func statePath(name string) string { return filepath.Join(dir, "c", name+".json") }

func load(name string) (*state, bool) {
	b, err := os.ReadFile(statePath(name))
	if err != nil {
		return nil, false
	}
	var s state
	if json.Unmarshal(b, &s) != nil {
		return nil, false
	}
	return &s, true
}

func save(s *state) {
	b, _ := json.Marshal(s)
	tmp := statePath(s.Name) + ".tmp"
	os.WriteFile(tmp, b, 0o644)
	os.Rename(tmp, statePath(s.Name))
}

// all lists the containers, after doing what the daemon does for one whose
// process has ended: removing it (--rm), else marking it exited. (The
// client may not live to do it: it dies of SIGPIPE when its reader does.)
func all() []*state {
	paths, _ := filepath.Glob(filepath.Join(dir, "c", "*.json"))
	var out []*state
	for _, p := range paths {
		s, ok := load(strings.TrimSuffix(filepath.Base(p), ".json"))
		if !ok {
			continue
		}
		if s.Running && !alive(s.PID) {
			if s.Remove {
				os.Remove(p)
				continue
			}
			s.Running = false
			save(s)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if i := strings.LastIndexByte(string(stat), ')'); err == nil && i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
		return false
	}
	return true
}

// valueFlags are the run flags that take a value (the others are booleans).
var valueFlags = map[string]bool{
	"--name": true, "--label": true, "-l": true, "-p": true, "--publish": true, "--gpus": true, "--ipc": true,
	"--shm-size": true, "-v": true, "--volume": true, "-e": true, "--env": true, "--network": true,
	"--entrypoint": true, "-w": true, "--workdir": true, "-u": true, "--user": true,
}

func run(args []string) {
	s := &state{Labels: map[string]string{}, Env: map[string]string{}, ClientPID: os.Getpid(), Running: true}
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		flag, value, hasValue := strings.Cut(args[i], "=")
		if valueFlags[flag] && !hasValue {
			if i+1 >= len(args) {
				fail(125, "docker: flag needs an argument: %s", flag)
			}
			i++
			value = args[i]
		}
		switch flag {
		case "--rm":
			s.Remove = true
		case "--name":
			s.Name = value
		case "--label", "-l":
			k, v, _ := strings.Cut(value, "=")
			s.Labels[k] = v
		case "-e", "--env":
			if k, v, ok := strings.Cut(value, "="); ok {
				s.Env[k] = v
			} else if v, ok := os.LookupEnv(value); ok {
				s.Env[value] = v
			}
		}
	}
	if i >= len(args) {
		fail(125, `"docker run" requires at least 1 argument.`)
	}
	image, cmdArgs := args[i], args[i+1:]
	if strings.HasPrefix(image, "missing/") {
		fmt.Fprintf(os.Stderr, "Unable to find image '%s' locally\n", image)
		fail(125, "docker: Error response from daemon: pull access denied for %s, repository does not exist or may require 'docker login': denied: requested access to the resource is denied.", strings.SplitN(image, ":", 2)[0])
	}
	s.Sticky = strings.HasPrefix(image, "sticky/")
	s.Stubborn = strings.HasPrefix(image, "stubborn/")
	if s.Name == "" {
		s.Name = "fake_" + strconv.Itoa(os.Getpid())
	}
	if _, exists := load(s.Name); exists {
		fail(125, `docker: Error response from daemon: Conflict. The container name "/%s" is already in use.`, s.Name)
	}
	logPath := filepath.Join(dir, "c", s.Name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		fail(125, "%v", err)
	}
	c := exec.Command(os.Getenv("FAKE_RUNTIME_SLOGATE"), append([]string{"sim", "serve"}, cmdArgs...)...)
	c.Env = []string{"PATH=" + os.Getenv("PATH")}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "SLOGATE_E2E_") {
			c.Env = append(c.Env, kv)
		}
	}
	for k, v := range s.Env {
		c.Env = append(c.Env, k+"="+v)
	}
	c.Stdout, c.Stderr = logf, logf
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	if err := c.Start(); err != nil {
		fail(125, "docker: Error response from daemon: failed to create task: %v", err)
	}
	s.PID = c.Process.Pid
	save(s)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-sigs:
				c.Process.Signal(sig) // sig-proxy
			case <-done:
				return
			}
		}
	}()
	// Print the container's log as it grows, until it has exited.
	r, _ := os.Open(logPath)
	exited := make(chan struct{})
	go func() { c.Wait(); close(exited) }()
	for {
		io.Copy(os.Stdout, r)
		select {
		case <-exited:
			io.Copy(os.Stdout, r)
			close(done)
			if cur, ok := load(s.Name); ok {
				if cur.Remove {
					os.Remove(statePath(s.Name))
				} else {
					cur.Running = false
					save(cur)
				}
			}
			code := c.ProcessState.ExitCode()
			if ws, ok := c.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal()) // as docker reports a killed container
			}
			os.Exit(code)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// kill signals the container's process and waits up to d for it to end.
func kill(s *state, sig syscall.Signal, d time.Duration) bool {
	syscall.Kill(s.PID, sig)
	deadline := time.Now().Add(d)
	for alive(s.PID) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

func stop(args []string) {
	timeout := 10
	var names []string
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "-t" || args[i] == "--time" || args[i] == "--timeout":
			i++
			timeout, _ = strconv.Atoi(args[i])
		default:
			names = append(names, args[i])
		}
	}
	code := 0
	for _, n := range names {
		s, ok := load(n)
		if !ok {
			fmt.Fprintf(os.Stderr, "Error response from daemon: No such container: %s\n", n)
			code = 1
			continue
		}
		if s.Sticky {
			fmt.Println(n)
			continue
		}
		sig := syscall.SIGTERM
		if s.Stubborn {
			sig = 0 // ignored
		}
		s.Stopping = true
		save(s)
		if !kill(s, sig, time.Duration(timeout)*time.Second) {
			kill(s, syscall.SIGKILL, 10*time.Second)
		}
		exited(n, s)
		fmt.Println(n)
	}
	os.Exit(code)
}

// exited records that container n's process ended: a --rm container is
// gone, another stays listed as exited.
func exited(n string, s *state) {
	if s.Remove {
		os.Remove(statePath(n))
	} else {
		s.Running, s.Stopping = false, false
		save(s)
	}
}

func rm(args []string) {
	code := 0
	for _, n := range args {
		if strings.HasPrefix(n, "-") {
			continue // -f
		}
		s, ok := load(n)
		if !ok {
			fmt.Fprintf(os.Stderr, "Error response from daemon: No such container: %s\n", n)
			code = 1
			continue
		}
		if s.Sticky {
			fmt.Println(n)
			continue
		}
		if !s.Stopping {
			kill(s, syscall.SIGKILL, 10*time.Second)
		}
		os.Remove(statePath(n))
		fmt.Println(n)
	}
	os.Exit(code)
}

func killCmd(args []string) {
	code := 0
	for _, n := range args {
		s, ok := load(n)
		switch {
		case !ok:
			fmt.Fprintf(os.Stderr, "Error response from daemon: No such container: %s\n", n)
			code = 1
		case !s.Running || !alive(s.PID):
			fmt.Fprintf(os.Stderr, "Error response from daemon: Cannot kill container: %s: Container %s is not running\n", n, n)
			code = 1
		default:
			kill(s, syscall.SIGKILL, 10*time.Second)
			exited(n, s)
			fmt.Println(n)
		}
	}
	os.Exit(code)
}

func ps(args []string) {
	var showAll, quiet bool
	var filters []string
	format := ""
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-a", "--all":
			showAll = true
		case "-q", "--quiet":
			quiet = true
		case "--filter", "-f":
			i++
			filters = append(filters, args[i])
		case "--format":
			i++
			format = args[i]
		default:
			fail(125, "fakeruntime ps: unknown flag %q", args[i])
		}
	}
	if format != "" && format != "{{.Names}}" {
		fail(125, "fakeruntime ps: unsupported --format %q", format)
	}
	for _, s := range all() {
		if !showAll && !s.Running {
			continue
		}
		if !matches(s, filters) {
			continue
		}
		if quiet {
			sum := sha256.Sum256([]byte(s.Name))
			fmt.Println(hex.EncodeToString(sum[:6]))
		} else {
			fmt.Println(s.Name)
		}
	}
}

// matches applies docker's ps filters: label=K or label=K=V, name=REGEX
// (matched against the name with and without docker's leading "/").
func matches(s *state, filters []string) bool {
	for _, f := range filters {
		kind, value, _ := strings.Cut(f, "=")
		switch kind {
		case "label":
			k, v, withValue := strings.Cut(value, "=")
			got, ok := s.Labels[k]
			if !ok || (withValue && got != v) {
				return false
			}
		case "name":
			re, err := regexp.Compile(value)
			if err != nil {
				fail(125, "Error response from daemon: invalid filter 'name=%s': %v", value, err)
			}
			if !re.MatchString(s.Name) && !re.MatchString("/"+s.Name) {
				return false
			}
		default:
			fail(125, "Error response from daemon: invalid filter '%s'", f)
		}
	}
	return true
}
