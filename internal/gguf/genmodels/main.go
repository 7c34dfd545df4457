// Command genmodels writes the GGUF models of slogate's llama.cpp tests
// (internal/gguf's Models: tiny.gguf, deep.gguf, other.gguf) into a
// directory; the same bytes every time (TestModelDigests pins them).
//
//	go run ./internal/gguf/genmodels -out DIR
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/slogate/slogate/internal/gguf"
)

func main() {
	out := flag.String("out", "", "the directory to write the models into (created if missing)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: genmodels -out DIR")
		os.Exit(2)
	}
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "genmodels:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, m := range gguf.Models {
		f, err := m.Model.File()
		if err != nil {
			return err
		}
		path := filepath.Join(dir, m.File)
		// Written aside, then renamed: a reader never sees half a model.
		tmp, err := os.CreateTemp(dir, m.File+".*")
		if err != nil {
			return err
		}
		n, err := f.WriteTo(tmp)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(tmp.Name(), 0o644)
		}
		if err == nil {
			err = os.Rename(tmp.Name(), path)
		}
		if err != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("%s: %w", path, err)
		}
		fmt.Printf("%s: %d bytes, %d layers\n", path, n, m.Model.Layers)
	}
	return nil
}
