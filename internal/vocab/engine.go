package vocab

// EngineTitle is an inference engine's name as people write it ("vLLM"
// for "vllm", "SGLang" for "sglang"), name itself for another; "" is vLLM,
// the engine of results written before engines were recorded.
func EngineTitle(name string) string {
	switch name {
	case "", "vllm":
		return "vLLM"
	case "sglang":
		return "SGLang"
	}
	return name
}
