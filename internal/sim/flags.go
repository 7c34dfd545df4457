package sim

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/suggest"
)

// Config is everything `slogate sim serve` was asked for: the vLLM flags it
// models, the --sim-* flags, and the vLLM flags it ignored (for the log).
type Config struct {
	Model       string   // positional MODEL (or --model)
	ServedNames []string // --served-model-name (nargs+); defaults to Model
	Host        string   // --host
	Port        int      // --port
	APIKeys     []string // --api-key (repeatable), VLLM_API_KEY as fallback

	MaxModelLen         int                // 0 = the profile's native length
	MaxNumSeqs          int                // --max-num-seqs
	MaxNumBatchedTokens int                // --max-num-batched-tokens
	TensorParallel      int                // --tensor-parallel-size (-tp)
	DataParallel        int                // --data-parallel-size (-dp): engines, each with its own KV cache and running cap
	KVCacheDtype        string             // --kv-cache-dtype
	GPUMemUtil          float64            // 0 = the profile's value
	PrefixCaching       *bool              // nil = default (on)
	PromptTokensDetails bool               // --enable-prompt-tokens-details: usage.prompt_tokens_details.cached_tokens
	Speculative         *SpeculativeConfig // --speculative-config (-sc); nil = none

	// MaxNumQueuedReqs and MaxNumQueuedTokens are vLLM's admission limits
	// (--max-num-queued-reqs, --max-num-queued-tokens; nil: none): a
	// request over either is refused with 503 (admission.go).
	MaxNumQueuedReqs, MaxNumQueuedTokens *int
	// GenerationDefaults are the server's default sampling values, as vLLM's
	// ModelConfig.get_diff_sampling_param() computes them: the
	// generation_config.json of --generation-config DIR ("auto", the
	// default, and "vllm" have none: the simulator has no model files),
	// updated by --override-generation-config, keeping only
	// samplingDefaultFields. Nil when none.
	GenerationDefaults map[string]float64
	generationConfig   string         // --generation-config
	overrideGeneration map[string]any // --override-generation-config

	// Simulator flags (--sim-*).
	Profile           string        // --sim-profile
	Startup           time.Duration // --sim-startup
	TBT               time.Duration // --sim-tbt
	TTFT              time.Duration // --sim-ttft
	PrefillTPS        float64       // --sim-prefill-tps
	KVTokens          int           // --sim-kv-tokens
	AcceptLen         float64       // --sim-accept-len
	Seed              uint64        // --sim-seed
	ExitAfter         time.Duration // --sim-exit-after
	StallAfter        int           // --sim-stall-after
	ErrorRate         float64       // --sim-error-rate
	Drift             float64       // --sim-drift: the share of prompts whose greedy output diverges (greedy.go)
	Accuracy          float64       // --sim-accuracy: the probability that an output answers right, when Answers
	Answers           bool          // --sim-accuracy was given
	MidstreamErrAfter int           // --sim-midstream-error-after
	TruncateAfter     int           // --sim-truncate-after
	NoContinuousUsage bool          // --sim-no-continuous-usage
	OneTokenChunks    bool          // --sim-one-token-chunks
	// ReasoningParser is --reasoning-parser: a chat stream then sends a
	// seeded share of its output (ReasoningShare, --sim-reasoning-share)
	// as reasoning deltas before its answer (docs/method.md#reasoning).
	ReasoningParser    string
	ReasoningShare     float64
	IgnoreSIGTERM      bool          // --sim-ignore-sigterm: a server that only SIGINT or SIGKILL stops
	LogInterval        time.Duration // --sim-log-interval
	Hybrid             bool          // --sim-hybrid: hybrid (linear-attention) KV layout; default: HybridModel(Model)
	hybridSet          bool          // --sim-hybrid was given (true or false)
	NoKVSizeLabel      bool          // --sim-no-kv-size-label: a build before vLLM PR #42206
	KVLog              string        // --sim-kv-log: the form of the KV log lines ("" = from NoKVSizeLabel)
	NoWaitingByReason  bool          // --sim-no-waiting-by-reason: a build before vLLM PR #38435
	RefuseOverLength   bool          // --sim-refuse-over-length: a build before 0.32 (max_tokens past max_model_len refused, not shortened)
	FlatErrors         bool          // --sim-flat-errors: old flat mid-stream error shape
	Preempt            bool          // --sim-preempt: admit without reserving KV, preempt when it runs out
	SpeculativeOff     bool          // --sim-spec-off: speculative decoding configured but never runs
	Noise              float64       // --sim-noise: multiplicative step-time jitter (std dev of its log)
	BootNoise          float64       // --sim-boot-noise: std dev of the log of a step-time factor drawn once per process start
	BootSeed           uint64        // seeds --sim-boot-noise: $SLOGATE_BOOT (slogate run's boot number), else the start time
	SlowAt             SlowBand      // --sim-slow-at-concurrency: a band of batch sizes whose steps are slower
	Slowdown           float64       // --sim-slowdown: every step (prefill and decode) F× as long; 0 = unset (1)
	RecordFile         string        // --sim-record: append one JSON line per generation request
	EOSMean            float64       // --sim-eos-mean: mean answer length where a request lets the model stop; 0 = defaultEOSMean
	DevMode            bool          // VLLM_SERVER_DEV_MODE set to a non-zero integer: dev routes exist
	Ignored            []string      // vLLM flags accepted but not modelled
	sglang             bool          // parsed as SGLang's command line: settle skips vLLM-only refusals
	NonDefault         []string      // modelled flags that were set, for the args log line
	speculativeDotKeys map[string]string
}

// SpeculativeConfig is the part of --speculative-config the simulator models.
type SpeculativeConfig struct {
	Method               string  `json:"method"`
	Model                string  `json:"model"`
	NumSpeculativeTokens int     `json:"num_speculative_tokens"`
	RejectionSample      string  `json:"rejection_sample_method"`
	SyntheticAcceptLen   float64 `json:"synthetic_acceptance_length"`
}

// flagKind says how a modelled flag takes its value.
type flagKind int

const (
	kindValue flagKind = iota // --flag V or --flag=V
	kindBool                  // --flag (optionally --flag=true|false)
	kindMulti                 // --flag V1 V2 … (argparse nargs='+')
)

// setter applies one modelled flag's value to the config.
type setter struct {
	kind flagKind
	set  func(c *Config, v string) error
}

// usageError is a bad command line: exit 2.
func usageError(format string, a ...any) error { return exit.Usagef(format, a...) }

func parseIntFlag(dst *int, min int) func(*Config, string) error {
	return func(_ *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < min {
			return fmt.Errorf("want an integer ≥ %d, got %q", min, v)
		}
		*dst = n
		return nil
	}
}

// durationSetter sets *dst from a non-negative Go duration such as 2ms.
func durationSetter(dst *time.Duration) setter {
	return setter{kindValue, func(_ *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("want a duration like 2ms or 1.5s, got %q", v)
		}
		*dst = d
		return nil
	}}
}

// countSetter sets *dst from an integer ≥ 0.
func countSetter(dst *int) setter { return setter{kindValue, parseIntFlag(dst, 0)} }

// limitSetter sets an optional limit ≥ 0 (vLLM's Field(default=None, ge=0)).
func limitSetter(dst **int) setter {
	return setter{kindValue, func(_ *Config, v string) error {
		var n int
		if err := parseIntFlag(&n, 0)(nil, v); err != nil {
			return err
		}
		*dst = &n
		return nil
	}}
}

// markedSetter wraps s to note in *given that the flag was set (a default
// that depends on other flags yields to it).
func markedSetter(s setter, given *bool) setter {
	return setter{s.kind, func(c *Config, v string) error {
		*given = true
		return s.set(c, v)
	}}
}

// boolSetter sets *dst from a switch (--flag, --flag=true|false).
func boolSetter(dst *bool) setter {
	return setter{kindBool, func(_ *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", v)
		}
		*dst = b
		return nil
	}}
}

// floatSetter sets *dst from a number that bad does not refuse; a refused
// or unparsable value is the error "want <want>, got <value>".
func floatSetter(dst *float64, bad func(float64) bool, want string) setter {
	return setter{kindValue, func(_ *Config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || bad(f) {
			return fmt.Errorf("want %s, got %q", want, v)
		}
		*dst = f
		return nil
	}}
}

// outsideUnit reports whether f is outside [0, 1] (NaN is not).
func outsideUnit(f float64) bool { return f < 0 || f > 1 }

// prefixCachingSetter sets PrefixCaching from --enable-prefix-caching, or
// from its negation --no-enable-prefix-caching when negate.
func prefixCachingSetter(negate bool) setter {
	return setter{kindBool, func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", v)
		}
		if negate {
			b = !b
		}
		c.PrefixCaching = &b
		return nil
	}}
}

// modelledFlags are the vLLM flags (by canonical dashed name) that change
// what the simulator does: vLLM's own and the simulator's --sim-* flags.
// c is the config being filled.
func modelledFlags(c *Config) map[string]setter {
	flags := vllmServerFlags(c)
	for name, s := range simFlags(c) {
		flags[name] = s
	}
	return flags
}

// vllmServerFlags are the vLLM flags the simulator models: the served
// model, the HTTP surface, the engine's limits and sizes, speculative
// decoding and the sampling defaults.
func vllmServerFlags(c *Config) map[string]setter {
	return map[string]setter{
		"model": {kindValue, func(c *Config, v string) error { c.Model = v; return nil }},
		"served-model-name": {kindMulti, func(c *Config, v string) error {
			c.ServedNames = append(c.ServedNames, v)
			return nil
		}},
		"host": {kindValue, func(c *Config, v string) error { c.Host = v; return nil }},
		"port": {kindValue, func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 65535 {
				return fmt.Errorf("want a port number 0–65535, got %q", v)
			}
			c.Port = n
			return nil
		}},
		"api-key": {kindValue, func(c *Config, v string) error { c.APIKeys = append(c.APIKeys, v); return nil }},
		"max-model-len": {kindValue, func(c *Config, v string) error {
			n, err := parseHumanInt(v)
			if err != nil {
				return err
			}
			c.MaxModelLen = n
			return nil
		}},
		"max-num-seqs":           {kindValue, parseIntFlag(&c.MaxNumSeqs, 1)},
		"max-num-batched-tokens": {kindValue, parseIntFlag(&c.MaxNumBatchedTokens, 1)},
		"max-num-queued-reqs":    limitSetter(&c.MaxNumQueuedReqs),
		"max-num-queued-tokens":  limitSetter(&c.MaxNumQueuedTokens),
		"tensor-parallel-size":   {kindValue, parseIntFlag(&c.TensorParallel, 1)},
		"data-parallel-size":     {kindValue, parseIntFlag(&c.DataParallel, 1)},
		"kv-cache-dtype": {kindValue, func(c *Config, v string) error {
			if _, ok := kvDtypeBytes(v); !ok {
				return fmt.Errorf("unknown KV cache dtype %q (want auto, bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2, nvfp4, …)", v)
			}
			c.KVCacheDtype = v
			return nil
		}},
		"gpu-memory-utilization": floatSetter(&c.GPUMemUtil, func(f float64) bool { return f <= 0 || f > 1 },
			"a fraction in (0, 1]"),
		"enable-prefix-caching":        prefixCachingSetter(false),
		"no-enable-prefix-caching":     prefixCachingSetter(true),
		"enable-prompt-tokens-details": boolSetter(&c.PromptTokensDetails),
		"speculative-config": {kindValue, func(c *Config, v string) error {
			var s SpeculativeConfig
			dec := json.NewDecoder(strings.NewReader(v))
			if err := dec.Decode(&s); err != nil {
				return fmt.Errorf("want a JSON object like '{\"method\":\"dflash\",\"num_speculative_tokens\":7}': %v", err)
			}
			c.Speculative = &s
			return nil
		}},

		"generation-config": {kindValue, func(c *Config, v string) error { c.generationConfig = v; return nil }},
		"override-generation-config": {kindValue, func(c *Config, v string) error {
			m := map[string]any{}
			if err := json.Unmarshal([]byte(v), &m); err != nil {
				return fmt.Errorf("want a JSON object like '{\"min_p\": 0.05}': %v", err)
			}
			c.overrideGeneration = m
			return nil
		}},
	}
}

// simFlags are the simulator's own --sim-* flags (by name without the
// dashes): the profile and its timings, the faults it injects and the
// older builds it imitates.
func simFlags(c *Config) map[string]setter {
	return map[string]setter{
		"sim-profile": {kindValue, func(c *Config, v string) error {
			if _, ok := profileByName(v); !ok {
				return fmt.Errorf("unknown profile %q (have %s)", v, strings.Join(profileNames(), ", "))
			}
			c.Profile = v
			return nil
		}},
		"sim-startup": durationSetter(&c.Startup),
		"sim-tbt":     durationSetter(&c.TBT),
		"sim-ttft":    durationSetter(&c.TTFT),
		"sim-prefill-tps": floatSetter(&c.PrefillTPS, func(f float64) bool { return f <= 0 || math.IsInf(f, 0) },
			"tokens per second > 0"),
		"sim-kv-tokens": {kindValue, parseIntFlag(&c.KVTokens, 16)},
		"sim-accept-len": floatSetter(&c.AcceptLen, func(f float64) bool { return f < 1 },
			"a mean acceptance length ≥ 1"),
		"sim-seed": {kindValue, func(c *Config, v string) error {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return fmt.Errorf("want an unsigned integer, got %q", v)
			}
			c.Seed = n
			return nil
		}},
		"sim-exit-after":  durationSetter(&c.ExitAfter),
		"sim-stall-after": countSetter(&c.StallAfter),
		"sim-error-rate":  floatSetter(&c.ErrorRate, outsideUnit, "a fraction in [0, 1]"),
		"sim-drift":       floatSetter(&c.Drift, outsideUnit, "a fraction in [0, 1]"),
		"sim-accuracy": {kindValue, func(c *Config, v string) error {
			if err := floatSetter(&c.Accuracy, outsideUnit, "a fraction in [0, 1]").set(c, v); err != nil {
				return err
			}
			c.Answers = true
			return nil
		}},
		"sim-midstream-error-after": countSetter(&c.MidstreamErrAfter),
		"sim-truncate-after":        countSetter(&c.TruncateAfter),
		"sim-no-continuous-usage":   boolSetter(&c.NoContinuousUsage),
		"sim-one-token-chunks":      boolSetter(&c.OneTokenChunks),
		"sim-reasoning-share": floatSetter(&c.ReasoningShare, func(f float64) bool { return !(f > 0 && f <= 2) },
			"a share in (0, 2]"),
		"reasoning-parser":     {kindValue, func(c *Config, v string) error { c.ReasoningParser = v; return nil }},
		"sim-ignore-sigterm":   boolSetter(&c.IgnoreSIGTERM),
		"sim-log-interval":     durationSetter(&c.LogInterval),
		"sim-hybrid":           markedSetter(boolSetter(&c.Hybrid), &c.hybridSet),
		"sim-no-kv-size-label": boolSetter(&c.NoKVSizeLabel),
		"sim-kv-log": {kindValue, func(c *Config, v string) error {
			if !slices.Contains(kvLogForms, v) {
				return fmt.Errorf("want one of %s, got %q", strings.Join(kvLogForms, ", "), v)
			}
			c.KVLog = v
			return nil
		}},
		"sim-no-waiting-by-reason": boolSetter(&c.NoWaitingByReason),
		"sim-refuse-over-length":   boolSetter(&c.RefuseOverLength),
		"sim-flat-errors":          boolSetter(&c.FlatErrors),
		"sim-preempt":              boolSetter(&c.Preempt),
		"sim-spec-off":             boolSetter(&c.SpeculativeOff),
		"sim-noise":                floatSetter(&c.Noise, outsideUnit, "a relative jitter in [0, 1] such as 0.03"),
		"sim-slowdown": floatSetter(&c.Slowdown, func(f float64) bool { return !(f >= 0.1 && f <= 100) },
			"a factor on the time per step in [0.1, 100] such as 1.2 (20 % slower)"),
		"sim-boot-noise": floatSetter(&c.BootNoise, outsideUnit, "a relative boot-to-boot spread in [0, 1] such as 0.03"),
		"sim-slow-at-concurrency": {kindValue, func(c *Config, v string) error {
			b, err := parseSlowBand(v)
			c.SlowAt = b
			return err
		}},
		"sim-eos-mean": floatSetter(&c.EOSMean, func(f float64) bool { return !(f >= 1) || math.IsInf(f, 0) },
			"a mean answer length in tokens, at least 1"),
		"sim-record": {kindValue, func(c *Config, v string) error { c.RecordFile = v; return nil }},
	}
}

// The forms of the KV log lines (--sim-kv-log; docs/vllm.md#kv-cache-log-lines).
const (
	kvLogOneLine         = "one-line"         // current builds: size and concurrency on one line
	kvLogTwoLines        = "two-lines"        // builds before PR #42206
	kvLogConcurrencyOnly = "concurrency-only" // builds that print only the concurrency line
	kvLogV019            = "v0.19"            // two lines, the size divided by the KV groups (#40691)
)

var kvLogForms = []string{kvLogOneLine, kvLogTwoLines, kvLogConcurrencyOnly, kvLogV019}

// kvLogForm is the form of the KV log lines: --sim-kv-log, else two lines
// for a build without the kv_cache_size_tokens label, else one line.
func (c *Config) kvLogForm() string {
	switch {
	case c.KVLog != "":
		return c.KVLog
	case c.NoKVSizeLabel:
		return kvLogTwoLines
	}
	return kvLogOneLine
}

// eosMean is --sim-eos-mean, else defaultEOSMean.
func (c *Config) eosMean() float64 {
	if c.EOSMean > 0 {
		return c.EOSMean
	}
	return defaultEOSMean
}

// shortAliases maps vLLM's short flags to their long names.
var shortAliases = map[string]string{"-tp": "tensor-parallel-size", "-dp": "data-parallel-size", "-sc": "speculative-config"}

// unknownSimFlag is the usage error for a --sim-* flag the simulator does
// not have, with the flag the user probably meant (the CLI's rule). Unknown
// vLLM flags never get here: they are accepted and ignored, as a real
// server's flags the simulator does not model.
func unknownSimFlag(name string, flags map[string]setter) error {
	var names []string
	for n := range flags {
		if strings.HasPrefix(n, "sim-") {
			names = append(names, n)
		}
	}
	slices.Sort(names) // a stable answer when two are equally close
	if s := suggest.Closest(name, names); s != "" {
		return usageError("unknown simulator flag --%s; did you mean --%s? (run 'slogate sim serve --help' for the list)", name, s)
	}
	return usageError("unknown simulator flag --%s (run 'slogate sim serve --help' for the list)", name)
}

// parseServe parses the arguments after `slogate sim serve` the way vLLM's
// argparse does: --flag value, --flag=value, underscores or dashes, the
// model as the first positional argument. Flags it does not model are
// accepted and remembered in Ignored.
func parseServe(args []string) (*Config, error) {
	c := &Config{
		Host: "0.0.0.0", Port: 8000, TensorParallel: 1, DataParallel: 1, KVCacheDtype: "auto",
		MaxNumBatchedTokens: 8192, Seed: 1, LogInterval: 10 * time.Second,
		speculativeDotKeys: map[string]string{},
	}
	flags := modelledFlags(c)
	for i := 0; i < len(args); i++ {
		last, err := c.parseServeArg(flags, args, i)
		if err != nil {
			return nil, err
		}
		i = last
	}
	if err := c.completeServe(); err != nil {
		return nil, err
	}
	return c, nil
}

// parseServeArg parses args[i] into c: the positional model, a
// --speculative-config.KEY, a modelled flag or an ignored one, with the
// values it takes after it. It returns the index of the last argument used.
func (c *Config) parseServeArg(flags map[string]setter, args []string, i int) (int, error) {
	a := args[i]
	if !strings.HasPrefix(a, "-") || a == "-" {
		if c.Model != "" {
			return i, usageError("unexpected argument %q: the model (%q) was already given; flags start with --", a, c.Model)
		}
		c.Model = a
		return i, nil
	}
	name, value, hasValue := strings.Cut(a, "=")
	name = vllmFlagName(name)
	// The dotted form --speculative-config.num_speculative_tokens 7.
	if key, ok := strings.CutPrefix(name, "speculative-config."); ok {
		return c.speculativeDotKey(name, key, value, hasValue, args, i)
	}
	s, ok := flags[name]
	if !ok {
		if strings.HasPrefix(name, "sim-") {
			return i, unknownSimFlag(name, flags)
		}
		return c.ignoreFlag(name, value, hasValue, args, i), nil
	}
	values, i := flagValues(s.kind, value, hasValue, args, i)
	if len(values) == 0 {
		return i, usageError("--%s needs a value", name)
	}
	for _, v := range values {
		if err := s.set(c, v); err != nil {
			return i, usageError("--%s: %v", name, err)
		}
	}
	c.NonDefault = append(c.NonDefault, "--"+name+" "+strings.Join(values, " "))
	return i, nil
}

// vllmFlagName is the canonical dashed name of an option as written (the
// part before any '='): a short alias's long name, or the name without its
// dashes and with underscores as dashes.
func vllmFlagName(option string) string {
	if long, ok := shortAliases[option]; ok {
		return long
	}
	if strings.HasPrefix(option, "--") {
		return strings.ReplaceAll(option[2:], "_", "-")
	}
	return strings.TrimLeft(option, "-")
}

// speculativeDotKey records --speculative-config.KEY VALUE (or =VALUE),
// merged into the speculative config once all flags are read. It returns
// the index of the last argument used.
func (c *Config) speculativeDotKey(name, key, value string, hasValue bool, args []string, i int) (int, error) {
	if !hasValue {
		if i+1 >= len(args) {
			return i, usageError("--%s needs a value", name)
		}
		i++
		value = args[i]
	}
	c.speculativeDotKeys[strings.ReplaceAll(key, "-", "_")] = value
	c.NonDefault = append(c.NonDefault, "--"+name+" "+value)
	return i, nil
}

// ignoreFlag remembers a vLLM flag the simulator does not model, with its
// value: the =VALUE, else a following word that is not a --flag. It
// returns the index of the last argument used.
func (c *Config) ignoreFlag(name, value string, hasValue bool, args []string, i int) int {
	ignored := "--" + name
	if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
		i++
		ignored += " " + args[i]
	} else if hasValue {
		ignored += "=" + value
	}
	c.Ignored = append(c.Ignored, ignored)
	return i
}

// flagValues are the values a modelled flag of this kind takes from
// args[i] on: its =VALUE, "true" for a bare switch, the following words up
// to the next flag for a list, else the next argument; none when it is
// missing. It returns them with the index of the last argument used.
func flagValues(kind flagKind, value string, hasValue bool, args []string, i int) ([]string, int) {
	switch {
	case hasValue:
		return []string{value}, i
	case kind == kindBool:
		return []string{"true"}, i
	case kind == kindMulti:
		var values []string
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			values = append(values, args[i])
		}
		return values, i
	case i+1 < len(args):
		return []string{args[i+1]}, i + 1
	}
	return nil, i
}

// completeServe checks and completes c once every flag is read: the model
// is required, the defaults that depend on other flags or on the
// environment are filled in, and the speculative config is checked.
func (c *Config) completeServe() error {
	if c.Model == "" {
		return usageError("missing MODEL: usage is 'slogate sim serve MODEL [vLLM flags] [--sim-* flags]'")
	}
	if len(c.ServedNames) == 0 {
		c.ServedNames = []string{c.Model}
	}
	c.BootSeed = bootSeed()
	c.readServeEnv()
	if !c.hybridSet {
		c.Hybrid = HybridModel(c.Model)
	}
	if err := c.resolveGenerationDefaults(); err != nil {
		return err
	}
	return c.resolveSpeculative()
}

// readServeEnv reads what vLLM takes from the environment: dev mode from
// VLLM_SERVER_DEV_MODE and, without --api-key, the key from VLLM_API_KEY.
func (c *Config) readServeEnv() {
	// vLLM reads bool(int(VLLM_SERVER_DEV_MODE)).
	if n, err := strconv.Atoi(os.Getenv("VLLM_SERVER_DEV_MODE")); err == nil && n != 0 {
		c.DevMode = true
	}
	if len(c.APIKeys) == 0 {
		if k := os.Getenv("VLLM_API_KEY"); k != "" {
			c.APIKeys = []string{k}
		}
	}
}

// resolveSpeculative merges the --speculative-config.KEY flags into the
// speculative config, infers the dflash method from the draft model's
// name, and checks the number of drafted tokens and the synthetic
// acceptance length.
func (c *Config) resolveSpeculative() error {
	if len(c.speculativeDotKeys) > 0 {
		if c.Speculative == nil {
			c.Speculative = &SpeculativeConfig{}
		}
		if err := applyDotKeys(c.Speculative, c.speculativeDotKeys); err != nil {
			return err
		}
	}
	s := c.Speculative
	if s == nil {
		return nil
	}
	if s.Method == "" && strings.Contains(strings.ToLower(s.Model), "dflash") {
		s.Method = "dflash"
	}
	if s.NumSpeculativeTokens < 1 {
		return usageError("--speculative-config: num_speculative_tokens must be ≥ 1, got %d", s.NumSpeculativeTokens)
	}
	if s.SyntheticAcceptLen != 0 && (s.SyntheticAcceptLen < 1 || s.SyntheticAcceptLen > float64(s.NumSpeculativeTokens+1)) {
		return usageError("--speculative-config: synthetic_acceptance_length must be in [1, %d], got %g",
			s.NumSpeculativeTokens+1, s.SyntheticAcceptLen)
	}
	return nil
}

// bootSeed seeds --sim-boot-noise: $SLOGATE_BOOT (slogate run's boot
// number), else the start time.
func bootSeed() uint64 {
	if n, err := strconv.ParseUint(os.Getenv("SLOGATE_BOOT"), 10, 64); err == nil {
		return n
	}
	return uint64(time.Now().UnixNano())
}

// hybridModels are the model families the simulator serves as hybrid
// (Mamba / linear-attention layers) without --sim-hybrid, as vLLM knows
// from the model's config: Qwen3.5 and Qwen3-Next (Gated DeltaNet) and
// Ling-3.0, the seed models (docs/vllm.md#hybrid-models).
var hybridModels = []string{"qwen3.5", "qwen3.6", "qwen3-next", "ling-3"}

// HybridModel reports whether the simulator serves model as a hybrid
// model by default (--sim-hybrid=false turns it off).
func HybridModel(model string) bool {
	m := strings.ToLower(model)
	for _, h := range hybridModels {
		if strings.Contains(m, h) {
			return true
		}
	}
	return false
}

// resolveGenerationDefaults computes GenerationDefaults the way
// get_diff_sampling_param does (vllm/config/model.py): the folder's
// generation_config.json unless --generation-config is "auto" or "vllm",
// then --override-generation-config on top, keeping the sampling fields
// vLLM takes from it (docs/vllm.md#sampling-defaults).
func (c *Config) resolveGenerationDefaults() error {
	cfg := map[string]any{}
	if g := c.generationConfig; g != "" && g != "auto" && g != "vllm" {
		b, err := os.ReadFile(g + "/generation_config.json")
		if err != nil {
			return usageError("--generation-config %s: %v", g, err)
		}
		if err := json.Unmarshal(b, &cfg); err != nil {
			return usageError("--generation-config %s: generation_config.json: %v", g, err)
		}
	}
	for k, v := range c.overrideGeneration {
		cfg[k] = v
	}
	for _, k := range samplingDefaultFields {
		f, ok := cfg[k].(float64)
		if !ok {
			continue
		}
		if c.GenerationDefaults == nil {
			c.GenerationDefaults = map[string]float64{}
		}
		c.GenerationDefaults[k] = f
	}
	return nil
}

// applyDotKeys merges --speculative-config.KEY VALUE flags into s.
func applyDotKeys(s *SpeculativeConfig, keys map[string]string) error {
	raw, _ := json.Marshal(s)
	m := map[string]any{}
	json.Unmarshal(raw, &m)
	for k, v := range keys {
		var parsed any
		if err := json.Unmarshal([]byte(v), &parsed); err != nil {
			parsed = v // a bare string such as dflash
		}
		m[k] = parsed
	}
	raw, _ = json.Marshal(m)
	if err := json.Unmarshal(raw, s); err != nil {
		return usageError("--speculative-config.*: %v", err)
	}
	return nil
}

// parseHumanInt parses vLLM's human-readable integers: 4096, 128k (×1000),
// 128K (×1024), 1M, 1m; "auto" and -1 mean the model's native length (0).
func parseHumanInt(v string) (int, error) {
	if v == "auto" || v == "-1" {
		return 0, nil
	}
	mult := 1.0
	if n := len(v); n > 0 {
		switch v[n-1] {
		case 'k':
			mult = 1e3
		case 'm':
			mult = 1e6
		case 'g':
			mult = 1e9
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		}
		if mult != 1 {
			v = v[:n-1]
		}
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 || f*mult > math.MaxInt32 {
		return 0, fmt.Errorf("want a token count like 262144, 128k, 256K or auto, got %q", v)
	}
	return int(f * mult), nil
}

// kvDtypeBytes is the size in bytes of one KV element in dtype, relative
// to the capacity a profile was measured with.
func kvDtypeBytes(dtype string) (float64, bool) {
	switch {
	case dtype == "auto", dtype == "bfloat16", dtype == "float16", dtype == "half", dtype == "bf16":
		return 2, true
	case strings.HasPrefix(dtype, "fp8"), dtype == "int8_per_token_head", dtype == "fp8_per_token_head":
		return 1, true
	case dtype == "nvfp4":
		return 0.5625, true // 4-bit values plus one FP8 scale per 16
	case strings.HasPrefix(dtype, "turboquant"):
		return 0.5, true
	}
	return 0, false
}

// nonDefaultLog renders the modelled flags that were set as vLLM's
// "non-default args: {…}" line does (log_non_default_args prints the dict
// of EngineArgs fields with str(): 'kv_cache_dtype': 'fp8',
// 'max_num_seqs': 64, 'speculative_config': {'method': 'dflash', …}), so a
// reader of the real line reads the simulator's; the API key is '***' as
// redact_sensitive_args writes it.
func (c *Config) nonDefaultLog() []string {
	out := make([]string, 0, len(c.NonDefault))
	for _, f := range c.NonDefault {
		name, value, _ := strings.Cut(strings.TrimPrefix(f, "--"), " ")
		key := strings.ReplaceAll(name, "-", "_")
		if key == "api_key" {
			value = "'***'"
		} else {
			value = pyRepr(value)
		}
		out = append(out, "'"+key+"': "+value)
	}
	return out
}

// pyRepr renders a flag's value as Python's repr of the parsed value: a
// number or a bool as itself, a JSON object as a dict, anything else as a
// quoted string.
func pyRepr(v string) string {
	if v == "true" || v == "false" {
		return strings.ToUpper(v[:1]) + v[1:]
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return v
	}
	var obj any
	if strings.HasPrefix(v, "{") && json.Unmarshal([]byte(v), &obj) == nil {
		return pyValue(obj)
	}
	return "'" + v + "'"
}

// pyValue is repr() of a decoded JSON value.
func pyValue(v any) string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = "'" + k + "': " + pyValue(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case string:
		return "'" + x + "'"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case nil:
		return "None"
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// SlowBand is --sim-slow-at-concurrency LO[-HI]:F: decode steps take F
// times longer while the running batch holds LO to HI requests. It stands in
// for a server whose speed is not monotone in concurrency (a kernel or
// CUDA-graph size that is slow at one batch size), so that an SLO search
// meets a pass above a failure (docs/method.md#search).
type SlowBand struct {
	Lo, Hi int
	Factor float64
}

// applies reports whether a batch of n running requests is in the band.
func (b SlowBand) applies(n int) bool { return b.Factor > 0 && n >= b.Lo && n <= b.Hi }

// parseSlowBand reads "8:3" (exactly 8 running) or "8-12:3" (8 to 12).
func parseSlowBand(v string) (SlowBand, error) {
	bad := fmt.Errorf("want N:F or LO-HI:F with 1 ≤ LO ≤ HI and a factor F > 0, such as 8:3 or 8-12:3, got %q", v)
	band, factor, ok := strings.Cut(v, ":")
	if !ok {
		return SlowBand{}, bad
	}
	f, err := strconv.ParseFloat(factor, 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) {
		return SlowBand{}, bad
	}
	loS, hiS, isRange := strings.Cut(band, "-")
	lo, err1 := strconv.Atoi(loS)
	hi, err2 := lo, error(nil)
	if isRange {
		hi, err2 = strconv.Atoi(hiS)
	}
	if err1 != nil || err2 != nil || lo < 1 || hi < lo {
		return SlowBand{}, bad
	}
	return SlowBand{Lo: lo, Hi: hi, Factor: f}, nil
}
