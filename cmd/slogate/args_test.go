package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/result"
)

// TestResultsFileArgs: every command that reads a results.json says what to
// pass when given a missing file, a folder or the wrong number of files.
// (-h and unknown flags of every command: TestCommandLine.)
func TestResultsFileArgs(t *testing.T) {
	dir := t.TempDir()
	good := writeRun(t, dir, "good.json", 6018.4)
	missing := filepath.Join(dir, "nope.json")
	tests := []struct {
		name    string
		args    []string
		code    int
		inError string // substring of the returned error ("" for none)
	}{
		{name: "diff missing file", args: []string{"diff", good, missing}, code: 2, inError: "diff: " + missing + " does not exist: pass the results.json"},
		{name: "codify missing file", args: []string{"codify", missing}, code: 2, inError: "codify: " + missing + " does not exist"},
		{name: "report missing file", args: []string{"report", missing}, code: 2, inError: "report: " + missing + " does not exist"},
		{name: "diff given a folder", args: []string{"diff", dir, good}, code: 2, inError: dir + " is a folder: pass the results.json inside it (" + filepath.Join(dir, "results.json") + ")"},
		{name: "report given a folder", args: []string{"report", dir}, code: 2, inError: "is a folder"},
		{name: "diff wrong count", args: []string{"diff", good}, code: 2, inError: "diff: want exactly two results files (A.json B.json), got 1\nRun 'slogate help diff' for usage."},
		{name: "codify wrong count", args: []string{"codify", good, good}, code: 2, inError: "codify: want exactly one results file, got 2\nRun 'slogate help codify' for usage."},
		{name: "report wrong count", args: []string{"report"}, code: 2, inError: "report: want exactly one results file, got 0\nRun 'slogate help report' for usage."},
		{name: "codify nothing measured says what to do", args: []string{"codify", writeEmptyRun(t, dir)}, code: 2, inError: "codify the results.json of a run that measured at least one cell"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := runProgram(context.Background(), &stdout, &stderr, tt.args)
			if got := exit.Code(err); got != tt.code {
				t.Fatalf("exit %d (%v), want %d\nstderr:\n%s", got, err, tt.code, stderr.String())
			}
			if tt.inError != "" && (err == nil || !strings.Contains(err.Error(), tt.inError)) {
				t.Errorf("error %v, want it to contain %q", err, tt.inError)
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
