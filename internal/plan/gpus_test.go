package plan

import (
	"testing"

	"github.com/slogate/slogate/internal/spec"
)

func TestGPUs(t *testing.T) {
	ptr := func(n int) *int { return &n }
	tests := []struct {
		name   string
		server spec.Server
		want   int
	}{
		{name: "nothing set is one GPU", server: spec.Server{}, want: 1},
		{name: "tensor parallel", server: spec.Server{TensorParallelSize: ptr(2)}, want: 2},
		{name: "tp times pp times dp", server: spec.Server{TensorParallelSize: ptr(2), PipelineParallelSize: ptr(2), DataParallelSize: ptr(3)}, want: 12},
		{name: "gpu_count label says more", server: spec.Server{TensorParallelSize: ptr(1), Labels: map[string]string{"gpu_count": "4"}}, want: 4},
		{name: "gpu_count label says less: the parallel sizes win", server: spec.Server{TensorParallelSize: ptr(4), Labels: map[string]string{"gpu_count": "2"}}, want: 4},
		{name: "gpu_count not a number is ignored", server: spec.Server{DataParallelSize: ptr(2), Labels: map[string]string{"gpu_count": "two"}}, want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := GPUs(&tt.server); got != tt.want {
				t.Errorf("GPUs = %d, want %d", got, tt.want)
			}
		})
	}
}
