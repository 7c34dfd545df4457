// Package vllm is what slogate knows of vLLM (docs/vllm.md): its launch
// (`vllm serve MODEL --flag value …`), and the engine.Engine registered as
// "vllm" in internal/engine/registry.
package vllm

import "github.com/slogate/slogate/internal/engine"

// Name is vLLM's name in a spec (server { engine = "vllm" }).
const Name = "vllm"

// Engine is vLLM.
type Engine struct{}

var _ engine.Engine = Engine{}

// Name is "vllm".
func (Engine) Name() string { return Name }

// Title is "vLLM".
func (Engine) Title() string { return "vLLM" }

// Syntax is vLLM's launch.
func (Engine) Syntax() *engine.Syntax { return syntax }
