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
		path := filepath.Join(dir, m.Dir)
		n, err := m.Model.WriteDir(path)
		if err != nil {
			return err
		}
		fmt.Printf("%s: %d bytes, %d layers (%s)\n", path, n, m.Model.Layers, m.Model.Name)
	}
	return nil
}
