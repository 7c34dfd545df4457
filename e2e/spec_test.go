package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestValidateSpecs: `slogate validate specs/*.hcl` exits 0.
func TestValidateSpecs(t *testing.T) {
	t.Parallel()
	specs, err := filepath.Glob("../specs/*.hcl")
	if err != nil || len(specs) < 4 {
		t.Fatalf("specs/*.hcl: %v %v", specs, err)
	}
	mark := newMark(t)
	r := slogate(t, mark, 30*time.Second, "", nil, append([]string{"validate"}, specs...)...)
	if r.Code != 0 {
		t.Fatalf("exit %d, want 0\nstderr:\n%s", r.Code, r.Stderr)
	}
	for _, s := range specs {
		if !strings.Contains(r.Stdout, "ok  "+s+"\n") {
			t.Errorf("stdout lacks ok line for %s:\n%s", s, r.Stdout)
		}
	}
	noLeftovers(t, mark)
}

// TestValidateBrokenSpec: a broken spec exits 2 and names its file and line
// with a snippet of the offending source.
func TestValidateBrokenSpec(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "broken.hcl")
	src := `server "qwen" {
  model = "Qwen/Qwen3.5-4B"
}

matrix "decode" {
  contexts    = ["8K", "16Q"]
  concurrency = [1, 64]
}

assert "decode_8k_64" {
  condition = decode["8K"][64].total_tsp >= 6000
}
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	mark := newMark(t)
	r := slogate(t, mark, 30*time.Second, "", nil, "validate", path)
	if r.Code != 2 {
		t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{
		"Error: Invalid context size",
		"on " + path + " line 6",
		`contexts    = ["8K", "16Q"]`,
		"Error: Unknown metric",
		"on " + path + " line 11",
		`Did you mean "total_tps"?`,
	} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
	if r.Stdout != "" {
		t.Errorf("stdout not empty:\n%s", r.Stdout)
	}
	noLeftovers(t, mark)
}

// TestPlanSeedSpec: `slogate plan -format json` on a seed spec prints its
// launch with the key redacted.
func TestPlanSeedSpec(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	r := slogate(t, mark, 30*time.Second, "", []string{"VLLM_API_KEY=e2e-secret"}, "plan", "-format", "json", "../specs/ling-3.0-flash-int4-h200x2.hcl")
	if r.Code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.Code, r.Stderr)
	}
	if strings.Contains(r.Stdout, "e2e-secret") || !strings.Contains(r.Stdout, `"<redacted>"`) {
		t.Errorf("API key not redacted:\n%s", r.Stdout)
	}
	for _, want := range []string{`"name": "ling"`, `"--mamba-cache-mode",`, `"estimated_s": `} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("plan lacks %q", want)
		}
	}
	noLeftovers(t, mark)
}

// TestValidateVLLMSamplingRules: sampling a vLLM server would answer HTTP
// 400 to fails validate with exit 2 before any server starts: a
// temperature above 2 (SamplingParams._verify_args, vLLM PR #44965) and
// min_p with a speculative block (_validate_spec_decode, PR #31982), each
// named at its file and line with the vLLM rule.
func TestValidateVLLMSamplingRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{
			name: "temperature 2.5",
			src: `server "qwen" { model = "Qwen/Qwen3.5-4B" }
workload {
  sampling = { temperature = 2.5 }
}
`,
			want: []string{"Error: Invalid sampling value", "line 3", "sampling.temperature must be from 0 to 2 (vLLM PR #44965)", "got 2.5"},
		},
		{
			name: "min_p with speculative",
			src: `server "qwen" {
  model = "Qwen/Qwen3.5-4B"
  speculative {
    method = "ngram"
  }
}
workload {
  sampling = {
    min_p = 0.1
  }
}
`,
			want: []string{"Error: min_p with speculative decoding", "line 9", `server "qwen" has a speculative block`,
				"The min_p and logit_bias sampling parameters are not yet supported with speculative decoding.", "vLLM PR #31982", "Set min_p = 0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "sampling.hcl")
			if err := os.WriteFile(path, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			mark := newMark(t)
			r := slogate(t, mark, 30*time.Second, "", nil, "validate", path)
			if r.Code != 2 {
				t.Fatalf("exit %d, want 2\nstderr:\n%s", r.Code, r.Stderr)
			}
			for _, w := range tt.want {
				if w == tt.want[1] {
					w = "on " + path + " " + w
				}
				if !strings.Contains(strings.Join(strings.Fields(r.Stderr), " "), w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.Stderr)
				}
			}
			noLeftovers(t, mark)
		})
	}
}
