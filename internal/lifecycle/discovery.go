package lifecycle

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
)

// KV is the KV cache capacity discovery found
// (docs/method.md#kv-capacity): Tokens in all (0 when unknown), from Source
// (result.KVSource*), read as Detail says when it came from the log
// ("engine 0: …"), with a Warning when the figure is doubtful or missing;
// Engines is the data-parallel engines it is split over.
type KV struct {
	Tokens                  int64
	Source, Detail, Warning string
	Engines                 int
}

// Discover records in facts what a ready server says about where it
// runs: its endpoint, version (its engine's: vLLM's GET /version, SGLang's
// /server_info), GPUs (nvidia-smi) and KV capacity (discoverKVCapacity,
// kvEngines), which it also returns.
func (s *Server) Discover(ctx context.Context, srv *spec.Server, facts *result.Server) KV {
	facts.Endpoint = s.Client.base
	facts.Version, s.versionFrom = s.Client.version(ctx)
	for _, g := range gpus(ctx) {
		facts.GPUs = append(facts.GPUs, result.GPU{Index: g.Index, Name: g.Name, MemoryMiB: g.MemoryMiB})
	}
	var kv KV
	kv.Tokens, facts.KVCacheSource, kv.Warning, kv.Detail = s.discoverKVCapacity(ctx, srv)
	kv.Source = facts.KVCacheSource
	kv.Engines = s.kvEngines(ctx, srv)
	facts.KVCacheTokens = kv.Tokens
	if kv.Engines > 1 {
		facts.KVCacheEngines = kv.Engines
	}
	return kv
}

// discoverKVCapacity is the one place that decides the server's KV cache
// capacity in tokens and where it came from (docs/method.md#kv-capacity):
// the spec's kv_cache_tokens ("spec": a user who knows better says so),
// else what the server's engine states (Engine.KVCapacity: vLLM's
// vllm:cache_config_info and log lines, SGLang's /server_info, gauge and
// log lines), else unknown with a warning. detail says how a capacity read
// from the log was read.
func (s *Server) discoverKVCapacity(ctx context.Context, srv *spec.Server) (tokens int64, source, warning, detail string) {
	if kv := srv.KVCacheTokens; kv != nil && *kv > 0 {
		return *kv, result.KVSourceSpec, "", ""
	}
	dp := 1
	if d := srv.DataParallelSize; d != nil {
		dp = *d
	}
	return s.Client.engine.KVCapacity(ctx, s.Client, s.logPath(), dp)
}

// logPath is a launched server's log, "" for an endpoint.
func (s *Server) logPath() string {
	if s.proc == nil {
		return ""
	}
	return s.proc.logPath
}

// kvEngines is the number of data-parallel engines the KV capacity is
// split over (docs/method.md#over-capacity): the spec's
// data_parallel_size, else the engines vllm:cache_config_info has a series
// for, else one.
func (s *Server) kvEngines(ctx context.Context, srv *spec.Server) int {
	if dp := srv.DataParallelSize; dp != nil && *dp > 1 {
		return *dp
	}
	if snap, _, err := s.Client.Metrics(ctx); err == nil && snap.KV.Engines > 1 {
		return snap.KV.Engines
	}
	return 1
}

// simulatorVersionSuffix ends the version slogate's simulator answers on
// GET /version ("0.11.0-slogate-sim", sim/profile.go): a server that says
// so is simulated, also when it is reached through -endpoint. (lifecycle
// does not import the simulator, so the suffix is written here too.)
const simulatorVersionSuffix = "-slogate-sim"

// ReadStatedFacts records in facts what the server states about itself beside what
// the spec asked (docs/method.md#server-facts): the version (the
// simulator's ends in simulatorVersionSuffix), max_model_len (GET
// /v1/models), and what its engine states of the KV cache dtype, block
// size, prefix caching and speculative method (Engine.StatedFacts: vLLM's
// vllm:cache_config_info and startup log, SGLang's /server_info). A stated fact replaces the
// spec's in results.json, and so in conditions' server.*; every
// disagreement with the spec is one of the warnings, and each fact the spec
// asked that the server did not state one of the notes (unstatedFacts).
// maxModelLen is the one GET /v1/models listed (0: none).
func (s *Server) ReadStatedFacts(ctx context.Context, srv *spec.Server, facts *result.Server, maxModelLen int) (warnings, notes []string) {
	asked := &result.ServerAsked{KVCacheDtype: srv.KVCacheDtype, PrefixCaching: srv.EnablePrefixCaching}
	if srv.Speculative != nil {
		asked.Speculative = srv.SpeculativeMethod() // in the engine's spelling
		if asked.Speculative == "" {
			asked.Speculative = speculativeUnnamed
		}
	}
	if srv.MaxModelLen != nil {
		asked.MaxModelLen = *srv.MaxModelLen
	}
	facts.Asked = asked
	stated := map[string]string{}
	if facts.Version != "" {
		stated["version"] = s.versionFrom
		if s.versionFrom == "" { // a version set without Discover
			stated["version"] = "GET /version"
		}
		if strings.HasSuffix(facts.Version, simulatorVersionSuffix) {
			facts.Simulated = true
		}
	}
	if maxModelLen > 0 {
		stated["max_model_len"] = "GET /v1/models"
	}
	s.Client.engine.StatedFacts(ctx, s.Client, s.logPath(), facts, stated)
	if len(stated) > 0 {
		facts.Stated = stated
	}
	return factDisagreements(asked, facts, maxModelLen), unstatedFacts(asked, facts)
}

// unstatedFacts are the facts the spec asked that the server did not
// state, as the console shows them ("kv_cache_dtype fp8 (from the spec;
// the server did not say)"): results.json keeps the spec's value, and
// conditions' server.* cannot read it (docs/method.md#server-facts).
func unstatedFacts(asked *result.ServerAsked, s *result.Server) []string {
	var out []string
	for _, f := range []struct{ fact, asked string }{{"kv_cache_dtype", asked.KVCacheDtype}, {"speculative", asked.Speculative}} {
		if _, ok := s.Stated[f.fact]; !ok && f.asked != "" {
			out = append(out, fmt.Sprintf("%s %s (from the spec; the server did not say)", f.fact, f.asked))
		}
	}
	return out
}

// speculativeUnnamed is the asked method of a speculative block that names
// none (vLLM infers it from the draft model): any method agrees with it.
const speculativeUnnamed = "on"

// factDisagreements are the warnings for each fact the spec asked and the
// server states otherwise ("spec says kv_cache_dtype fp8; the server
// reports auto (vllm:cache_config_info)").
func factDisagreements(asked *result.ServerAsked, s *result.Server, maxModelLen int) []string {
	var out []string
	say := func(fact, want, got string) {
		out = append(out, fmt.Sprintf("spec says %s %s; the server reports %s (%s)", fact, want, got, s.Stated[fact]))
	}
	if _, ok := s.Stated["kv_cache_dtype"]; ok && asked.KVCacheDtype != "" && asked.KVCacheDtype != s.KVCacheDtype {
		say("kv_cache_dtype", asked.KVCacheDtype, s.KVCacheDtype)
	}
	if _, ok := s.Stated["enable_prefix_caching"]; ok && asked.PrefixCaching != nil && *asked.PrefixCaching != *s.PrefixCaching {
		say("enable_prefix_caching", strconv.FormatBool(*asked.PrefixCaching), strconv.FormatBool(*s.PrefixCaching))
	}
	if asked.MaxModelLen > 0 && maxModelLen > 0 && asked.MaxModelLen != maxModelLen {
		say("max_model_len", strconv.Itoa(asked.MaxModelLen), strconv.Itoa(maxModelLen))
	}
	unnamedAgrees := asked.Speculative == speculativeUnnamed && s.Speculative != ""
	if _, ok := s.Stated["speculative"]; ok && asked.Speculative != s.Speculative && !unnamedAgrees {
		want, got := asked.Speculative, s.Speculative
		if want == "" {
			want = "none"
		}
		if got == "" {
			got = "none"
		}
		say("speculative", want, got)
	}
	return out
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
	tokens   int64    // summed over engines; 0: no line
	detail   string   // how the figure was read, for the console and the warning
	warnings []string // lines that disagree (vLLM #40691)
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
	var out kvLogReading
	var how []string
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
			how = append(how, fmt.Sprintf("engine %d: concurrency %gx × %s", i, e.concurrency, thousands(e.perRequest)))
		case e.size > 0:
			n = e.size
			how = append(how, fmt.Sprintf("engine %d: GPU KV cache size %s", i, thousands(e.size)))
		case fromConc > 0:
			n = fromConc
			how = append(how, fmt.Sprintf("engine %d: concurrency %gx × %s (no size line)", i, e.concurrency, thousands(e.perRequest)))
		default:
			continue
		}
		if out.tokens > math.MaxInt64-n {
			return kvLogReading{}
		}
		out.tokens += n
		found++
	}
	out.detail = strings.Join(how, "; ")
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
		out.detail += fmt.Sprintf("; × %d/%d engines (assumed alike)", dp, found)
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

// gpus lists the GPUs with nvidia-smi when it is installed.
func gpus(ctx context.Context) []gpuInfo {
	path, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--query-gpu=index,name,memory.total", "--format=csv,noheader,nounits").Output()
	if err != nil {
		return nil
	}
	return parseGPUs(string(out))
}

type gpuInfo struct {
	Index     int
	Name      string
	MemoryMiB int
}

func parseGPUs(out string) []gpuInfo {
	var gs []gpuInfo
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, ",")
		if len(f) != 3 {
			continue
		}
		idx, err1 := strconv.Atoi(strings.TrimSpace(f[0]))
		mem, err2 := strconv.Atoi(strings.TrimSpace(f[2]))
		if err1 != nil || err2 != nil {
			continue
		}
		gs = append(gs, gpuInfo{idx, strings.TrimSpace(f[1]), mem})
	}
	return gs
}
