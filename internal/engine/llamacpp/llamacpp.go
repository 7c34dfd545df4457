// Package llamacpp is what slogate knows of llama.cpp's llama-server
// (docs/llamacpp.md): its launch (`llama-server -m MODEL --flag value …`,
// each flag and its value separate words), and the engine.Engine
// registered as "llamacpp" in internal/engine/registry.
package llamacpp

import "github.com/slogate/slogate/internal/engine"

// Name is llama.cpp's name in a spec (server { engine = "llamacpp" }).
const Name = "llamacpp"

// Engine is llama.cpp's llama-server.
type Engine struct{}

var _ engine.Engine = Engine{}

// llama-server's quirks, each an optional hook of package engine, so
// that no other engine's package carries a stub of them.
var _ interface {
	engine.ChatPromptIDer
	engine.ExitHinter
	engine.Uncacheder
	engine.StreamCloser
} = Engine{}

// Name is "llamacpp".
func (Engine) Name() string { return Name }

// Title is "llama.cpp".
func (Engine) Title() string { return "llama.cpp" }

// Syntax is llama-server's launch.
func (Engine) Syntax() *engine.Syntax { return syntax }
