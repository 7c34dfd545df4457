package planview

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/spec"
)

// TestRateSearchLine: the plan shows a rate search's range, precision and
// bound on probes and windows (max_windows when written, else the
// default 4), then its check windows at the answer when check_windows is
// set, in text and in JSON (check_windows omitted when none).
func TestRateSearchLine(t *testing.T) {
	const line = "  search: sim/search/capacity/rate=R  traffic chat, rate in [8, 40] req/s to 5%, at most 8 probes of at most 4 windows"
	tests := []struct {
		name     string
		check    string // check_windows and max_windows as written
		wantText string
		wantJSON int // check_windows in the JSON; 0: absent
		wantMax  int // max_windows in the JSON
	}{
		{name: "no check windows", wantText: line + "\n", wantMax: 4},
		{name: "24 check windows", check: "check_windows = 24", wantText: line + ", then 24 check windows at the answer\n", wantJSON: 24, wantMax: 4},
		{name: "16 windows a probe", check: "max_windows = 16", wantText: strings.Replace(line, "at most 4 windows", "at most 16 windows", 1) + "\n", wantMax: 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := `server "sim" { model = "m" }
traffic "chat" {
  context = "1K"
  rate    = [8]
}
search "capacity" {
  traffic   = "chat"
  rate      = [8, 40]
  precision = "5%"
  ` + tt.check + `
  objective = cell.goodput_share >= 0.95
}
`
			sp, diags := spec.LoadSource("s.hcl", []byte(src), spec.LoadOptions{})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			doc := New([]*spec.Spec{sp}, nil)
			var b bytes.Buffer
			doc.WriteText(&b)
			if !strings.Contains(b.String(), tt.wantText) {
				t.Errorf("plan lacks %q:\n%s", tt.wantText, b.String())
			}
			out, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Servers []struct {
					Searches []map[string]any `json:"searches"`
				} `json:"servers"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			s := got.Servers[0].Searches[0]
			n, ok := s["check_windows"]
			switch {
			case tt.wantJSON == 0 && ok:
				t.Errorf("JSON has check_windows %v, want it omitted: %s", n, out)
			case tt.wantJSON > 0 && n != float64(tt.wantJSON):
				t.Errorf("JSON check_windows %v, want %d: %s", n, tt.wantJSON, out)
			}
			if m := s["max_windows"]; m != float64(tt.wantMax) {
				t.Errorf("JSON max_windows %v, want %d: %s", m, tt.wantMax, out)
			}
		})
	}
}

// TestCPUBuildCost: a server with device = "cpu" costs server time, no
// GPU time, in text and in JSON (no GPUs, no GPU-hours); one without
// device keeps its GPU-hours.
func TestCPUBuildCost(t *testing.T) {
	tests := []struct {
		name     string
		device   string
		wantText string
		wantGPUs int
	}{
		{name: "CPU build", device: `device = "cpu"`, wantText: "  GPU time: none, a CPU build (device = \"cpu\"): the cost is ", wantGPUs: 0},
		{name: "GPU build", wantText: "  GPU time: 0.00", wantGPUs: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "server \"s\" {\n  model = \"m\"\n  gpu_memory_utilization = 0.1\n  " + tt.device + "\n}\nmatrix \"decode\" {\n  contexts = [\"1K\"]\n  concurrency = [1]\n}\n"
			sp, diags := spec.LoadSource("s.hcl", []byte(src), spec.LoadOptions{})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			doc := New([]*spec.Spec{sp}, nil)
			var b bytes.Buffer
			doc.WriteText(&b)
			if !strings.Contains(b.String(), tt.wantText) {
				t.Errorf("plan lacks %q:\n%s", tt.wantText, b.String())
			}
			if got := doc.Servers[0]; got.GPUs != tt.wantGPUs || (tt.wantGPUs == 0) != (got.GPUHours == 0) {
				t.Errorf("GPUs %d, GPU-hours %g; want %d GPUs", got.GPUs, got.GPUHours, tt.wantGPUs)
			}
		})
	}
}

// update rewrites the golden files: go test ./internal/views/planview -update
var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestExampleSpecPlans: the plan of each engine's example spec, as
// committed, against its golden file (regenerate with `go test
// ./internal/views/planview -update` and review the diff): the launch,
// the cells, what each assert needs (correctness["greedy"] read by an
// assert is named, not "no cells"), and the correctness blocks with their
// prompts, tokens, concurrency and logprobs, and a rate search's
// measuring time with its range, in text and JSON.
func TestExampleSpecPlans(t *testing.T) {
	tests := []struct {
		name, spec string
		want       []string // lines the text must hold, besides the golden
	}{
		{name: "llamacpp-tiny", spec: "../../../specs/llamacpp/tiny.hcl", want: []string{
			"    tiny/assert/answers  needs correctness greedy\n",
			"  correctness: after the cells, outside every timed window (not in the estimate)\n",
			"    tiny/correctness/greedy  12 prompts of prompts.jsonl (completions API), 24 tokens each, 1 at a time, top-5 logprobs\n",
		}},
		// The search's measuring time and its range at the spec's 10 s
		// windows (docs/method.md#rate-search-time): 6 probes of 11.9 s
		// windows (1 s warm-up, 10 s, a drain of 250 ms + 64 × 10 ms).
		{name: "llamacpp-search", spec: "../../../specs/llamacpp/search.hcl", want: []string{
			"  search: tiny/search/capacity/rate=R  traffic steady, rate in [3, 24] req/s to 25%, at most 6 probes of at most 4 windows\n",
			"          about 4m40s measuring (18 windows), 24s to 11m50s (2 to 24 windows: the range's bottom failing the objective in two, to every probe at max_windows past the capacity)\n",
			`"estimated_low_s": 24,`,
		}},
		{name: "vllm-cpu-tiny", spec: "../../../specs/vllm-cpu/tiny.hcl", want: []string{
			"    tiny/correctness/batched  12 prompts of prompts.jsonl (completions API), 32 tokens each, 4 at a time, top-5 logprobs\n",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := os.ReadFile(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			sp, diags := spec.LoadSource(tt.spec, src, spec.LoadOptions{ReadDataset: requests.ReadDataset, ReadItems: requests.ReadItems})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			sp.Filename = filepath.Base(tt.spec) // the golden does not depend on where the test runs
			doc := New([]*spec.Spec{sp}, nil)
			var b bytes.Buffer
			doc.WriteText(&b)
			b.WriteString("\n")
			enc := json.NewEncoder(&b)
			enc.SetIndent("", "  ")
			if err := enc.Encode(doc); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("plan lacks %q:\n%s", w, b.String())
				}
			}
			golden := filepath.Join("testdata", tt.name+".plan")
			if *update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), b.String()); diff != "" {
				t.Errorf("plan of %s differs from %s (-want +got; go test ./internal/views/planview -update rewrites it):\n%s", tt.spec, golden, diff)
			}
		})
	}
}
