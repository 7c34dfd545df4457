package cmdlines

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFind(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []Command
	}{
		{name: "quoted words", text: `$ slogate run -sim -var 'sim_args=["--sim-slowdown", "1.2"]' -baseline "out/a b/results.json" specs/demo.hcl`,
			want: []Command{{File: "f", Line: 10, Args: []string{"run", "-sim", "-var", `sim_args=["--sim-slowdown", "1.2"]`, "-baseline", "out/a b/results.json", "specs/demo.hcl"}}}},
		{name: "a path to the binary, a continuation, a pipe", text: "x\n  bin/slogate merge -out merged \\\n    out/* | tee log",
			want: []Command{{File: "f", Line: 11, Args: []string{"merge", "-out", "merged", "out/*"}}}},
		{name: "comment and redirection", text: "slogate plan -format matrix specs/*.hcl  # one job each\nslogate codify r.json >> specs/demo.hcl",
			want: []Command{{File: "f", Line: 10, Args: []string{"plan", "-format", "matrix", "specs/*.hcl"}}, {File: "f", Line: 11, Args: []string{"codify", "r.json"}}}},
		{name: "a synopsis's choices", text: "slogate plan     [-format text|json|matrix] [-o FILE] SPEC...",
			want: []Command{{File: "f", Line: 10, Args: []string{"plan", "[-format", "text", "json", "matrix]", "[-o", "FILE]", "SPEC..."}}}},
		{name: "a pipe inside quotes", text: "slogate run -run 'conc=64|assert' a.hcl",
			want: []Command{{File: "f", Line: 10, Args: []string{"run", "-run", "conc=64|assert", "a.hcl"}}}},
		{name: "inside a command substitution", text: `echo "matrix=$(bin/slogate plan -format matrix $SPECS)" >> "$GITHUB_OUTPUT"`,
			want: []Command{{File: "f", Line: 10, Args: []string{"plan", "-format", "matrix", "$SPECS"}}}},
		{name: "in a comment", text: "#   docker run --rm slogate run -endpoint http://vllm:8000 /specs/q.hcl",
			want: []Command{{File: "f", Line: 10, Args: []string{"run", "-endpoint", "http://vllm:8000", "/specs/q.hcl"}}}},
		{name: "not a command", text: "slogate: run: unknown flag -simm; did you mean -sim?"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Find("f", 10, tc.text)); diff != "" {
				t.Errorf("Find (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnknown(t *testing.T) {
	f := Flags{"sim": true, "out": true, "format": true, "o": true}
	got := f.Unknown([]string{"-sim", "--out=x", "[-format", "FORMAT]", "[-o]", "-simm", "-", "-1", "spec.hcl", "--", "-late"})
	if diff := cmp.Diff([]string{"-simm"}, got); diff != "" {
		t.Errorf("Unknown (-want +got):\n%s", diff)
	}
}
