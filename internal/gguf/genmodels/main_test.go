package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/slogate/slogate/internal/gguf"
)

// TestRunWritesModels: the files are the bytes gguf's TestModelDigests
// pins, and a second run over them leaves the same files.
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
	if len(entries) != len(gguf.Models) {
		t.Errorf("%d files in %s, want %d", len(entries), dir, len(gguf.Models))
	}
	for _, m := range gguf.Models {
		got, err := os.ReadFile(filepath.Join(dir, m.File))
		if err != nil {
			t.Fatal(err)
		}
		f, err := m.Model.File()
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if _, err := f.WriteTo(&want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s: %d bytes differ from the model's %d", m.File, len(got), want.Len())
		}
	}
}
