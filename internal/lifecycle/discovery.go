package lifecycle

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// KV is the KV cache capacity discovery found
// (docs/method.md#kv-capacity): Tokens in all (0 when unknown), from Source
// (vocab.KVSource*), read as Read says (the engine's rule and figures),
// with a Warning when the figure is doubtful or missing;
// Engines is the data-parallel engines it is split over, Slots the slots
// with KV of their own (Engine.KVSlots: llama-server's; 0 for one pool).
type KV struct {
	Tokens int64
	Source string
	Read   engine.KVRead
	// Warning is warning.KVUnknown without a capacity, warning.KVDoubtful
	// with one the engine doubts; the zero Warning when there is none.
	Warning warning.Warning
	Engines int
	Slots   int
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
	kv.Tokens, facts.KVCacheSource, kv.Warning, kv.Read = s.discoverKVCapacity(ctx, srv)
	kv.Source = facts.KVCacheSource
	kv.Engines = s.kvEngines(ctx, srv)
	facts.KVCacheTokens = kv.Tokens
	if kv.Engines > 1 {
		facts.KVCacheEngines = kv.Engines
	}
	if kv.Tokens > 0 && kv.Source != vocab.KVSourceSpec {
		kv.Slots = s.Client.engine.KVSlots(ctx, s.Client, s.logPath())
		facts.KVCacheSlots = kv.Slots
	}
	return kv
}

// discoverKVCapacity is the one place that decides the server's KV cache
// capacity in tokens and where it came from (docs/method.md#kv-capacity):
// the spec's kv_cache_tokens ("spec": a user who knows better says so),
// else what the server's engine states (Engine.KVCapacity: vLLM's
// cache config metric and log lines, SGLang's /server_info, gauge and
// log lines), else unknown with a warning: warning.KVUnknown, or
// warning.KVDoubtful about the source of a capacity the engine states but
// doubts (no code: none). read says how the engine read it.
func (s *Server) discoverKVCapacity(ctx context.Context, srv *spec.Server) (tokens int64, source string, warned warning.Warning, read engine.KVRead) {
	if kv := srv.KVCacheTokens; kv != nil && *kv > 0 {
		return *kv, vocab.KVSourceSpec, warning.Warning{}, engine.KVRead{}
	}
	dp := 1
	if d := srv.DataParallelSize; d != nil {
		dp = *d
	}
	tokens, source, text, read := s.Client.engine.KVCapacity(ctx, s.Client, s.logPath(), dp)
	switch {
	case text == "":
	case tokens == 0:
		warned = warning.New(warning.KVUnknown, text, "", nil)
	default:
		warned = warning.New(warning.KVDoubtful, text, "", nil).About(source)
	}
	return tokens, source, warned, read
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
// data_parallel_size, else the engines the KV figures of /metrics have a series
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
// size, prefix caching, speculative method and running limit
// (Engine.StatedFacts: vLLM's cache config metric and startup log,
// SGLang's /server_info and log). A stated fact replaces the
// spec's in results.json, and so in conditions' server.*; every
// disagreement with the spec is one of the warnings, and each fact the spec
// asked that the server did not state is unstated (unstatedFacts).
// maxModelLen is the one GET /v1/models listed (0: none).
func (s *Server) ReadStatedFacts(ctx context.Context, srv *spec.Server, facts *result.Server, maxModelLen int) (warnings []warning.Warning, unstated []UnstatedFact) {
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
	if n := srv.LaunchMaxNumSeqs(); n != nil {
		asked.MaxNumSeqs = *n
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
	stateFacts(s.Client.engine.StatedFacts(ctx, s.Client, s.logPath()), facts, stated)
	if len(stated) > 0 {
		facts.Stated = stated
	}
	return factDisagreements(asked, facts, maxModelLen), unstatedFacts(asked, facts)
}

// stateFacts records in facts, and names in stated with where it was read,
// each fact the engine says its server states (engine.Facts).
func stateFacts(f engine.Facts, facts *result.Server, stated map[string]string) {
	for fact, from := range f.Stated {
		switch fact {
		case "kv_cache_dtype":
			facts.KVCacheDtype = f.KVCacheDtype
		case "block_size":
			facts.BlockSize = f.BlockSize
		case "enable_prefix_caching":
			facts.PrefixCaching = f.PrefixCaching
		case "speculative":
			facts.Speculative = f.Speculative
		case "max_num_seqs":
			facts.MaxNumSeqs = f.MaxNumSeqs
		default:
			continue
		}
		stated[fact] = from
	}
}

// UnstatedFact is a fact the spec asked (Fact: kv_cache_dtype,
// speculative) that the server did not state, with the spec's value
// Asked: results.json keeps it, conditions' server.* cannot read it
// (docs/method.md#server-facts), and the console says so
// (event.ServerFact).
type UnstatedFact struct{ Fact, Asked string }

// unstatedFacts are the facts the spec asked that the server did not
// state (UnstatedFact).
func unstatedFacts(asked *result.ServerAsked, s *result.Server) []UnstatedFact {
	var out []UnstatedFact
	for _, f := range []UnstatedFact{{"kv_cache_dtype", asked.KVCacheDtype}, {"speculative", asked.Speculative}} {
		if _, ok := s.Stated[f.Fact]; !ok && f.Asked != "" {
			out = append(out, f)
		}
	}
	return out
}

// speculativeUnnamed is the asked method of a speculative block that names
// none (vLLM infers it from the draft model): any method agrees with it.
const speculativeUnnamed = "on"

// factDisagreements are the warnings for each fact the spec asked and the
// server states otherwise ("spec says kv_cache_dtype fp8; the server
// reports auto (WHERE)", where is where the engine read it).
func factDisagreements(asked *result.ServerAsked, s *result.Server, maxModelLen int) []warning.Warning {
	var out []warning.Warning
	say := func(fact, want, got string, figures map[string]float64) {
		out = append(out, warning.New(warning.FactDisagrees, fmt.Sprintf("spec says %s %s; the server reports %s (%s)", fact, want, got, s.Stated[fact]), "", figures).About(fact))
	}
	counts := func(asked, stated int) map[string]float64 {
		return map[string]float64{warning.FigAsked: float64(asked), warning.FigStated: float64(stated)}
	}
	if _, ok := s.Stated["kv_cache_dtype"]; ok && asked.KVCacheDtype != "" && asked.KVCacheDtype != s.KVCacheDtype {
		say("kv_cache_dtype", asked.KVCacheDtype, s.KVCacheDtype, nil)
	}
	if _, ok := s.Stated["enable_prefix_caching"]; ok && asked.PrefixCaching != nil && *asked.PrefixCaching != *s.PrefixCaching {
		say("enable_prefix_caching", strconv.FormatBool(*asked.PrefixCaching), strconv.FormatBool(*s.PrefixCaching), nil)
	}
	if asked.MaxModelLen > 0 && maxModelLen > 0 && asked.MaxModelLen != maxModelLen {
		say("max_model_len", strconv.Itoa(asked.MaxModelLen), strconv.Itoa(maxModelLen), counts(asked.MaxModelLen, maxModelLen))
	}
	if _, ok := s.Stated["max_num_seqs"]; ok && asked.MaxNumSeqs > 0 && asked.MaxNumSeqs != s.MaxNumSeqs {
		say("max_num_seqs", strconv.Itoa(asked.MaxNumSeqs), strconv.Itoa(s.MaxNumSeqs), counts(asked.MaxNumSeqs, s.MaxNumSeqs))
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
		say("speculative", want, got, nil)
	}
	return out
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
