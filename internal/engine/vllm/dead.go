package vllm

import "strings"

// engineDeadMessage is the message of vLLM's EngineDeadError
// (vllm/v1/engine/exceptions.py, 0.31.0 and 0.32.0): the API server sends
// it to every request in flight when its EngineCore process dies, then
// shuts down (seen on the real CPU build after kill -9 of the EngineCore:
// an in-stream error event, then the port refusing connections).
const engineDeadMessage = "EngineCore encountered an issue"

// EngineDead says whether a failed request's message is vLLM's
// EngineDeadError: the engine is gone and the server will exit.
func (Engine) EngineDead(message string) bool {
	return strings.Contains(message, engineDeadMessage)
}
