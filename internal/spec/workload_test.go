package spec

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/workload"
)

// TestWorkload decodes workload blocks: the values kept, the defaults, and
// the detail of the diagnostics a user reads (suggestions, rules).
func TestWorkload(t *testing.T) {
	tests := []struct {
		name  string
		block string // the workload block ("" for none)
		extra string // other blocks
		want  *Workload
		// wantErr and wantDetail: the one diagnostic expected, and phrases of its detail.
		wantErr    string
		wantDetail []string
	}{
		{name: "no block: article, shared, server-default sampling", want: &Workload{Options: workload.Options{Prompt: "article", Seed: DefaultSeed}}},
		{name: "empty block gets the same defaults", block: "workload {}", want: &Workload{Options: workload.Options{Prompt: "article", Seed: DefaultSeed}}},
		{
			name:  "random with the default seed",
			block: `workload { prompt = "random" }`,
			want:  &Workload{Options: workload.Options{Prompt: "random", Seed: DefaultSeed}},
		},
		{
			name:  "random with its own seed and distinct",
			block: "workload {\n prompt = \"random\"\n seed = 18446744073709551615\n distinct = true\n}",
			want:  &Workload{Options: workload.Options{Prompt: "random", Seed: 1<<64 - 1, Distinct: true}},
		},
		{
			name:  "sampling kept as written",
			block: `workload { sampling = { temperature = 0.60, repetition_penalty = 1, min_p = 0, presence_penalty = -1.5, seed = 123456789012 } }`,
			want: &Workload{Options: workload.Options{Prompt: "article", Seed: DefaultSeed, Sampling: map[string]json.Number{
				"temperature": "0.6", "repetition_penalty": "1", "min_p": "0", "presence_penalty": "-1.5", "seed": "123456789012"}}},
		},
		{
			name:  "chat_template_kwargs keep any JSON value",
			block: `workload { chat_template_kwargs = { enable_thinking = false, reasoning_effort = "low", depth = 2 } }`,
			want: &Workload{Options: workload.Options{Prompt: "article", Seed: DefaultSeed, ChatTemplateKwargs: map[string]any{
				"enable_thinking": false, "reasoning_effort": "low", "depth": json.Number("2")}}},
		},
		{
			name:       "unknown sampling parameter suggests the name",
			block:      `workload { sampling = { temprature = 0.6 } }`,
			wantErr:    "Unknown sampling parameter",
			wantDetail: []string{`"temprature" is not one of them`, `Did you mean "temperature"?`},
		},
		{
			name:       "unknown attribute suggests the name",
			block:      `workload { instrction = "Write." }`,
			wantErr:    "Unsupported argument",
			wantDetail: []string{`Did you mean "instruction"?`},
		},
		{
			name:       "penalty out of vLLM's range",
			block:      `workload { sampling = { frequency_penalty = 2.5 } }`,
			wantErr:    "Invalid sampling value",
			wantDetail: []string{"sampling.frequency_penalty must be from -2 to 2", "got 2.5"},
		},
		{
			name:       "document of a random prompt",
			block:      "workload {\n prompt = \"random\"\n document = \"text\"\n}",
			wantErr:    "Not used by random prompts",
			wantDetail: []string{`document is part of an article prompt`, `use prompt = "article"`},
		},
		{
			name:       "random on the chat endpoint",
			block:      `workload { prompt = "random" }`,
			extra:      `measure { endpoint = "chat" }`,
			wantErr:    "Random prompts on the chat endpoint",
			wantDetail: []string{`Use endpoint = "completions"`},
		},
		{
			name:       "fractional seed",
			block:      "workload {\n prompt = \"random\"\n seed = 1.5\n}",
			wantErr:    "Invalid seed",
			wantDetail: []string{"got 1.5"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "server \"a\" { model = \"m\" }\n" + tt.extra + "\n" + tt.block + "\n"
			s, diags := LoadSource("w.hcl", []byte(src), LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset})
			if tt.wantErr != "" {
				if len(diags) != 1 || diags[0].Summary != tt.wantErr {
					t.Fatalf("diagnostics %v, want one %q", diags, tt.wantErr)
				}
				for _, p := range tt.wantDetail {
					if !strings.Contains(diags[0].Detail, p) {
						t.Errorf("detail %q does not say %q", diags[0].Detail, p)
					}
				}
				if diags[0].Subject == nil || diags[0].Subject.Filename != "w.hcl" {
					t.Errorf("subject %v, want a range in w.hcl", diags[0].Subject)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if diff := cmp.Diff(tt.want, s.Workload, cmpopts.IgnoreFields(Workload{}, "DeclRange")); diff != "" {
				t.Errorf("workload (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTolerance checks that a tolerance is read alike as a fraction or a
// percentage, in a spec and through ParseTolerance (the command line).
func TestTolerance(t *testing.T) {
	tests := []struct {
		name    string
		written string // as written in the spec
		want    float64
		wantErr string // a phrase of the diagnostic's detail
	}{
		{name: "fraction", written: `0.05`, want: 0.05},
		{name: "percentage", written: `"5%"`, want: 0.05},
		{name: "percentage with a space", written: `" 12.5 %"`, want: 0.125},
		{name: "fraction as a string", written: `"0.1"`, want: 0.1},
		{name: "zero", written: `"0%"`, want: 0},
		{name: "all of it", written: `1`, want: 1},
		{name: "over 100 percent", written: `"101%"`, wantErr: `got "101%", which is 101%`},
		{name: "over 1 as a fraction", written: `1.5`, wantErr: `got 1.5, which is 150%`},
		{name: "negative", written: `-0.01`, wantErr: "from 0 to 100%"},
		{name: "words", written: `"five"`, wantErr: `got "five"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := `server "a" { model = "m" }
matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1]
}
expect "e" {
  metric    = "total_tps"
  tolerance = ` + tt.written + `
  values    = { "8K" = [1] }
}
`
			s, diags := LoadSource("t.hcl", []byte(src), LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset})
			if tt.wantErr != "" {
				if len(diags) != 1 || diags[0].Summary != "Invalid tolerance" || !strings.Contains(diags[0].Detail, tt.wantErr) {
					t.Fatalf("diagnostics %v, want one Invalid tolerance saying %q", diags, tt.wantErr)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if got := s.Expects[0].Tolerance; got != tt.want {
				t.Errorf("tolerance %v, want %v", got, tt.want)
			}
		})
	}
	for _, c := range []struct {
		in   string
		want float64
		ok   bool
	}{{"5%", 0.05, true}, {"0.05", 0.05, true}, {"100%", 1, true}, {"-5%", 0, false}, {"200%", 0, false}, {"%", 0, false}, {"NaN", 0, false}} {
		got, err := ParseTolerance(c.in)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("ParseTolerance(%q) = %v, %v; want %v (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
}

// TestSpeculativeGreedyMinP: min_p with a speculative block is no error at a
// greedy temperature (vLLM resets min_p first); the same min_p at 1e-5 is.
func TestSpeculativeGreedyMinP(t *testing.T) {
	if _, diags := Load("testdata/valid/speculative_greedy.hcl", LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset}); len(diags) > 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	src, err := os.ReadFile("testdata/valid/speculative_greedy.hcl")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "warm.hcl")
	os.WriteFile(p, bytes.Replace(src, []byte("0.000009"), []byte("0.00001"), 1), 0o644)
	_, diags := Load(p, LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset})
	if len(diags) != 1 || diags[0].Summary != "min_p with speculative decoding" {
		t.Errorf("at temperature 1e-5: diagnostics %v, want one \"min_p with speculative decoding\"", diags)
	}
}

// TestSamplingBoundaries loads a spec with every sampling boundary vLLM
// accepts (and min_p at 1e-5 beside a speculative block, which vLLM takes
// as unset): no diagnostic.
func TestSamplingBoundaries(t *testing.T) {
	s, diags := Load("testdata/valid/sampling.hcl", LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset})
	if len(diags) > 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	if got := s.Workload.Sampling["temperature"].String(); got != "2" {
		t.Errorf("temperature = %s, want 2", got)
	}
}

// TestSpeculativeSamplingIsTheEngines: min_p and logit_bias beside a
// speculative block are an error only where the engine refuses them
// (engine.Syntax.SpeculativeSamplingRefusal: vLLM, citing vLLM's rule);
// llama-server b11669 answered such a request 200 while drafting
// (docs/llamacpp.md#speculative-decoding), and SGLang states no such rule.
func TestSpeculativeSamplingIsTheEngines(t *testing.T) {
	tests := []struct {
		name, engine, model, method string
		want                        []string // the diagnostics' summaries
	}{
		{name: "vLLM refuses them", engine: "vllm", model: "Qwen/Qwen3.5-4B", method: "draft",
			want: []string{"min_p with speculative decoding", "logit_bias with speculative decoding"}},
		{name: "llama.cpp takes them", engine: "llamacpp", model: "/models/tiny.gguf", method: "draft"},
		{name: "SGLang states no such rule", engine: "sglang", model: "Qwen/Qwen3.5-4B", method: "STANDALONE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := `
server "s" {
  engine = "` + tc.engine + `"
  model  = "` + tc.model + `"
  speculative {
    method                 = "` + tc.method + `"
    model                  = "` + tc.model + `"
    num_speculative_tokens = 4
  }
}
workload {
  sampling = {
    temperature = 1
    min_p       = 0.1
    logit_bias  = { "50" = -100 }
  }
}
`
			_, diags := LoadSource("spec.hcl", []byte(src), LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset})
			var got []string
			for _, d := range diags {
				got = append(got, d.Summary)
				if !strings.Contains(d.Detail, "vLLM answers HTTP 400") {
					t.Errorf("%s: %s, want vLLM's rule cited", d.Summary, d.Detail)
				}
			}
			if strings.Join(got, "; ") != strings.Join(tc.want, "; ") {
				t.Errorf("diagnostics %v, want %v", diags, tc.want)
			}
		})
	}
}
