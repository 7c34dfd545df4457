package spec

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"

	namesuggest "github.com/slogate/slogate/internal/suggest"
)

// Engines slogate launches (server { engine = "…" }). Each is one file set:
// spec/engine_NAME.go says how its launch is written, and lifecycle says
// how it is started, read and stopped.
const (
	EngineVLLM   = "vllm"
	EngineSGLang = "sglang"
	// DefaultEngine is the engine of a server that names none.
	DefaultEngine = EngineVLLM
)

// engineSyntax is how one engine's launch is written: the flags the typed
// server attributes render to and the values the engine takes. A third
// engine is one more value of this type in its own file, registered in
// engines.
type engineSyntax struct {
	// title is the engine's name as people write it ("vLLM").
	title string
	// command is the executable launched when the server sets none.
	command string
	// serveArgs renders the arguments after `COMMAND serve`: MODEL and the
	// flags, the API key's flag only when key is set, --host host, args last.
	serveArgs func(s *Server, key, host string) []string
	// kvCacheDtypes and attentionBackends are the values the engine takes
	// (nil: not checked); their source is cited in the warning.
	kvCacheDtypes, attentionBackends []string
	valuesSource                     string
	// otherSpellings are values another engine writes for one of this
	// engine's, by attribute: the warning of such a value names this
	// engine's spelling instead of the nearest string.
	otherSpellings map[string]map[string]spelling
	// unsupported names the typed attributes the engine has no flag for,
	// each with what to write instead.
	unsupported map[string]string
	// checkSpeculative reports what of the speculative block the engine
	// cannot take (nil: everything is passed through).
	checkSpeculative func(sp *Speculative, at hcl.Attributes, cfg hcl.Range) hcl.Diagnostics
	// maxNumSeqsFlags are the spellings of the engine's flag for the most
	// requests it runs at once, as args may write it.
	maxNumSeqsFlags []string
	// impliedMaxNumSeqs is the most requests the engine runs at once when
	// neither the attribute nor args set it, where the engine fixes it
	// (nil: the engine sizes it itself, unknown here).
	impliedMaxNumSeqs func(s *Server) *int
	// containerCommand are the words placed after the image when the
	// container block sets no command (nil: the image's entrypoint serves).
	containerCommand []string
	// apiKeyEnv is the variable the engine reads its API key from when no
	// flag gives it ("": it has none, so the key goes on the command line).
	apiKeyEnv string
	// docs is where docs/ describes the engine's flags.
	docs string
}

// spelling is one engine's value for what another engine spells
// otherwise: the value and where the two are said to be the same.
type spelling struct{ value, why string }

// engines holds every engine slogate launches, by the name a spec writes.
var engines = map[string]*engineSyntax{
	EngineVLLM:   vllmSyntax,
	EngineSGLang: sglangSyntax,
}

// EngineNames lists the engines a server may name, sorted.
func EngineNames() []string {
	names := make([]string, 0, len(engines))
	for n := range engines {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// EngineTitle is the engine's name as people write it ("vLLM", "SGLang"),
// or name itself for an engine slogate does not know.
func EngineTitle(name string) string {
	if e, ok := engines[name]; ok {
		return e.title
	}
	return name
}

// syntax is the server's engine (vLLM when unset or unknown: Load has
// already reported an unknown one).
func (s *Server) syntax() *engineSyntax {
	if e, ok := engines[s.Engine]; ok {
		return e
	}
	return vllmSyntax
}

// decodeEngine reads the server's engine attribute: one of EngineNames,
// else an error with the closest name.
func (l *loader) decodeEngine(at hcl.Attributes, s *Server) hcl.Diagnostics {
	v, ok, diags := l.str(at, "engine")
	if !ok {
		return diags
	}
	if _, known := engines[v]; known {
		s.Engine = v
		return diags
	}
	detail := fmt.Sprintf("slogate launches %s; %q is not one of them (docs/spec.md#engines).", quotedList(EngineNames()), v)
	if near := namesuggest.Closest(strings.ToLower(v), EngineNames()); near != "" {
		detail += fmt.Sprintf(" Did you mean %q?", near)
	}
	return append(diags, invalidCtx("Unknown engine", at["engine"].Expr.Range(), at["engine"].Range, detail))
}

// checkEngineValues warns about a kv_cache_dtype or attention_backend the
// server's engine does not list, and reports an attribute it has no flag
// for. It runs after every attribute is decoded.
func checkEngineValues(at hcl.Attributes, s *Server) hcl.Diagnostics {
	e := s.syntax()
	var diags hcl.Diagnostics
	for _, v := range []struct {
		name, value string
		known       []string
		flag        string
	}{
		{"kv_cache_dtype", s.KVCacheDtype, e.kvCacheDtypes, "--kv-cache-dtype"},
		{"attention_backend", s.AttentionBackend, e.attentionBackends, "--attention-backend"},
	} {
		a, set := at[v.name]
		if !set || v.value == "" || v.known == nil || slices.Contains(v.known, v.value) {
			continue
		}
		detail := fmt.Sprintf("%s's %s takes %s (%s); %q is not one of them, so %s may refuse to start. Newer builds add values: ignore this warning if yours knows it.",
			e.title, v.flag, strings.Join(v.known, ", "), e.valuesSource, v.value, e.title)
		if sp, ok := e.otherSpellings[v.name][v.value]; ok {
			detail += fmt.Sprintf(" %q is another engine's spelling: %s writes %q (%s).", v.value, e.title, sp.value, sp.why)
		} else if near := nearest(v.value, v.known); near != "" {
			detail += fmt.Sprintf(" Did you mean %q?", near)
		}
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Unknown " + v.name, Detail: detail,
			Subject: a.Expr.Range().Ptr(), Context: a.Range.Ptr()})
	}
	for _, name := range sortedKeys(e.unsupported) {
		if a, set := at[name]; set {
			diags = append(diags, invalidCtx("Attribute not supported by "+e.title, a.NameRange, a.Range,
				fmt.Sprintf("%s has no equivalent of %s (engine = %q): %s", e.title, name, s.Engine, e.unsupported[name])))
		}
	}
	return diags
}

// SpeculativeMethod is the speculative block's method as the server's
// engine names it, so that what the server states can be compared with it:
// SGLang's algorithm ("dflash" → "DFLASH", vLLM's "mtp" → "NEXTN"), vLLM's
// method as written; "" without a block or a method.
func (s *Server) SpeculativeMethod() string {
	if s.Speculative == nil {
		return ""
	}
	if s.syntax() == sglangSyntax {
		if alg, ok := sglangAlgorithmOf(s.Speculative.Method); ok {
			return alg.name
		}
	}
	return s.Speculative.Method
}

// launchArgs builds a launch's arguments, each flag only when its
// attribute is set; an engine's serveArgs writes its own flags with it.
type launchArgs []string

// str adds flag v unless v is "".
func (a *launchArgs) str(flag, v string) {
	if v != "" {
		*a = append(*a, flag, v)
	}
}

// num adds flag *v unless v is nil.
func (a *launchArgs) num(flag string, v *int) {
	if v != nil {
		*a = append(*a, flag, strconv.Itoa(*v))
	}
}

// fraction adds flag *v, written as short as it is exact, unless v is nil.
func (a *launchArgs) fraction(flag string, v *float64) {
	if v != nil {
		*a = append(*a, flag, strconv.FormatFloat(*v, 'f', -1, 64))
	}
}
