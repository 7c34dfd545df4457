package planview

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

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
