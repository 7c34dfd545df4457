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
// GPUs the server occupies (GPUs); on a CPU build (engine.Syntax.CPUBuilds)
// the server time, which the estimate on one GPU equals, and the detail says
// so. Nothing is checked without a max_gpu_time.
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
		cpu := "" // an engine with CPU builds: without a GPU the budget counts server time
		switch {
		case srv.CPUBuild():
			cpu = fmt.Sprintf("; on a CPU build (device = \"cpu\") max_gpu_time counts the server time, %s", p.Estimated.Round(time.Second))
		case srv.SyntaxOf().CPUBuilds:
			cpu = fmt.Sprintf("; on a CPU build, no GPU found at run time, max_gpu_time counts the server time, %s", p.Estimated.Round(time.Second))
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "max_gpu_time below the minimum",
			Detail: fmt.Sprintf("max_gpu_time = %q cannot hold the minimum of server %q: its %d cells at %d repeats are estimated at %s of measuring × %d GPU(s) = %s GPU time (`slogate plan` shows the estimate%s). Raise max_gpu_time to at least %s, or measure fewer cells.",
				m.MaxGPUTimeText, srv.Name, len(p.Cells()), m.Repeat, p.Estimated.Round(time.Second), p.GPUs, need.Round(time.Second), cpu, need.Truncate(time.Minute)+time.Minute),
			Subject: m.MaxGPUTimeRange.Ptr(),
		})
	}
	return diags
}
