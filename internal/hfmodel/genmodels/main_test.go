package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/slogate/slogate/internal/hfmodel"
)

// TestRunWritesModels: the files are the bytes hfmodel's TestModelDigests
// pins, and a second run over them leaves the same files and no others.
func TestRunWritesModels(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "models")
	for range 2 {
		if err := run(dir); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(hfmodel.Models) {
		t.Errorf("%d entries in %s, want %d", len(entries), dir, len(hfmodel.Models))
	}
	for _, m := range hfmodel.Models {
		files, err := m.Model.Files()
		if err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(filepath.Join(dir, m.Dir))
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != len(files) {
			t.Errorf("%s: %d files, want %d", m.Dir, len(entries), len(files))
		}
		for _, f := range files {
			got, err := os.ReadFile(filepath.Join(dir, m.Dir, f.Name))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, f.Data) {
				t.Errorf("%s/%s: %d bytes differ from the model's %d", m.Dir, f.Name, len(got), len(f.Data))
			}
		}
	}
}
