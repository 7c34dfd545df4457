package workload

import "encoding/json"

// Record is what results.json keeps of the workload a run sent
// ("workload"; docs/method.md#workload): enough to tell whether two runs
// measured the same thing. requests.Builder.Record fills it in.
type Record struct {
	Prompt   string `json:"prompt"`
	Distinct bool   `json:"distinct"`
	// Sampling are the sampling fields sent, as written; {} when the
	// server's defaults were used.
	Sampling map[string]json.Number `json:"sampling"`
	// LogitBias is sampling.logit_bias as sent (token ID → bias); absent
	// when unset.
	LogitBias map[string]json.Number `json:"logit_bias,omitempty"`
	// ChatTemplateKwargs are the template arguments; {} when none.
	ChatTemplateKwargs map[string]any `json:"chat_template_kwargs"`
	// DocumentSHA256 and InstructionSHA256 hash the article's document (as
	// given, before it is cut or continued) and instruction; empty for
	// random prompts.
	DocumentSHA256    string `json:"document_sha256,omitempty"`
	InstructionSHA256 string `json:"instruction_sha256,omitempty"`
	// RandomSeed seeds random prompts; nil for articles.
	RandomSeed *uint64 `json:"random_seed,omitempty"`
}
