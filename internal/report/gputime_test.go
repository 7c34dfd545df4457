package report

import (
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := GPUTimeText(&tt.g); got != tt.want {
				t.Errorf("GPUTimeText = %q, want %q", got, tt.want)
			}
		})
	}
}
