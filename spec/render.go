package spec

import (
	"encoding/json"
	"net"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Redacted replaces secrets wherever slogate prints or saves them.
const Redacted = "<redacted>"

// ServedName is the model name clients must send: served_model_name, else model.
func (s *Server) ServedName() string {
	if s.ServedModelName != "" {
		return s.ServedModelName
	}
	return s.Model
}

// Argv is the exact launch command: COMMAND serve MODEL --flag value …, with
// typed attributes rendered only when set and `args` appended last. It holds
// the real API key: pass it to exec only, and RedactedArgv everywhere else.
func (s *Server) Argv() []string { return s.argv(s.APIKey) }

// RedactedArgv is Argv with the API key replaced by "<redacted>".
func (s *Server) RedactedArgv() []string {
	if s.APIKey == "" {
		return s.argv("")
	}
	return s.argv(Redacted)
}

func (s *Server) argv(key string) []string {
	cmd := s.Command
	if cmd == "" {
		cmd = "vllm"
	}
	a := []string{cmd, "serve", s.Model}
	str := func(flag, v string) {
		if v != "" {
			a = append(a, flag, v)
		}
	}
	num := func(flag string, v *int) {
		if v != nil {
			a = append(a, flag, strconv.Itoa(*v))
		}
	}
	str("--served-model-name", s.ServedModelName)
	num("--tensor-parallel-size", s.TensorParallelSize)
	num("--pipeline-parallel-size", s.PipelineParallelSize)
	num("--data-parallel-size", s.DataParallelSize)
	if s.EnableExpertParallel != nil && *s.EnableExpertParallel {
		a = append(a, "--enable-expert-parallel")
	}
	num("--max-model-len", s.MaxModelLen)
	if s.GPUMemoryUtilization != nil {
		a = append(a, "--gpu-memory-utilization", strconv.FormatFloat(*s.GPUMemoryUtilization, 'f', -1, 64))
	}
	str("--host", s.Host)
	if s.Port != 0 {
		a = append(a, "--port", strconv.Itoa(s.Port))
	}
	str("--api-key", key)
	num("--max-num-batched-tokens", s.MaxNumBatchedTokens)
	num("--max-num-seqs", s.MaxNumSeqs)
	str("--attention-backend", s.AttentionBackend)
	str("--kv-cache-dtype", s.KVCacheDtype)
	if s.EnablePrefixCaching != nil {
		if *s.EnablePrefixCaching {
			a = append(a, "--enable-prefix-caching")
		} else {
			a = append(a, "--no-enable-prefix-caching")
		}
	}
	if s.Speculative != nil {
		a = append(a, "--speculative-config", s.Speculative.JSON())
	}
	return append(a, s.Args...)
}

// JSON renders the block as vLLM's --speculative-config value: method, model
// and num_speculative_tokens first, then the config keys in sorted order.
func (sp *Speculative) JSON() string {
	var b strings.Builder
	b.WriteByte('{')
	n := 0
	member := func(k string, v any) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(v)
		if err != nil {
			vb = []byte("null")
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	if sp.Method != "" {
		member("method", sp.Method)
	}
	if sp.Model != "" {
		member("model", sp.Model)
	}
	if sp.NumSpeculativeTokens != nil {
		member("num_speculative_tokens", *sp.NumSpeculativeTokens)
	}
	keys := make([]string, 0, len(sp.Config))
	for k := range sp.Config {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		member(k, sp.Config[k])
	}
	b.WriteByte('}')
	return b.String()
}

// BaseURL is where a client reaches the server: http://HOST:PORT, with a
// wildcard bind address (0.0.0.0, ::, "") replaced by 127.0.0.1.
func (s *Server) BaseURL() string {
	host := s.Host
	if host == "" || host == "0.0.0.0" || host == "::" || host == "[::]" {
		host = "127.0.0.1"
	}
	port := s.Port
	if port == 0 {
		port = 8000
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(port))
}

// ShellCommand renders env and argv as one line a person can paste into a
// shell: `env K=V … 'cmd' serve …`, each word quoted only when it needs it.
// Pass RedactedArgv, never Argv.
func ShellCommand(env map[string]string, argv []string) string {
	var words []string
	if len(env) > 0 {
		words = append(words, "env")
		keys := make([]string, 0, len(env))
		for k := range env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			words = append(words, ShellQuote(k+"="+env[k]))
		}
	}
	for _, a := range argv {
		words = append(words, ShellQuote(a))
	}
	return strings.Join(words, " ")
}

// ShellQuote quotes one word for a POSIX shell, leaving it bare when safe.
// "<redacted>" is left bare so it reads as a placeholder.
func ShellQuote(w string) string {
	if w == Redacted {
		return w
	}
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// secretEnvName matches environment variable names that hold credentials.
var secretEnvName = regexp.MustCompile(`(?i)(key|token|secret|passw|credential)`)

// RedactedEnv returns Env with secrets replaced by "<redacted>": every
// variable whose name says it holds a credential (…KEY, …TOKEN, …SECRET,
// …PASSWORD), and the API key wherever it appears in a value. Print and save
// this, never Env.
func (s *Server) RedactedEnv() map[string]string {
	if s.Env == nil {
		return nil
	}
	out := make(map[string]string, len(s.Env))
	for k, v := range s.Env {
		switch {
		case secretEnvName.MatchString(k) && v != "":
			v = Redacted
		case s.APIKey != "" && strings.Contains(v, s.APIKey):
			v = strings.ReplaceAll(v, s.APIKey, Redacted)
		}
		out[k] = v
	}
	return out
}
