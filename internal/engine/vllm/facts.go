package vllm

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/promread"
	"github.com/slogate/slogate/internal/vocab"
)

// SimFlags: the simulator imitates vLLM by default.
func (Engine) SimFlags() []string { return nil }

// ParseMetrics reads vLLM's metric names (ParseMetrics).
func (Engine) ParseMetrics(r io.Reader, model string) (promread.Snapshot, error) {
	return ParseMetrics(r, model)
}

// Version is GET /version.
func (Engine) Version(ctx context.Context, c engine.Conn) (string, string) {
	code, b, err := c.Do(ctx, http.MethodGet, "/version", nil)
	if err != nil || code != http.StatusOK {
		return "", ""
	}
	var v struct {
		Version string `json:"version"`
	}
	json.Unmarshal(b, &v)
	return v.Version, "GET /version"
}

// KVCapacity is, the first that gives a value:
//
//  1. vllm:cache_config_info's kv_cache_size_tokens, one engine's capacity,
//     summed over the engines ("metrics"; docs/vllm.md#cache-config-info);
//  2. the KV lines of a launched server's log ("GPU KV cache size",
//     "Maximum concurrency"), per engine, summed ("log", with a warning
//     when an engine's two lines disagree; docs/vllm.md#kv-cache-log-lines);
//  3. num_gpu_blocks × block_size, taken once because num_gpu_blocks is
//     already the total over engines ("metrics-estimate"), with a warning:
//     on hybrid models block_size is not the token unit
//     (docs/vllm.md#hybrid-models);
//  4. unknown: 0, "" and a warning.
func (Engine) KVCapacity(ctx context.Context, c engine.Conn, logPath string, dp int) (tokens int64, source, warning string, read engine.KVRead) {
	snap, _, err := c.Metrics(ctx)
	if err == nil && snap.KV.SizeTokens > 0 {
		return snap.KV.SizeTokens, vocab.KVSourceMetrics, "", engine.KVRead{}
	}
	if logPath != "" {
		if lr := kvFromLog(logPath, dp); lr.tokens > 0 {
			return lr.tokens, vocab.KVSourceLog, strings.Join(lr.warnings, "; "), lr.read
		}
	}
	if n := snap.KV.BlocksTimesBlockSize(); err == nil && n > 0 {
		return n, vocab.KVSourceMetricsEstimate, fmt.Sprintf("KV cache capacity %d tokens is estimated as vllm:cache_config_info's num_gpu_blocks %d × block_size %d "+
			"(the server reports no kv_cache_size_tokens label and logs no \"GPU KV cache size\" line): this is wrong for hybrid models "+
			"(Mamba or linear-attention layers, several KV cache groups), whose block_size is not the unit of a token capacity; "+
			"set kv_cache_tokens in the spec if you know the capacity (docs/vllm.md#hybrid-models)", n, snap.KV.NumGPUBlocks, snap.KV.BlockSize), engine.KVRead{}
	}
	return 0, "", "KV cache capacity unknown (no kv_cache_tokens in the spec, no vllm:cache_config_info in /metrics, no \"GPU KV cache size\" log line): no cell is skipped as over capacity", engine.KVRead{}
}

// KVSlots: every request shares the KV pool.
func (Engine) KVSlots(context.Context, engine.Conn, string) int { return 0 }

// StatedFacts reads the KV cache dtype, block size and prefix caching from
// vllm:cache_config_info, and the speculative method from the startup
// log's "non-default args" line of a launched server: vLLM exposes no
// config metric for it (docs/vllm.md#server-facts).
func (Engine) StatedFacts(ctx context.Context, c engine.Conn, logPath string) engine.Facts {
	var facts engine.Facts
	if snap, _, err := c.Metrics(ctx); err == nil {
		const from = "vllm:cache_config_info"
		if d := snap.KV.CacheDtype; d != "" {
			facts.KVCacheDtype = d
			facts.State("kv_cache_dtype", from)
		}
		if snap.KV.BlockSize > 0 {
			facts.BlockSize = snap.KV.BlockSize
			facts.State("block_size", from)
		}
		if p := snap.KV.PrefixCaching; p != "" {
			on := p == "True"
			facts.PrefixCaching = &on
			facts.State("enable_prefix_caching", from)
		}
	}
	if logPath != "" {
		if method, ok := speculativeFromLog(logPath); ok {
			facts.Speculative = method
			facts.State("speculative", "server.log (non-default args)")
		}
	}
	return facts
}

// TokenizeBody is vLLM's POST /tokenize of text: {"model", "prompt",
// "add_special_tokens": false}.
func (Engine) TokenizeBody(model, text string) any {
	return map[string]any{"model": model, "prompt": text, "add_special_tokens": false}
}

// TokenizeChatBody is vLLM's POST /tokenize of chat messages: {"model",
// "messages", "add_generation_prompt"[, "chat_template_kwargs"]}.
func (Engine) TokenizeChatBody(model string, messages any, addGenerationPrompt bool, chatTemplateKwargs map[string]any) any {
	req := map[string]any{"model": model, "messages": messages, "add_generation_prompt": addGenerationPrompt}
	if chatTemplateKwargs != nil {
		req["chat_template_kwargs"] = chatTemplateKwargs
	}
	return req
}

// TokenizeStatesContext: vLLM's /tokenize answers the server's max_model_len.
func (Engine) TokenizeStatesContext() bool { return true }

// ChatPromptTokens: vLLM's /tokenize always takes messages.
func (Engine) ChatPromptTokens(context.Context, engine.Conn, any, map[string]any) (int, bool, error) {
	return 0, false, nil
}

// Status: vLLM's deferred requests wait on a LoRA budget or a KV
// transfer, not for capacity (vLLM PR #38435; docs/vllm.md#metrics).
func (Engine) Status() *engine.Status { return status }

var status = &engine.Status{
	Deferred:    "vllm:num_requests_waiting_by_reason{reason=\"deferred\"}: a LoRA budget or a KV transfer",
	Preemptions: "vllm:num_preemptions_total",
	KVUsage:     "vllm:kv_cache_usage_perc",
	Asleep:      "vllm:engine_sleep_state{sleep_state=\"awake\"} is 0: vLLM's sleep mode (POST /sleep) freed the GPU, /health still answers 200 and no request is served until POST /wake_up (docs/vllm.md#metrics)",
	KVSuspect: func(source string) string {
		switch source {
		case vocab.KVSourceMetrics:
			return "vllm:cache_config_info's kv_cache_size_tokens is suspect (or the model holds more per request than its tokens, such as a hybrid model's state blocks)"
		case vocab.KVSourceLog:
			return "the \"GPU KV cache size\" log line is suspect (builds before about April 2026 printed a wrong figure for hybrid models: docs/vllm.md#kv-cache-log-lines)"
		case vocab.KVSourceMetricsEstimate:
			return "num_gpu_blocks × block_size is suspect (wrong for hybrid models: docs/vllm.md#hybrid-models); set kv_cache_tokens in the spec"
		}
		return ""
	},
}

// specDecodeSamplingMessage is the start of vLLM's answer to a request
// whose min_p or logit_bias its speculative decoding cannot take
// (SamplingParams._validate_spec_decode, vLLM PR #31982).
const specDecodeSamplingMessage = "The min_p and logit_bias sampling parameters are not yet supported with speculative decoding"

// SamplingRejected reads vLLM's refusal of min_p or logit_bias under
// speculative decoding. The spec cannot send min_p or logit_bias with a
// speculative block (spec load refuses it), so the min_p the server
// objects to is the model's generation_config.json default
// (docs/vllm.md#sampling-defaults), or the server speculates without the
// spec saying so.
func (Engine) SamplingRejected(msg string, s engine.Sampling) (why, remedy string, ok bool) {
	if !strings.Contains(msg, specDecodeSamplingMessage) {
		return "", "", false
	}
	// min_p counts as sent when vLLM would reject it: above _SAMPLING_EPS
	// (an explicit min_p = 0 pins it and is never the cause) at a
	// temperature that is not greedy (below 1e-5 vLLM resets min_p first).
	sentMinP := s.MinP > 1e-5
	if s.Temperature != nil && *s.Temperature < 1e-5 {
		sentMinP = false
	}
	switch {
	case !s.Speculative && (sentMinP || s.LogitBias):
		why = "the spec sends min_p or logit_bias, and the server runs speculative decoding although the server block has no speculative block"
		remedy = "remove min_p and logit_bias from workload.sampling, or serve without speculative decoding"
	default:
		why = "the spec sends no min_p above 1e-5 and no logit_bias, so the min_p comes from the server's defaults: the model's generation_config.json or the server's --override-generation-config, which vLLM applies to every request that leaves min_p out"
		remedy = "add sampling = { min_p = 0 } to the workload block (or start the server with --generation-config vllm and no min_p in --override-generation-config)"
	}
	return why + " (docs/vllm.md#sampling-defaults)", remedy, true
}

// SpeculativeIdle: vLLM counts drafts in vllm:spec_decode_num_drafts_total
// and switches speculation off per request for some sampling settings
// (docs/method.md#workload).
func (Engine) SpeculativeIdle() string {
	return "speculative decoding did not run in this cell (vllm:spec_decode_num_drafts_total did not move): check the server's --speculative-config and its log"
}

// nonDefaultArgsRe finds vLLM's startup line "non-default args: {…}"
// (log_non_default_args, vllm/entrypoints/utils.py), and specMethodRe the
// method in its 'speculative_config' value: a dict ({'method': 'dflash', …},
// possibly with nested dicts) or the JSON string given on the command line
// ('{"method": "dflash", …}').
var (
	nonDefaultArgsRe = regexp.MustCompile(`non-default args: (\{.*\})`)
	specMethodRe     = regexp.MustCompile(`['"]method['"]: ?['"]([^'"]*)['"]`)
)

// specConfigKey starts the speculative_config entry of the args dict.
const specConfigKey = "'speculative_config': "

// speculativeFromLog reads the speculative method from a server log's
// non-default args line: the method of its speculative_config, "" when the
// line has no speculative_config (or it is None: the server runs without),
// ok false when there is no such line, or its speculative_config cannot be
// read or names no method (vLLM then infers it from the draft model).
func speculativeFromLog(path string) (method string, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		m := nonDefaultArgsRe.FindSubmatch(sc.Bytes())
		if m == nil {
			continue
		}
		args := string(m[1])
		i := strings.Index(args, specConfigKey)
		if i < 0 {
			return "", true
		}
		rest := args[i+len(specConfigKey):]
		if strings.HasPrefix(rest, "None") {
			return "", true
		}
		v, read := pythonValue(rest)
		if !read {
			return "", false
		}
		if mm := specMethodRe.FindStringSubmatch(v); mm != nil {
			return mm[1], true
		}
		return "", false
	}
	return "", false
}

// pythonValue is the dict or string literal at the start of s as Python's
// repr writes it: a dict up to its matching brace (nested dicts and quoted
// braces included), a quoted string up to its closing quote; false when s
// starts with neither or the value does not end. Hand-written because the
// line is a Python repr, not JSON, and only the extent of one value is
// needed.
func pythonValue(s string) (string, bool) {
	if s == "" || (s[0] != '{' && s[0] != '\'' && s[0] != '"') {
		return "", false
	}
	depth := 0
	var quote byte // the open string's quote, 0 outside strings
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
			if depth == 0 {
				return s[:i+1], true
			}
		case quote != 0:
		case c == '\'' || c == '"':
			quote = c
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return s[:i+1], true
			}
		}
	}
	return "", false
}

// The KV capacity lines vLLM prints at startup
// (docs/vllm.md#kv-cache-log-lines), matched anywhere in a line so that any
// prefix, timestamp or elided part ("...") before them does not matter:
// "GPU KV cache size: 425,424 tokens" (other platforms write CPU, XPU, …)
// and "Maximum concurrency for 65,536 tokens per request: 6.49x", on one
// line or two; numbers with or without thousands separators.
var (
	kvSizeRe        = regexp.MustCompile(`\b[A-Za-z]+ KV cache size: ([0-9][0-9,_]*) tokens`)
	kvConcurrencyRe = regexp.MustCompile(`Maximum concurrency for ([0-9][0-9,_]*) tokens per request: ([0-9]+(?:\.[0-9]+)?)x`)
	// kvEngineRe names the engine a line belongs to: (EngineCore_DP1
	// pid=N) is engine 1; (EngineCore pid=N) (vLLM 0.24), another process
	// or no prefix is engine 0.
	kvEngineRe = regexp.MustCompile(`\(EngineCore(?:_DP([0-9]+))?[ )]`)
)

// kvLogDisagreement is how far (relative) the two KV lines of an engine may
// disagree before the concurrency line wins: vLLM prints the concurrency
// with two decimals, which at a concurrency of at least 1 is within 0.5 %.
// Below that the rounding alone can exceed 1 % (0.31x stands for anything
// from 0.305 to 0.315), so the lines also disagree only when size ÷ length
// is outside the printed figure's rounding interval, kvLogRounding.
const (
	kvLogDisagreement = 0.01
	kvLogRounding     = 0.005
)

// kvLinesDisagree says whether an engine's size line and concurrency line
// tell different capacities: beyond the concurrency's rounding interval
// and by more than kvLogDisagreement of concurrency × length.
func kvLinesDisagree(e *engineKVLines, fromConc int64) bool {
	outsideRounding := math.Abs(float64(e.size)/float64(e.perRequest)-e.concurrency) > kvLogRounding
	return outsideRounding && math.Abs(float64(e.size-fromConc)) > kvLogDisagreement*float64(fromConc)
}

// kvLogReading is what a server log says about the KV capacity.
type kvLogReading struct {
	tokens   int64         // summed over engines; 0: no line
	read     engine.KVRead // how the figure was read, for the console
	warnings []string      // lines that disagree (vLLM #40691)
}

// engineKVLines are one engine's last KV lines.
type engineKVLines struct {
	size        int64   // "GPU KV cache size" tokens; 0: none
	concurrency float64 // "Maximum concurrency" factor; 0: none
	perRequest  int64   // its "for N tokens per request"
}

// kvFromLog reads the KV capacity from a server log: each engine's capacity
// from its last KV lines, summed over the engines
// (docs/vllm.md#kv-cache-log-lines). An engine with both lines whose
// figures disagree by more than kvLogDisagreement takes concurrency × its
// length, with a warning naming both numbers: in vLLM 0.19 the size line of
// a hybrid model divided the blocks by the number of KV-cache groups
// (vLLM #40691), and current builds print int(concurrency × max_model_len)
// as the size. An engine with only the concurrency line takes concurrency ×
// its length too. When the log has lines for fewer engines than the
// data_parallel_size dp (lines without an engine prefix all fold into
// engine 0), the engines are taken as alike: the mean of those found × dp,
// with a warning saying so.
func kvFromLog(path string, dp int) kvLogReading {
	f, err := os.Open(path)
	if err != nil {
		return kvLogReading{}
	}
	defer f.Close()
	return parseKVLog(f, dp)
}

func parseKVLog(r io.Reader, dp int) kvLogReading {
	engines := map[int]*engineKVLines{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Bytes()
		size := kvSizeRe.FindSubmatch(line)
		conc := kvConcurrencyRe.FindSubmatch(line)
		if size == nil && conc == nil {
			continue
		}
		idx := 0
		if m := kvEngineRe.FindSubmatch(line); m != nil && len(m[1]) > 0 {
			idx, _ = strconv.Atoi(string(m[1]))
		}
		e := engines[idx]
		if e == nil {
			e = &engineKVLines{}
			engines[idx] = e
		}
		if size != nil {
			if v := logInt(size[1]); v > 0 {
				e.size = v
			}
		}
		if conc != nil {
			n := logInt(conc[1])
			x, err := strconv.ParseFloat(string(conc[2]), 64)
			if err == nil && n > 0 && x > 0 {
				e.concurrency, e.perRequest = x, n
			}
		}
	}
	idxs := make([]int, 0, len(engines))
	for i := range engines {
		idxs = append(idxs, i)
	}
	sort.Ints(idxs)
	out := kvLogReading{read: engine.KVRead{Rule: engine.KVLogParts}}
	found := 0 // engines with a figure
	for _, i := range idxs {
		e := engines[i]
		fromConc := int64(e.concurrency * float64(e.perRequest))
		var n int64
		switch {
		case e.size > 0 && fromConc > 0 && kvLinesDisagree(e, fromConc):
			n = fromConc
			out.warnings = append(out.warnings, fmt.Sprintf(
				"engine %d's log lines disagree: \"GPU KV cache size: %s tokens\" but \"Maximum concurrency for %s tokens per request: %sx\" gives %s tokens; using %s "+
					"(vLLM #40691: around vLLM 0.19 the size line of a hybrid model divided the blocks by the number of KV cache groups; current builds print concurrency × max_model_len as the size). "+
					"Set kv_cache_tokens in the spec if you know the capacity (docs/vllm.md#kv-cache-log-lines)",
				i, thousands(e.size), thousands(e.perRequest), strconv.FormatFloat(e.concurrency, 'f', -1, 64), thousands(fromConc), thousands(fromConc)))
			out.read.Parts = append(out.read.Parts, engine.KVPart{Rule: engine.KVConcurrency, Index: i, Concurrency: e.concurrency, PerRequest: e.perRequest})
		case e.size > 0:
			n = e.size
			out.read.Parts = append(out.read.Parts, engine.KVPart{Rule: engine.KVSizeLine, Index: i, Tokens: e.size})
		case fromConc > 0:
			n = fromConc
			out.read.Parts = append(out.read.Parts, engine.KVPart{Rule: engine.KVConcurrencyNoSize, Index: i, Concurrency: e.concurrency, PerRequest: e.perRequest})
		default:
			continue
		}
		if out.tokens > math.MaxInt64-n {
			return kvLogReading{}
		}
		out.tokens += n
		found++
	}
	if found > 0 && found < dp {
		if out.tokens > math.MaxInt64/int64(dp) {
			return kvLogReading{}
		}
		found64 := int64(found)
		total := out.tokens * int64(dp) / found64
		out.warnings = append(out.warnings, fmt.Sprintf(
			"the server log has KV cache lines for %d of the %d data-parallel engines (data_parallel_size = %d; lines without an (EngineCore_DP<i>) prefix all read as engine 0): "+
				"assuming the engines are alike, %s tokens each (the mean of those found), %s in all; set kv_cache_tokens in the spec if you know the total (docs/vllm.md#kv-cache-log-lines)",
			found, dp, dp, thousands(out.tokens/found64), thousands(total)))
		out.read.Engines, out.read.Found = dp, found
		out.tokens = total
	}
	return out
}

// logInt parses a number as vLLM logs it: "425,424" or "425424".
func logInt(b []byte) int64 {
	v, err := strconv.ParseInt(strings.NewReplacer(",", "", "_", "").Replace(string(b)), 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// thousands writes n with thousands separators, as vLLM's log does.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
