package plan

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/spec"
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
