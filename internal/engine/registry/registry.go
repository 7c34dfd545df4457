// Package registry is the one list of the engines slogate launches and
// measures, by the name a spec writes (server { engine = "…" }): spec,
// result, lifecycle, measure, compare and report find an engine here and
// call it through engine.Engine, never an engine's package directly. A
// new engine is its package below internal/engine and one line in engines.
package registry

import (
	"sort"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/engine/llamacpp"
	"github.com/slogate/slogate/internal/engine/sglang"
	"github.com/slogate/slogate/internal/engine/vllm"
)

// Default is the engine of a server that names none, and of results
// written before engines were recorded.
const Default = vllm.Name

// engines holds every engine, by its name.
var engines = map[string]engine.Engine{
	vllm.Name:     vllm.Engine{},
	sglang.Name:   sglang.Engine{},
	llamacpp.Name: llamacpp.Engine{},
}

// Lookup is the engine a spec names; ok is false for an unknown name.
func Lookup(name string) (e engine.Engine, ok bool) {
	e, ok = engines[name]
	return e, ok
}

// For is the engine of name, Default's for "" or an unknown name (spec.Load
// has refused an unknown one).
func For(name string) engine.Engine {
	if e, ok := engines[name]; ok {
		return e
	}
	return engines[Default]
}

// Names lists the engines a server may name, sorted.
func Names() []string {
	names := make([]string, 0, len(engines))
	for n := range engines {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Title is an engine's name as people write it ("vLLM" for "vllm",
// "SGLang" for "sglang"), name itself for an unknown one; "" is Default's,
// the engine of results written before engines were recorded.
func Title(name string) string {
	if name == "" {
		name = Default
	}
	if e, ok := engines[name]; ok {
		return e.Title()
	}
	return name
}
