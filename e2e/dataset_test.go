package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestValidateDatasets: `slogate validate` reads a named workload's
// dataset, so each bad file is a diagnostic (exit 2) at the spec's dataset
// line whose detail names the dataset's own file and line and why; a good
// ShareGPT file with a closed-loop traffic block over it validates.
func TestValidateDatasets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file string // file: under testdata/datasets
		want       []string
	}{
		{name: "malformed ShareGPT entry", file: "bad/sharegpt_malformed.json",
			want: []string{"Error: Invalid dataset", "sharegpt_malformed.json:4: entry 3: malformed JSON"}},
		{name: "missing prompt", file: "bad/prompts_missing_prompt.jsonl",
			want: []string{"Error: Invalid dataset", `prompts_missing_prompt.jsonl:3: no "prompt" field`}},
		{name: "empty", file: "bad/empty.json",
			want: []string{"Error: Empty dataset", "empty.json: the dataset is empty"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mark := newMark(t)
			defer noLeftovers(t, mark)
			data, err := filepath.Abs(filepath.Join("..", "testdata", "datasets", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			spec := specFile(t, "replay.hcl", `server "sim" { model = "sim/model" }

workload "replay" {
  dataset = "`+data+`"
}

traffic "replay" {
  workload    = "replay"
  concurrency = [4]
}
`)
			v := slogate(t, mark, 30*time.Second, "", nil, "validate", spec)
			if v.Code != 2 {
				t.Fatalf("validate: exit %d, want 2\nstdout:\n%s\nstderr:\n%s", v.Code, v.Stdout, v.Stderr)
			}
			for _, want := range append(tc.want, "on "+spec+" line 4, in workload \"replay\":") {
				if !strings.Contains(v.Stderr, want) {
					t.Errorf("validate's diagnostic lacks %q:\n%s", want, v.Stderr)
				}
			}
		})
	}
	t.Run("good ShareGPT beside the spec", func(t *testing.T) {
		t.Parallel()
		mark := newMark(t)
		defer noLeftovers(t, mark)
		spec := specFile(t, "replay.hcl", `server "sim" { model = "sim/model" }

workload "replay" {
  dataset = "sharegpt.json"
}

traffic "replay" {
  workload    = "replay"
  concurrency = [4, 16]
}

assert "fast" {
  condition = replay[16].ttft_ms_p99 < 2000
}
`)
		data, err := os.ReadFile(filepath.Join("..", "testdata", "datasets", "sharegpt.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(filepath.Dir(spec), "sharegpt.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		v := slogate(t, mark, 30*time.Second, "", nil, "validate", spec)
		if v.Code != 0 {
			t.Fatalf("validate: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", v.Code, v.Stdout, v.Stderr)
		}
		p := slogate(t, mark, 30*time.Second, "", nil, "plan", spec)
		if p.Code != 0 || !strings.Contains(p.Stdout, "sim/traffic/replay/conc=4") || !strings.Contains(p.Stdout, "sim/traffic/replay/conc=16") {
			t.Errorf("plan: exit %d, want the cells sim/traffic/replay/conc=4 and conc=16\nstdout:\n%s\nstderr:\n%s", p.Code, p.Stdout, p.Stderr)
		}
	})
}
