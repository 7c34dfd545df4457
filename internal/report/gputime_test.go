package report

import (
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/result"
)

// TestGPUTimeText: a GPU server's cost in GPU-hours; a CPU server (an
// engine with CPU builds, no GPU found) says it has none and gives its
// server-seconds (docs/method.md#gpu-time).
func TestGPUTimeText(t *testing.T) {
	tests := []struct {
		name string
		g    result.GPUTime
		want string
	}{
		{name: "one GPU", g: result.GPUTime{GPUs: 1, ServerS: 53.8, GPUSeconds: 53.8}, want: "0.015 GPU-hours (53.8 s of server time × 1 GPU)"},
		{name: "boots", g: result.GPUTime{GPUs: 2, ServerS: 36, GPUSeconds: 72, Boots: 3}, want: "0.020 GPU-hours (36.0 s of server time × 2 GPU, 3 boots)"},
		{name: "a CPU server", g: result.GPUTime{CPU: true, ServerS: 42}, want: "none: a CPU server, no GPU found (42.0 s of server time)"},
		{name: "a CPU build by its spec", g: result.GPUTime{CPU: true, CPUBuild: true, ServerS: 42, Boots: 2}, want: "none: a CPU build, device = \"cpu\" (42.0 s of server time, 2 boots)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := GPUTimeText(&tt.g); got != tt.want {
				t.Errorf("GPUTimeText = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestCPUServerReport: a CPU server's report.md, report.html and JUnit
// call it a CPU server, not an unknown GPU, and give its server time
// where GPU time is shown; a server with no GPU found that is not a CPU
// build keeps "unknown GPU".
func TestCPUServerReport(t *testing.T) {
	tests := []struct {
		name         string
		g            *result.GPUTime
		want, unwant []string
	}{
		{name: "a CPU server", g: &result.GPUTime{CPU: true, ServerS: 42},
			want: []string{"# tiny.gguf on CPU (no GPU)", "Type: CPU server: no GPU found (nvidia-smi), so its cost is server time",
				"GPU time: none: a CPU server, no GPU found (42.0 s of server time)"},
			unwant: []string{"unknown GPU", "nvidia-smi not found", "GPU-hours"}},
		{name: "an unknown GPU", g: &result.GPUTime{GPUs: 1, ServerS: 42, GPUSeconds: 42},
			want:   []string{"# tiny.gguf on unknown GPU", "unknown (nvidia-smi not found; set labels.gpu in the spec)", "GPU time: 0.012 GPU-hours"},
			unwant: []string{"CPU"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &result.Results{Server: result.Server{Name: "tiny", Engine: "llamacpp", Model: "/m/tiny.gguf"}, GPUTime: tt.g}
			md, html, junit := renderReports(t, res)
			for _, w := range tt.want {
				if !strings.Contains(md, w) {
					t.Errorf("report.md lacks %q:\n%s", w, md)
				}
			}
			for _, w := range tt.unwant {
				if strings.Contains(md, w) {
					t.Errorf("report.md says %q:\n%s", w, md)
				}
			}
			title := strings.TrimPrefix(tt.want[0], "# ")
			if !strings.Contains(html, title) {
				t.Errorf("report.html lacks %q", title)
			}
			if !strings.Contains(junit, strings.TrimPrefix(title, "tiny.gguf on ")) {
				t.Errorf("JUnit's hardware property is not %q:\n%s", title, junit)
			}
		})
	}
}
