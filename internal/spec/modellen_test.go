package spec

import (
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/requests"
)

// TestModelLenDetail: each max_model_len check's diagnostic says, in its
// detail, which block asks for how many tokens, the server's limit and
// where it is set, and the largest value that fits (the fixtures check
// only the summaries).
func TestModelLenDetail(t *testing.T) {
	const server = `server "qwen" {
  model         = "Qwen/Qwen3.5-4B"
  max_model_len = "32K"
}
measure { max_output = 4096 }
`
	tests := []struct {
		name, src, summary, detail string
		line                       int
	}{
		{
			name:    "matrix",
			src:     server + "matrix \"decode\" {\n  contexts    = [\"28K\", \"32K\"]\n  concurrency = [1]\n}\n",
			summary: "Context too long for max_model_len",
			detail:  `Matrix "decode" decodes at context 32K (32768 tokens) plus max_output 4096 = 36864 tokens, more than server "qwen" allows (max_model_len = 32768 at len.hcl:3). Use a context of at most 28672 tokens, lower measure.max_output, or raise max_model_len.`,
			line:    7,
		},
		{
			name:    "prefill",
			src:     server + "prefill {\n  contexts = [\"8K\", \"32K\", \"64K\"]\n}\n",
			summary: "Context too long for max_model_len",
			detail:  `Prefill context 64K (65536 tokens) is more than server "qwen" allows (max_model_len = 32768 at len.hcl:3). A prefill context may be at most max_model_len.`,
			line:    7,
		},
		{
			name:    "search",
			src:     server + "search \"s\" {\n  context     = \"32K\"\n  concurrency = [1, 8]\n  objective   = cell.per_request_tps >= 50\n}\n",
			summary: "Context too long for max_model_len",
			detail:  `Search "s" decodes at context 32K (32768 tokens) plus max_output 4096 = 36864 tokens, more than server "qwen" allows (max_model_len = 32768 at len.hcl:3). Use a context of at most 28672 tokens, lower measure.max_output, or raise max_model_len.`,
			line:    7,
		},
		{
			name:    "traffic",
			src:     server + "traffic \"t\" {\n  context = \"32K\"\n  rate    = [1]\n}\n",
			summary: "Context too long for max_model_len",
			detail:  `Traffic "t" sends prompts of 32K (32768 tokens) plus max_output 4096 = 36864 tokens, more than server "qwen" allows (max_model_len = 32768 at len.hcl:3). Use a context of at most 28672 tokens, lower max_output, or raise max_model_len.`,
			line:    7,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := LoadSource("len.hcl", []byte(tt.src), LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset})
			var got []*hcl.Diagnostic
			for _, d := range diags {
				if d.Summary == tt.summary {
					got = append(got, d)
				}
			}
			if len(got) != 1 {
				t.Fatalf("want one %q diagnostic, got %v", tt.summary, diags)
			}
			if got[0].Detail != tt.detail {
				t.Errorf("detail\n %s\nwant\n %s", got[0].Detail, tt.detail)
			}
			if got[0].Subject == nil || got[0].Subject.Start.Line != tt.line {
				t.Errorf("subject %v, want line %d", got[0].Subject, tt.line)
			}
		})
	}
}
