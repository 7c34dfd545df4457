package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/workload"
)

// TestNamedWorkloads decodes named workload blocks into the options the
// planner takes: the defaults a named block adds (ignore_eos, vLLM's
// filter), each length form, prefix and turns; the dataset read at load
// time, its path resolved against the spec's folder.
func TestNamedWorkloads(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("../../testdata/datasets/sharegpt.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sg.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	agent, err := os.ReadFile("../../testdata/datasets/agent.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.jsonl.gz"), agent, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		endpoint string // default "completions"
		block    string
		want     workload.Options
	}{
		{name: "dataset with defaults", block: `
  dataset = "sg.json"`,
			want: workload.Options{Prompt: workload.DatasetPrompt, DatasetPath: filepath.Join(dir, "sg.json"), Seed: DefaultSeed,
				Filter: workload.DefaultFilter, IgnoreEOS: true}},
		{name: "dataset with its filter, format and seed", block: `
  prompt            = "dataset"
  dataset           = "sg.json"
  format            = "sharegpt"
  seed              = 7
  min_prompt_tokens = 2
  min_output_tokens = 1
  max_prompt_tokens = "2K"
  max_total_tokens  = "4K"
  output_tokens     = 128
  ignore_eos        = false`,
			want: workload.Options{Prompt: workload.DatasetPrompt, DatasetPath: filepath.Join(dir, "sg.json"), DatasetFormat: workload.FormatShareGPT, Seed: 7,
				Filter:       workload.Filter{MinPromptTokens: 2, MinOutputTokens: 1, MaxPromptTokens: 2048, MaxTotalTokens: 4096},
				OutputTokens: workload.FixedLength(128)}},
		{name: "uniform", block: `
  prompt        = "random"
  input_tokens  = { min = 100, max = "1K" }
  output_tokens = 64`,
			want: workload.Options{Prompt: workload.Random, Seed: DefaultSeed, Filter: workload.DefaultFilter, IgnoreEOS: true,
				InputTokens:  workload.Length{Distribution: workload.Uniform, Min: 100, Max: 1024},
				OutputTokens: workload.FixedLength(64)}},
		{name: "normal clipped", block: `
  prompt       = "random"
  input_tokens = { mean = 1000, stddev = 200, min = 400, max = 1600 }`,
			want: workload.Options{Prompt: workload.Random, Seed: DefaultSeed, Filter: workload.DefaultFilter, IgnoreEOS: true,
				InputTokens: workload.Length{Distribution: workload.Normal, Mean: 1000, Stddev: 200, Min: 400, Max: 1600}}},
		{name: "normal with GuideLLM's bounds", block: `
  input_tokens = { mean = 1000, stddev = 100 }`,
			want: workload.Options{Prompt: workload.Article, Seed: DefaultSeed, Filter: workload.DefaultFilter, IgnoreEOS: true,
				InputTokens: workload.Length{Distribution: workload.Normal, Mean: 1000, Stddev: 100, Min: 500, Max: 1500}}},
		{name: "normal whose GuideLLM min is below 1", block: `
  input_tokens = { mean = 300, stddev = 100 }`,
			want: workload.Options{Prompt: workload.Article, Seed: DefaultSeed, Filter: workload.DefaultFilter, IgnoreEOS: true,
				InputTokens: workload.Length{Distribution: workload.Normal, Mean: 300, Stddev: 100, Min: 1, Max: 800}}},
		{name: "lognormal, prefix, turns", endpoint: "chat", block: `
  output_tokens = { mean = 200, stddev = 150, min = 16, max = 1000, distribution = "lognormal" }
  input_tokens  = 500
  prefix        = { groups = 4, tokens = 256 }
  turns         = 3`,
			want: workload.Options{Prompt: workload.Article, Seed: DefaultSeed, Filter: workload.DefaultFilter, IgnoreEOS: true,
				InputTokens:  workload.FixedLength(500),
				OutputTokens: workload.Length{Distribution: workload.Lognormal, Mean: 200, Stddev: 150, Min: 16, Max: 1000},
				Prefix:       workload.Prefix{Groups: 4, Tokens: 256}, Turns: 3}},
		{name: "dialled hit rate, block stated", block: `
  prompt       = "random"
  input_tokens = 512
  prefix       = { hit_rate = 0.6, block = "1K" }`,
			want: workload.Options{Prompt: workload.Random, Seed: DefaultSeed, Filter: workload.DefaultFilter, IgnoreEOS: true,
				InputTokens: workload.FixedLength(512), Prefix: workload.Prefix{HitRate: 0.6, Block: 1024}}},
		{name: "dialled hit rate, default block", block: `
  prompt       = "random"
  input_tokens = 512
  prefix       = { hit_rate = 0 }`,
			want: workload.Options{Prompt: workload.Random, Seed: DefaultSeed, Filter: workload.DefaultFilter, IgnoreEOS: true,
				InputTokens: workload.FixedLength(512), Prefix: workload.Prefix{HitRate: 0, Block: workload.DefaultPrefixBlock}}},
		{name: "agentic trace at twice its speed", block: `
  dataset = "agent.jsonl.gz"
  format  = "copilot-agent"
  speed   = 2`,
			want: workload.Options{Prompt: workload.DatasetPrompt, DatasetPath: filepath.Join(dir, "agent.jsonl.gz"), DatasetFormat: workload.FormatCopilotAgent, Seed: DefaultSeed,
				Filter: workload.DefaultFilter, IgnoreEOS: true, Trace: workload.Trace{Speed: 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			endpoint := tt.endpoint
			if endpoint == "" {
				endpoint = "completions"
			}
			src := fmt.Sprintf("server \"s\" { model = \"m\" }\nmeasure { endpoint = %q }\nworkload \"w\" {%s\n}\n", endpoint, tt.block)
			s, diags := LoadSource(filepath.Join(dir, "spec.hcl"), []byte(src), LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			w := s.NamedWorkload("w")
			if w == nil || s.Workload.Name != "" || len(s.Workloads) != 1 {
				t.Fatalf("named workload not decoded: %+v", s.Workloads)
			}
			if diff := cmp.Diff(tt.want, w.Options, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
			if (w.Dataset != nil) != (tt.want.Prompt == workload.DatasetPrompt) {
				t.Errorf("dataset read: %v", w.Dataset != nil)
			}
		})
	}
}

// TestDatasetDiagnosticDetail: a dataset's problem is a diagnostic at the
// spec's dataset attribute whose detail names the dataset file, its line
// and why (the fixture's comments pin the summaries and spec lines).
func TestDatasetDiagnosticDetail(t *testing.T) {
	const path = "testdata/invalid/workload_dataset.hcl"
	_, diags := Load(path, LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset})
	want := map[int]string{
		6:  "testdata/datasets/none.json: cannot read the dataset: no such file or directory. The path is relative to the spec's folder",
		10: "testdata/datasets/bad/empty.json: the dataset is empty.",
		14: "testdata/datasets/bad/sharegpt_malformed.json:4: entry 3: malformed JSON: invalid character '{' after array element. Fix the file, or point dataset at another. It was read as sharegpt, detected from the file",
		18: `testdata/datasets/bad/sharegpt_missing_value.json:8: entry 2: conversations[0] has no "value" (the turn's text).`,
		22: `testdata/datasets/bad/prompts_missing_prompt.jsonl:3: no "prompt" field`,
		26: "testdata/datasets/bad/prompts_malformed.jsonl:3: malformed JSON",
		30: "testdata/datasets/bad/messages_no_user.jsonl:2: the conversation has no user message.",
		34: "testdata/datasets/prompts.jsonl:1: a ShareGPT dataset is a JSON list of entries",
		39: "testdata/datasets/bad/sharegpt_no_usable.json: the dataset holds no entry with two or more conversation turns (2 skipped).",
	}
	for _, d := range diags {
		line := d.Subject.Start.Line
		w, ok := want[line]
		if !ok {
			t.Errorf("unexpected diagnostic at line %d: %s", line, d.Detail)
			continue
		}
		delete(want, line)
		if !strings.Contains(d.Detail, w) {
			t.Errorf("line %d: detail %q does not contain %q", line, d.Detail, w)
		}
	}
	for line, w := range want {
		t.Errorf("no diagnostic at line %d (%q)", line, w)
	}
}

// TestConversationsEndpointWhere: a conversation on the completions
// endpoint names where the endpoint was set, or says it is the default
// (it named "c.hcl:0" of a spec without a measure block).
func TestConversationsEndpointWhere(t *testing.T) {
	tests := []struct {
		name, measure, want string
	}{
		{name: "no measure block", want: `measure.endpoint is "completions" (the default: the spec has no measure block)`},
		{name: "a measure block", measure: "measure {\n  duration = \"2s\"\n}\n", want: `measure.endpoint is "completions" (c.hcl:2)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "server \"q\" { model = \"m\" }\n" + tt.measure + "workload \"chat\" {\n  input_tokens = 100\n  turns = 3\n}\n"
			_, diags := LoadSource("c.hcl", []byte(src), LoadOptions{})
			errs := diags.Errs()
			if len(errs) != 1 {
				t.Fatalf("want one diagnostic, got %v", diags)
			}
			if d := errs[0].(*hcl.Diagnostic); d.Summary != "Conversations on the completions endpoint" || !strings.Contains(d.Detail, tt.want) {
				t.Errorf("%s: %s; want the detail to say %q", d.Summary, d.Detail, tt.want)
			}
		})
	}
}

// TestDatasetWithoutReader: spec reads no dataset itself; loaded without
// LoadOptions.ReadDataset, a dataset attribute is an error saying why,
// not a dataset silently left unchecked.
func TestDatasetWithoutReader(t *testing.T) {
	src := "server \"s\" { model = \"m\" }\nworkload \"w\" {\n  dataset = \"sharegpt.json\"\n}\n"
	_, diags := LoadSource("spec.hcl", []byte(src), LoadOptions{LookupEnv: testEnv})
	if len(diags) != 1 || diags[0].Summary != "Cannot read dataset" || diags[0].Subject == nil || diags[0].Subject.Start.Line != 3 ||
		!strings.Contains(diags[0].Detail, "without a dataset reader (spec.LoadOptions.ReadDataset)") {
		t.Fatalf("diags = %v, want one \"Cannot read dataset\" at line 3 naming spec.LoadOptions.ReadDataset", diags)
	}
}

// TestPrefixDialDiagnostics: the dialled form of prefix is checked where
// it is written: both forms at once (saying which to drop), a rate out of
// 0..1, a block below 1, no hit_rate, and prompts that are not token IDs.
func TestPrefixDialDiagnostics(t *testing.T) {
	tests := []struct {
		name    string
		block   string
		summary string
		detail  string
	}{
		{name: "both forms", block: `prompt = "random"
  prefix = { groups = 4, tokens = 256, hit_rate = 0.5 }`,
			summary: "Mixed prefix forms", detail: "Drop groups and tokens to dial the hit rate, or drop hit_rate and block to keep shared prefixes"},
		{name: "rate above 1", block: `prompt = "random"
  prefix = { hit_rate = 1.5 }`,
			summary: "Invalid prefix", detail: "0 to 1; got 1.5"},
		{name: "block zero", block: `prompt = "random"
  prefix = { hit_rate = 0.5, block = 0 }`,
			summary: "Invalid prefix", detail: "prefix.block: 0 is not a positive whole number of tokens"},
		{name: "block without hit_rate", block: `prompt = "random"
  prefix = { block = 16 }`,
			summary: "Invalid prefix", detail: "a dialled prefix needs hit_rate"},
		{name: "article prompts", block: `prefix = { hit_rate = 0.5 }`,
			summary: "Hit rate without random prompts", detail: `only token-ID prompts can: prompt = "random"`},
		{name: "unknown key names both forms", block: `prompt = "random"
  prefix = { hit = 0.5 }`,
			summary: "Unknown prefix key", detail: "{ hit_rate = 0.6, block = 16 }"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := fmt.Sprintf("server \"s\" { model = \"m\" }\nmeasure { endpoint = \"completions\" }\nworkload \"w\" {\n  %s\n}\n", tt.block)
			_, diags := LoadSource("spec.hcl", []byte(src), LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset})
			var got []string
			for _, d := range diags {
				if d.Summary == tt.summary && strings.Contains(d.Detail, tt.detail) {
					return
				}
				got = append(got, d.Summary+": "+d.Detail)
			}
			t.Errorf("no %q diagnostic with %q; got %q", tt.summary, tt.detail, got)
		})
	}
}
