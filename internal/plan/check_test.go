package plan

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
)

// TestCheck: a matrix concurrency above a server's max_num_seqs (per
// engine) is a warning that points at the value; within it, none.
func TestCheck(t *testing.T) {
	src := `
server "q" {
  model        = "m"
  max_num_seqs = 8
}
server "dp" {
  model              = "m"
  max_num_seqs       = 8
  data_parallel_size = 2
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [4, 8, 16]
}
matrix "wide" {
  contexts    = ["1K"]
  concurrency = [32, 16]
}
`
	sp, diags := spec.LoadSource("check.hcl", []byte(src), spec.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got := Check(sp)
	if len(got) != 3 {
		t.Fatalf("%d diagnostics, want 3 (q's two matrices, dp's wide at 32 = 16 per engine; dp runs 16 as 8 per engine): %v", len(got), got)
	}
	if d := got[1]; !strings.Contains(d.Detail, `Matrix "wide" runs 32, 16 streams`) || !strings.Contains(d.Detail, "32 requests > max_num_seqs 8: 24 will wait") {
		t.Errorf("q's wide: %s", d.Detail)
	}
	if d := got[2]; !strings.Contains(d.Detail, `Matrix "wide" runs 32 streams, but server "dp"`) || !strings.Contains(d.Detail, "⌈32 ÷ 2⌉ = 16 requests per engine > max_num_seqs 8") {
		t.Errorf("dp's wide: %s", d.Detail)
	}
	d := got[0]
	if d.Severity != hcl.DiagWarning || d.Summary != "Concurrency above max_num_seqs" ||
		!strings.Contains(d.Detail, `Matrix "decode" runs 16 streams, but server "q" runs at most max_num_seqs = 8`) {
		t.Errorf("diagnostic = %s: %s", d.Summary, d.Detail)
	}
	if d.Subject == nil || d.Subject.Start.Line != 13 || string(src[d.Subject.Start.Byte:d.Subject.End.Byte]) != "16" {
		t.Errorf("subject = %v, want the 16 on line 13", d.Subject)
	}
}

// TestCheckNamesTheEnginesFlag: the warning and the plan's outlook of a
// cell above llama-server's slots name its own flag, --parallel, beside
// max_num_seqs (engine.Syntax.MaxNumSeqsName); vLLM's stay max_num_seqs.
func TestCheckNamesTheEnginesFlag(t *testing.T) {
	tests := []struct {
		name, engine, model string
		wantDetail, wantWhy string
		unwanted            string
	}{
		{name: "llama.cpp's --parallel", engine: "llamacpp", model: "/m/tiny.gguf",
			wantDetail: `runs at most max_num_seqs (--parallel) = 2 requests at once per engine (4 requests > --parallel 2: 2 will wait)`,
			wantWhy:    "4 requests > --parallel 2: 2 will wait"},
		{name: "vLLM's max_num_seqs", engine: "vllm", model: "m",
			wantDetail: `runs at most max_num_seqs = 2 requests at once per engine (4 requests > max_num_seqs 2: 2 will wait)`,
			wantWhy:    "4 requests > max_num_seqs 2: 2 will wait", unwanted: "--parallel"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := `
server "s" {
  engine       = "` + tc.engine + `"
  model        = "` + tc.model + `"
  max_num_seqs = 2
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1, 4]
}
`
			sp, diags := spec.LoadSource("check.hcl", []byte(src), spec.LoadOptions{})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			got := Check(sp)
			if len(got) != 1 || !strings.Contains(got[0].Detail, tc.wantDetail) ||
				(tc.unwanted != "" && strings.Contains(got[0].Detail, tc.unwanted)) {
				t.Fatalf("diagnostics %v, want one saying %q", got, tc.wantDetail)
			}
			ref := vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: "decode", Context: 1024, Concurrency: 4}
			if o := CellOutlook(sp.Servers[0], 256, ref); o.Status != vocab.StatusQueued || o.Reason != tc.wantWhy {
				t.Errorf("outlook %s %q, want queued %q", o.Status, o.Reason, tc.wantWhy)
			}
		})
	}
}
