// Command genmodels writes the Hugging Face models of slogate's vLLM
// tests (internal/hfmodel's Models: tiny, deep, other, one directory
// each) into a directory; the same bytes every time (TestModelDigests
// pins them).
//
//	go run ./internal/hfmodel/genmodels -out DIR
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/slogate/slogate/internal/hfmodel"
)

func main() {
	out := flag.String("out", "", "the directory to write the models' directories into (created if missing)")
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
	for _, m := range hfmodel.Models {
		files, err := m.Model.Files()
		if err != nil {
			return err
		}
		path := filepath.Join(dir, m.Dir)
		if err := os.MkdirAll(path, 0o755); err != nil {
			return err
		}
		var n int
		for _, f := range files {
			if err := write(filepath.Join(path, f.Name), f.Data); err != nil {
				return err
			}
			n += len(f.Data)
		}
		fmt.Printf("%s: %d bytes, %d layers (%s)\n", path, n, m.Model.Layers, m.Model.Name)
	}
	return nil
}

// write writes data aside, then renames it to path: a reader never sees
// half a file.
func write(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
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
	return nil
}
