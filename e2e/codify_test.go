package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// codifySpec declares the matrix and prefill contexts writeResults measures.
const codifySpec = `server "demo" {
  model = "demo/model"
}

prefill {
  contexts = ["8K"]
}

matrix "decode" {
  contexts    = ["8K", "16K"]
  concurrency = [1, 64]
}
`

// TestCodifyValidates: `slogate codify` output pasted into a spec with the
// same matrix passes `slogate validate`.
func TestCodifyValidates(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "results.json")
	writeResults(t, res, 6018.4, 50)
	mark := newMark(t)
	r := slogate(t, mark, 20*time.Second, "", nil, "codify", "-margin", "5%", res)
	if r.Code != 0 {
		t.Fatalf("codify: exit %d\nstderr:\n%s", r.Code, r.Stderr)
	}
	for _, want := range []string{`expect "decode_total_tps"`, `"16K" = [null, null]`, `assert "decode_peak_total_tps"`, "tolerance = 0.05"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("codify output lacks %q:\n%s", want, r.Stdout)
		}
	}
	specPath := filepath.Join(dir, "codified.hcl")
	if err := os.WriteFile(specPath, []byte(codifySpec+"\n"+r.Stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	v := slogate(t, mark, 20*time.Second, "", nil, "validate", specPath)
	if v.Code != 0 {
		t.Fatalf("validate of the codified spec: exit %d\nstdout:\n%s\nstderr:\n%s\nspec:\n%s", v.Code, v.Stdout, v.Stderr, codifySpec+r.Stdout)
	}
}

func TestCodifyUsage(t *testing.T) {
	r := slogate(t, newMark(t), 20*time.Second, "", nil, "codify", filepath.Join(t.TempDir(), "missing.json"))
	if r.Code != 2 || !strings.Contains(r.Stderr, "missing.json") {
		t.Errorf("exit %d, want 2 with the file named on stderr:\n%s", r.Code, r.Stderr)
	}
}
