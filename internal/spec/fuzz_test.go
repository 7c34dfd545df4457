package spec

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/slogate/slogate/internal/requests"
)

// FuzzLoad feeds arbitrary sources to the loader: it must never panic and
// must always return a Spec with Files set. Seeded with every fixture and
// every real spec. Run with: go test -fuzz FuzzLoad ./spec
func FuzzLoad(f *testing.F) {
	var paths []string
	for _, glob := range []string{"testdata/valid/*.hcl", "testdata/invalid/*.hcl", "../../specs/*.hcl"} {
		m, _ := filepath.Glob(glob)
		paths = append(paths, m...)
	}
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	// The fuzzed file lives in testdata/, so file() reads stay in a folder
	// of fixtures.
	name := filepath.Join("testdata", "fuzz.hcl")
	f.Fuzz(func(t *testing.T, src []byte) {
		s, diags := LoadSource(name, src, LoadOptions{
			Vars:        map[string]string{"api_key": "k"},
			LookupEnv:   testEnv,
			ReadDataset: requests.ReadDataset,
		})
		if s == nil || s.Files == nil || s.Measure == nil {
			t.Fatalf("Load returned %+v", s)
		}
		if !diags.HasErrors() {
			for _, srv := range s.Servers {
				_ = srv.RedactedArgv()
				if srv.Speculative != nil {
					_ = srv.Speculative.JSON()
				}
			}
		}
		for _, d := range diags {
			if d.Summary == "" {
				t.Errorf("diagnostic without summary: %+v", d)
			}
		}
	})
}
