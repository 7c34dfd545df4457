// Package sglang is what slogate knows of SGLang (docs/sglang.md): its
// launch (`sglang serve MODEL --flag value …`, the flags named after
// ServerArgs' fields), and the engine.Engine registered as "sglang" in
// internal/engine/registry.
package sglang

import "github.com/slogate/slogate/internal/engine"

// Name is SGLang's name in a spec (server { engine = "sglang" }).
const Name = "sglang"

// Engine is SGLang.
type Engine struct{}

var _ engine.Engine = Engine{}

// Name is "sglang".
func (Engine) Name() string { return Name }

// Title is "SGLang".
func (Engine) Title() string { return "SGLang" }

// Syntax is SGLang's launch.
func (Engine) Syntax() *engine.Syntax { return syntax }
