package spec

import (
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/shellcmd"
)

// ServedName is the model name clients must send: served_model_name, else model.
func (s *Server) ServedName() string {
	if s.ServedModelName != "" {
		return s.ServedModelName
	}
	return s.Model
}

// LaunchMaxNumSeqs is the max_num_seqs the server is launched with: the
// last of the engine's flag for it in args (vLLM's --max-num-seqs, also
// written --max_num_seqs, as vLLM's FlexibleArgumentParser reads
// underscores as dashes; SGLang's --max-running-requests; or with "=value"),
// which wins over the max_num_seqs attribute because args are rendered
// after it and argparse keeps the last; else the attribute; else what the
// engine fixes by itself (SGLang: 48 under speculative decoding); nil when
// none sets it (or args' value is not a positive number).
func (s *Server) LaunchMaxNumSeqs() *int {
	n := s.MaxNumSeqs
	for i := 0; i < len(s.Args); i++ {
		flag, val, hasVal := strings.Cut(s.Args[i], "=")
		if !slices.Contains(s.syntax().MaxNumSeqsFlags, flag) {
			continue
		}
		if !hasVal {
			if i+1 >= len(s.Args) {
				break
			}
			i++
			val = s.Args[i]
		}
		v, err := strconv.Atoi(val)
		if err != nil || v <= 0 {
			return nil
		}
		n = &v
	}
	if n == nil && s.syntax().ImpliedMaxNumSeqs != nil {
		n = s.syntax().ImpliedMaxNumSeqs(s.launch())
	}
	return n
}

// Argv is the exact launch command: COMMAND serve MODEL --flag value … in
// the engine's flags (docs/spec.md#engines), with
// typed attributes rendered only when set and `args` appended last. It holds
// the real API key: pass it to exec only, and RedactedArgv everywhere else.
// For a server with a container block it is
// LaunchContainerArgv(runIDPlaceholder): launch LaunchContainerArgv of the
// run's id.
func (s *Server) Argv() []string {
	if s.Container != nil {
		return s.LaunchContainerArgv(runIDPlaceholder)
	}
	return s.argv(s.APIKey)
}

// RedactedArgv is Argv with the API key replaced by "<redacted>".
func (s *Server) RedactedArgv() []string {
	if s.Container != nil {
		return s.ContainerArgv(runIDPlaceholder) // the key redacted
	}
	if s.APIKey == "" {
		return s.argv("")
	}
	return s.argv(shellcmd.Redacted)
}

func (s *Server) argv(key string) []string {
	cmd := s.Command
	if cmd == "" {
		cmd = s.syntax().Command
	}
	return append(append([]string{cmd}, s.syntax().Subcommand...), s.serveArgs(key, s.Host)...)
}

// WithoutContainer is a copy of s launched as a bare command (the container
// block dropped): -sim runs the simulator that way.
func (s *Server) WithoutContainer() *Server {
	c := *s
	c.Container = nil
	return &c
}

// ContainerName is the name of the container of server s in run runID:
// PREFIX-RUNID-SERVER, characters a container name may not hold replaced
// by '-'. It is "" for a server without a container block.
func (s *Server) ContainerName(runID string) string {
	if s.Container == nil {
		return ""
	}
	return containerNameFor(s.Container.NamePrefix, runID, s.Name)
}

// ContainerArgv is the runtime command that runs server s in run runID:
//
//	RUNTIME run --rm --name NAME --label slogate.run=RUNID --label slogate.server=SERVER
//	  -p [HOST:]PORT:PORT [--gpus G] [--ipc I] [--shm-size S] [-v V]… [-e NAME]… [args…]
//	  IMAGE [COMMAND…] MODEL --flag value …
//
// COMMAND is the container block's command, else the engine's (none for
// vLLM, whose image's entrypoint is `vllm serve`; `sglang serve` for
// SGLang, whose image has no entrypoint). The model and the engine's flags
// follow, with --host 0.0.0.0 (the published port reaches the server only
// through the container's own interface). The server's env and the API key
// go to the container by name (-e NAME), their values through the
// runtime's environment (LaunchEnv), and vLLM reads the key from
// VLLM_API_KEY (docs/vllm.md#auth) instead of --api-key. An engine with no
// such variable (SGLang) takes --api-key: here it is "<redacted>", and
// LaunchContainerArgv holds the real key. A host other than a wildcard
// publishes the port on that address only. It is nil for a server without
// a container block.
func (s *Server) ContainerArgv(runID string) []string {
	if s.APIKey == "" || s.syntax().APIKeyEnv != "" {
		return s.containerArgv(runID, "")
	}
	return s.containerArgv(runID, shellcmd.Redacted)
}

// LaunchContainerArgv is ContainerArgv with the real API key where the
// engine takes it only as a flag: pass it to exec only.
func (s *Server) LaunchContainerArgv(runID string) []string {
	if s.syntax().APIKeyEnv != "" {
		return s.containerArgv(runID, "")
	}
	return s.containerArgv(runID, s.APIKey)
}

func (s *Server) containerArgv(runID, key string) []string {
	c := s.Container
	if c == nil {
		return nil
	}
	port := s.Port
	if port == 0 {
		port = DefaultPort
	}
	publish := strconv.Itoa(port) + ":" + strconv.Itoa(port)
	if !wildcardHost(s.Host) {
		publish = net.JoinHostPort(s.Host, strconv.Itoa(port)) + ":" + strconv.Itoa(port)
	}
	a := []string{c.Runtime, "run", "--rm", "--name", s.ContainerName(runID),
		"--label", LabelRun + "=" + runID, "--label", labelServer + "=" + s.Name, "-p", publish}
	opt := func(flag, v string) {
		if v != "" {
			a = append(a, flag, v)
		}
	}
	a = append(a, c.gpuFlags()...)
	opt("--ipc", c.IPC)
	opt("--shm-size", c.ShmSize)
	for _, v := range c.Volumes {
		a = append(a, "-v", v)
	}
	for _, k := range sortedKeys(s.LaunchEnv()) {
		a = append(a, "-e", k)
	}
	a = append(a, c.Args...)
	a = append(a, c.Image)
	a = append(a, s.ContainerCommand()...)
	return append(a, s.serveArgs(key, "0.0.0.0")...)
}

// ContainerCommand are the words after the image: the container block's
// command, else the engine's default (docs/spec.md#container).
func (s *Server) ContainerCommand() []string {
	if s.Container == nil {
		return nil
	}
	if s.Container.Command != nil {
		return s.Container.Command
	}
	return s.syntax().ContainerCommand
}

// gpuFlags hands the GPUs to the container: docker's --gpus VALUE; for
// podman one CDI device per GPU (--device nvidia.com/gpu=all, or one per
// index or UUID of device=…), the names `nvidia-ctk cdi generate` gives
// them. Podman 3.2 to 4.x accepts --gpus and ignores it, for Docker
// scripts (podman PR #10430), so the server would start without a GPU;
// podman 5.0 maps it to the same CDI devices (PR #21180).
func (c *Container) gpuFlags() []string {
	switch {
	case c.GPUs == "":
		return nil
	case c.Runtime != RuntimePodman:
		return []string{"--gpus", c.GPUs}
	case c.GPUs == "all":
		return []string{"--device", cdiGPU + "=all"}
	}
	var a []string
	for _, id := range strings.Split(strings.TrimPrefix(c.GPUs, "device="), ",") {
		a = append(a, "--device", cdiGPU+"="+id)
	}
	return a
}

// cdiGPU is the CDI kind of NVIDIA's GPUs.
const cdiGPU = "nvidia.com/gpu"

// LaunchEnv is the environment slogate adds to its own for the launched
// process: env, and for a container server also the engine's API key
// variable (vLLM's VLLM_API_KEY) set to the API key (the runtime hands each
// variable to the container by name). It holds secrets: pass it to exec
// only, and RedactedEnv everywhere else.
func (s *Server) LaunchEnv() map[string]string {
	apiKeyEnv := s.syntax().APIKeyEnv
	if s.Container == nil || s.APIKey == "" || apiKeyEnv == "" {
		return s.Env
	}
	env := make(map[string]string, len(s.Env)+1)
	for k, v := range s.Env {
		env[k] = v
	}
	env[apiKeyEnv] = s.APIKey
	return env
}

// wildcardHost reports whether host binds every interface.
func wildcardHost(host string) bool {
	return host == "" || host == "0.0.0.0" || host == "::" || host == "[::]"
}

// BaseURL is where a client reaches the server: http://HOST:PORT, with a
// wildcard bind address (0.0.0.0, ::, "") replaced by 127.0.0.1.
func (s *Server) BaseURL() string {
	host := s.Host
	if wildcardHost(host) {
		host = "127.0.0.1"
	}
	port := s.Port
	if port == 0 {
		port = 8000
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(port))
}

// secretEnvName matches environment variable names that hold credentials.
var secretEnvName = regexp.MustCompile(`(?i)(key|token|secret|passw|credential)`)

// RedactedEnv returns LaunchEnv with secrets replaced by "<redacted>": every
// variable whose name says it holds a credential (…KEY, …TOKEN, …SECRET,
// …PASSWORD), and the API key wherever it appears in a value. Print and save
// this, never Env.
func (s *Server) RedactedEnv() map[string]string {
	env := s.LaunchEnv()
	if env == nil {
		return nil
	}
	out := make(map[string]string, len(env))
	for k, v := range env {
		switch {
		case secretEnvName.MatchString(k) && v != "":
			v = shellcmd.Redacted
		case s.APIKey != "" && strings.Contains(v, s.APIKey):
			v = strings.ReplaceAll(v, s.APIKey, shellcmd.Redacted)
		}
		out[k] = v
	}
	return out
}
