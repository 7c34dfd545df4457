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

// The built-in article's hashes, as Record holds them: the corpus's and
// the default instruction's SHA-256. They are written here, not computed,
// so that a reader of results.json (the report) tells the built-in
// article from a spec's own without the package that builds requests;
// requests' TestBuiltInHashes holds them to the texts it sends.
const (
	BuiltInDocumentSHA256    = "807785b285ed2e8f5f94cb7ba5b966e8132e218a620a674cd208d1f16e488291"
	BuiltInInstructionSHA256 = "5ee06c3c5da78ca23a7df7c3acfd9c4ace1f10a44dfaab021c13052b101193fd"
)

// BuiltInDocument reports whether r's article used the built-in corpus.
func (r *Record) BuiltInDocument() bool { return r.DocumentSHA256 == BuiltInDocumentSHA256 }

// BuiltInInstruction reports whether r's article used the default
// instruction.
func (r *Record) BuiltInInstruction() bool { return r.InstructionSHA256 == BuiltInInstructionSHA256 }
