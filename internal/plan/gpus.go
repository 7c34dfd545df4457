package plan

import (
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/spec"
)

// GPUs is how many GPUs the machine measuring srv needs, for a CI matrix
// (`slogate plan -format matrix`): tensor_parallel_size ×
// pipeline_parallel_size × data_parallel_size (each 1 when unset), or the
// spec's labels.gpu_count when that says more. The parallel sizes are what
// vLLM occupies; gpu_count is the machine the spec was written for (a spec
// measured on a two-GPU machine with tensor_parallel_size = 1 still wants a
// two-GPU runner). A gpu_count that is not a positive integer is ignored.
func GPUs(srv *spec.Server) int {
	n := 1
	for _, size := range []*int{srv.TensorParallelSize, srv.PipelineParallelSize, srv.DataParallelSize} {
		if size != nil && *size > 0 {
			n *= *size
		}
	}
	if c, err := strconv.Atoi(strings.TrimSpace(srv.Labels["gpu_count"])); err == nil && c > n {
		n = c
	}
	return n
}
