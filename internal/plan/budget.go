package plan

import (
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/spec"
)

// CheckBudget returns an error diagnostic, at measure.max_gpu_time, for
// each server of sp whose minimum run cannot fit in it: every cell at
// repeat = "auto"'s minimum, estimated as `slogate plan` does, times the
// GPUs the server occupies (GPUs). Nothing is checked without a
// max_gpu_time.
func CheckBudget(sp *spec.Spec) hcl.Diagnostics {
	m := sp.Measure
	if m == nil || m.MaxGPUTime <= 0 {
		return nil
	}
	var diags hcl.Diagnostics
	for _, srv := range sp.Servers {
		p := New(sp, srv, nil)
		need := p.GPUTime(p.Estimated)
		if need <= m.MaxGPUTime {
			continue
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "max_gpu_time below the minimum",
			Detail: fmt.Sprintf("max_gpu_time = %q cannot hold the minimum of server %q: its %d cells at %d repeats are estimated at %s of measuring × %d GPU(s) = %s GPU time (`slogate plan` shows the estimate). Raise max_gpu_time to at least %s, or measure fewer cells.",
				m.MaxGPUTimeText, srv.Name, len(p.Cells()), m.Repeat, p.Estimated.Round(time.Second), p.GPUs, need.Round(time.Second), need.Truncate(time.Minute)+time.Minute),
			Subject: m.MaxGPUTimeRange.Ptr(),
		})
	}
	return diags
}
