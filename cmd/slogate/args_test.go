package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/result"
)

// TestResultsFileArgs: every command that reads a results.json says what to
// pass when given a missing file or a folder, and -h prints the usage and
// succeeds.
func TestResultsFileArgs(t *testing.T) {
	dir := t.TempDir()
	good := writeRun(t, dir, "good.json", 6018.4)
	missing := filepath.Join(dir, "nope.json")
	tests := []struct {
		name    string
		args    []string
		code    int
		inError string // substring of the returned error ("" for none)
		inUsage string // substring of stderr
	}{
		{name: "diff missing file", args: []string{"diff", good, missing}, code: 2, inError: "diff: " + missing + " does not exist: pass the results.json"},
		{name: "codify missing file", args: []string{"codify", missing}, code: 2, inError: "codify: " + missing + " does not exist"},
		{name: "report missing file", args: []string{"report", missing}, code: 2, inError: "report: " + missing + " does not exist"},
		{name: "diff given a folder", args: []string{"diff", dir, good}, code: 2, inError: dir + " is a folder: pass the results.json inside it (" + filepath.Join(dir, "results.json") + ")"},
		{name: "report given a folder", args: []string{"report", dir}, code: 2, inError: "is a folder"},
		{name: "diff wrong count", args: []string{"diff", good}, code: 2, inError: "diff: want exactly two results files (A.json B.json), got 1", inUsage: "Usage: slogate diff"},
		{name: "codify wrong count", args: []string{"codify", good, good}, code: 2, inError: "codify: want exactly one results file, got 2", inUsage: "Usage: slogate codify"},
		{name: "codify nothing measured says what to do", args: []string{"codify", writeEmptyRun(t, dir)}, code: 2, inError: "codify the results.json of a run that measured at least one cell"},
		{name: "diff -h", args: []string{"diff", "-h"}, code: 0, inUsage: "Usage: slogate diff"},
		{name: "codify -h", args: []string{"codify", "-h"}, code: 0, inUsage: "-margin PCT"},
		{name: "report -h", args: []string{"report", "-h"}, code: 0, inUsage: "-format FORMAT"},
		{name: "validate -h", args: []string{"validate", "-h"}, code: 0, inUsage: "Usage: slogate validate"},
		{name: "plan -h", args: []string{"plan", "-h"}, code: 0, inUsage: "Usage: slogate plan"},
		{name: "unknown flag", args: []string{"report", "-colour", good}, code: 2, inUsage: "flag provided but not defined: -colour"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), &stdout, &stderr, tt.args)
			if got := exit.Code(err); got != tt.code {
				t.Fatalf("exit %d (%v), want %d\nstderr:\n%s", got, err, tt.code, stderr.String())
			}
			if tt.inError != "" && (err == nil || !strings.Contains(err.Error(), tt.inError)) {
				t.Errorf("error %v, want it to contain %q", err, tt.inError)
			}
			if !strings.Contains(stderr.String(), tt.inUsage) {
				t.Errorf("stderr lacks %q:\n%s", tt.inUsage, stderr.String())
			}
		})
	}
}

// writeEmptyRun writes a results.json without a single cell.
func writeEmptyRun(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "empty.json")
	if err := (&result.Results{Server: result.Server{Name: "qwen"}}).Write(p); err != nil {
		t.Fatal(err)
	}
	return p
}
