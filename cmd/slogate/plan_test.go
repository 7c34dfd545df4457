package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/spec/spectest"
	"github.com/slogate/slogate/internal/views/planview"
	"github.com/slogate/slogate/internal/vocab"
)

// runPlan runs `slogate plan args…` and returns stdout, failing on error.
func runPlan(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := runProgram(context.Background(), &stdout, &stderr, append([]string{"plan"}, args...)); err != nil {
		t.Fatalf("plan %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.String()
}

// TestPlanSeedLaunch checks that each seed spec's plan JSON launches the
// seed's command: argv and env compared with the seed report's launch line
// as a flag set.
func TestPlanSeedLaunch(t *testing.T) {
	t.Setenv("HOME", "$HOME") // so the command reads "$HOME/…" like the seed
	t.Setenv("VLLM_API_KEY", "secret-key-123")
	tests := []struct {
		name, server string
		cells        int
	}{
		{name: "qwen3.5-4b-h200-dflash", server: "qwen", cells: 7 + 6*8},
		{name: "glm-5.3-flash-nvfp4-h200x2", server: "glm", cells: 9 + 8*8},
		{name: "ling-3.0-flash-int4-h200x2", server: "ling", cells: 7 + 6*8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := runPlan(t, "-format", "json", filepath.Join("../../specs", tt.name+".hcl"))
			if strings.Contains(out, "secret-key-123") {
				t.Fatal("plan output leaks the API key")
			}
			var doc planview.Document
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Servers) != 1 || doc.Servers[0].Name != tt.server {
				t.Fatalf("servers: %+v", doc.Servers)
			}
			s := doc.Servers[0]
			line, err := os.ReadFile(filepath.Join("../../testdata/seeds", tt.name+".launch"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := spectest.ParseLine(string(line))
			if err != nil {
				t.Fatal(err)
			}
			got, err := spectest.ParseArgv(s.Argv)
			if err != nil {
				t.Fatal(err)
			}
			got.Env = s.Env
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("plan launch (-seed +plan):\n%s", diff)
			}
			if len(s.Cells) != tt.cells {
				t.Errorf("%d cells, want %d", len(s.Cells), tt.cells)
			}
			if s.Estimated <= 0 {
				t.Errorf("estimated_s = %d", s.Estimated)
			}
		})
	}
}

// TestPlanJSONShape checks the exact shape of `plan -format json`: -run keeps
// one assertion, which needs its cell and that context's prefill.
func TestPlanJSONShape(t *testing.T) {
	out := runPlan(t, "-format", "json", "-run", "assert/decode_8k_64", "../../specs/qwen3.5-4b-h200-dflash.hcl")
	var doc struct {
		Servers []struct {
			Name       string            `json:"name"`
			Argv       []string          `json:"argv"`
			Env        map[string]string `json:"env"`
			Cells      []vocab.CellRef   `json:"cells"`
			Assertions []struct {
				Name  string          `json:"name"`
				Cells []vocab.CellRef `json:"cells"`
			} `json:"assertions"`
			EstimatedS *int64 `json:"estimated_s"`
		} `json:"servers"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	prefill8K := vocab.CellRef{Phase: vocab.PhasePrefill, Context: 8192}
	decode8K64 := vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: "decode", Context: 8192, Concurrency: 64}
	s := doc.Servers[0]
	if diff := cmp.Diff([]vocab.CellRef{prefill8K, decode8K64}, s.Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	if len(s.Assertions) != 1 || s.Assertions[0].Name != "decode_8k_64" ||
		!cmp.Equal([]vocab.CellRef{decode8K64}, s.Assertions[0].Cells) {
		t.Errorf("assertions: %+v", s.Assertions)
	}
	if s.EstimatedS == nil || *s.EstimatedS <= 0 || s.Env == nil || s.Argv[1] != "serve" {
		t.Errorf("server: %+v", s)
	}
	// The prefill cell prints without concurrency, as in the design.
	if !strings.Contains(strings.Join(strings.Fields(out), ""), `{"phase":"prefill","context":8192}`) {
		t.Errorf("prefill cell not in the documented shape:\n%s", out)
	}
}

func TestPlanText(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	out := runPlan(t, "../../specs/glm-5.3-flash-nvfp4-h200x2.hcl")
	for _, want := range []string{
		"server glm (../../specs/glm-5.3-flash-nvfp4-h200x2.hcl)",
		"launch: env VLLM_ENGINE_READY_TIMEOUT_S=3600 VLLM_USE_V2_MODEL_RUNNER=1 /home/u/env_h200-nvidia-glm53flash-dflash2-vllm-3b5189828/bin/vllm serve nvidia/GLM-5.3-Flash-NVFP4",
		"--api-key <redacted>",
		`--speculative-config '{"method":"dflash","model":"incoai/GLM-5.3-Flash-DFlash2","num_speculative_tokens":7,"kv_cache_dtype":"auto"}'`,
		"cells: 73, in order:\n    glm/prefill/ctx=8K\n    glm/decode/ctx=8K/conc=1\n",
		"glm/assert/decode_8k_16  needs decode/ctx=8K/conc=16",
		"glm/expect/decode_total_tps  needs 34 cells",
		"estimated: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan text lacks %q:\n%s", want, out)
		}
	}
}

func TestPlanUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "bad format", args: []string{"-format", "yaml", "../../specs/demo.hcl"}, want: `plan: -format is text, json or matrix, not "yaml"`},
		{name: "bad regexp", args: []string{"-run", "(", "../../specs/demo.hcl"}, want: "-run"},
		{name: "no spec", args: nil, want: "plan: no SPEC given"},
		{name: "invalid spec", args: []string{"../../internal/spec/testdata/invalid/measure.hcl"}, want: "Invalid endpoint"},
		{name: "matrix with one spec given twice", args: []string{"-format", "matrix", "../../specs/demo.hcl", "../../specs/./demo.hcl"},
			want: `../../specs/demo.hcl and ../../specs/./demo.hcl both have server "qwen": their matrix jobs would both be demo/qwen; give each spec once`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := runProgram(context.Background(), &stdout, &stderr, append([]string{"plan"}, tt.args...))
			if exit.Code(err) != exit.Usage {
				t.Fatalf("exit %d (%v), want 2", exit.Code(err), err)
			}
			if !strings.Contains(stderr.String()+errString(err), tt.want) {
				t.Errorf("output lacks %q:\n%s %v", tt.want, stderr.String(), err)
			}
		})
	}
}

// TestPlanRunFlags: plan takes the run flags that change what is measured,
// so its estimate is that of the run as it will be given: -duration
// shortens every window, -server keeps one server.
func TestPlanRunFlags(t *testing.T) {
	estimate := func(args ...string) (map[string]int64, []string) {
		var doc planview.Document
		if err := json.Unmarshal([]byte(runPlan(t, append([]string{"-format", "json"}, args...)...)), &doc); err != nil {
			t.Fatal(err)
		}
		est := map[string]int64{}
		var names []string
		for _, s := range doc.Servers {
			est[s.Name] = s.Estimated
			names = append(names, s.Name)
		}
		return est, names
	}
	glm := "../../specs/glm-5.3-flash-nvfp4-h200x2.hcl"
	full, _ := estimate(glm)
	short, _ := estimate("-duration", "1s", glm)
	// 30 s windows → 1 s: 29 s less for each of the 64 decode cells (the 9
	// prefill cells have no window).
	if full["glm"]-short["glm"] != 29*64 {
		t.Errorf("-duration 1s: estimate %d s, want %d s less than the spec's %d s", short["glm"], 29*64, full["glm"])
	}
	demo := "../../specs/demo.hcl"
	if _, names := estimate("-server", "glm", demo, glm); !cmp.Equal(names, []string{"glm"}) {
		t.Errorf("-server glm: servers %v, want [glm]", names)
	}
}

// TestPlanMatrixOfTheRepository: the repository's own specs fan out
// together although demo.hcl and the Qwen seed spec both name their server
// "qwen": jobs are named by spec and server, and the two qwen runs get
// their spec's name in their merged folder (dir); a server no other spec
// has keeps its name.
func TestPlanMatrixOfTheRepository(t *testing.T) {
	specs, err := filepath.Glob("../../specs/*.hcl")
	if err != nil || len(specs) < 4 {
		t.Fatalf("specs: %v %v", specs, err)
	}
	var entries []planview.MatrixEntry
	if err := json.Unmarshal([]byte(runPlan(t, append([]string{"-format", "matrix"}, specs...)...)), &entries); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range entries {
		got[e.Job] = e.Dir
	}
	want := map[string]string{
		"demo/qwen":                       "demo/qwen",
		"qwen3.5-4b-h200-dflash/qwen":     "qwen3.5-4b-h200-dflash/qwen",
		"glm-5.3-flash-nvfp4-h200x2/glm":  "glm",
		"ling-3.0-flash-int4-h200x2/ling": "ling",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("job → dir (-want +got):\n%s", diff)
	}
}

// TestPlanMatrixWithTheSGLangTwins (issue 29): the repository's specs and
// their SGLang twins in specs/sglang/ fan out together although each twin
// has its vLLM spec's file and server name: a twin's job and dir gain the
// folder that tells it apart, the vLLM specs' keep the names they had.
func TestPlanMatrixWithTheSGLangTwins(t *testing.T) {
	specs, err := filepath.Glob("../../specs/*.hcl")
	twins, err2 := filepath.Glob("../../specs/sglang/*.hcl")
	if err != nil || err2 != nil || len(twins) < 3 {
		t.Fatalf("specs: %v %v %v %v", specs, twins, err, err2)
	}
	var entries []planview.MatrixEntry
	if err := json.Unmarshal([]byte(runPlan(t, append([]string{"-format", "matrix"}, append(specs, twins...)...)...)), &entries); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range entries {
		got[e.Job] = e.Dir
	}
	want := map[string]string{
		"demo/qwen":                              "demo/qwen",
		"qwen3.5-4b-h200-dflash/qwen":            "qwen3.5-4b-h200-dflash/qwen",
		"glm-5.3-flash-nvfp4-h200x2/glm":         "glm-5.3-flash-nvfp4-h200x2/glm",
		"ling-3.0-flash-int4-h200x2/ling":        "ling-3.0-flash-int4-h200x2/ling",
		"sglang/qwen3.5-4b-h200-dflash/qwen":     "sglang/qwen3.5-4b-h200-dflash/qwen",
		"sglang/glm-5.3-flash-nvfp4-h200x2/glm":  "sglang/glm-5.3-flash-nvfp4-h200x2/glm",
		"sglang/ling-3.0-flash-int4-h200x2/ling": "sglang/ling-3.0-flash-int4-h200x2/ling",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("job → dir (-want +got):\n%s", diff)
	}
}
