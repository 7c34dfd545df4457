package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

func TestCmdCodify(t *testing.T) {
	dir := t.TempDir()
	good := finishedRun(t, writeRun(t, dir, "good.json", 6018.4), func(*result.Results) {})
	interrupted := finishedRun(t, writeRun(t, dir, "interrupted.json", 6018.4), func(r *result.Results) {
		r.Interrupted, r.Error = true, "interrupted by SIGINT"
	})
	errored := finishedRun(t, writeRun(t, dir, "errored.json", 6018.4), func(r *result.Results) {
		r.Decode[1].Status, r.Decode[1].Reason = vocab.StatusError, "HTTP 500 from /v1/completions"
	})
	empty := filepath.Join(dir, "empty.json")
	if err := (&result.Results{Server: result.Server{Name: "qwen"}}).Write(empty); err != nil {
		t.Fatal(err)
	}
	finishedRun(t, empty, func(*result.Results) {})
	tests := []struct {
		name     string
		args     []string
		code     int
		inStdout []string
		inError  string   // substring of the returned error (usage errors)
		inStderr []string // substrings of stderr, or of the returned error that main prints there
		inFile   string   // -o FILE: holds the blocks, and stdout is empty
	}{
		{name: "default margin", args: []string{good}, code: 0, inStdout: []string{`expect "decode_total_tps"`, "tolerance = 0.1", `decode["8K"][64].total_tps >= 5410`}},
		{name: "margin after the file", args: []string{good, "-margin", "5%"}, code: 0, inStdout: []string{"tolerance = 0.05", `decode["8K"][64].total_tps >= 5710`}},
		{name: "no file", args: nil, code: 2, inError: "codify: want exactly one results file, got 0"},
		{name: "bad margin", args: []string{"-margin", "lots", good}, code: 2, inError: `codify: invalid value "lots" for -margin PCT: want a percentage such as 5% or a fraction such as 0.05`},
		{name: "margin as a fraction", args: []string{good, "-margin=0.05"}, code: 0, inStdout: []string{"tolerance = 0.05", `decode["8K"][64].total_tps >= 5710`}},
		{name: "-o writes the file, not stdout", args: []string{"-o", filepath.Join(dir, "slo.hcl"), good}, code: 0, inFile: filepath.Join(dir, "slo.hcl")},
		{name: "missing file", args: []string{filepath.Join(dir, "nope.json")}, code: 2, inError: "nope.json does not exist"},
		{name: "nothing measured", args: []string{empty}, code: 2, inError: "the run has no measured cell to codify"},
		{name: "interrupted run is refused", args: []string{interrupted}, code: 2,
			inError: "refusing to turn this run into SLOs", inStderr: []string{"the run did not finish: it was interrupted (interrupted by SIGINT)", "-force"}},
		{name: "errored cell is refused", args: []string{errored}, code: 2,
			inError: "refusing to turn this run into SLOs", inStderr: []string{"1 cell could not be measured:", "decode/ctx=8K/conc=64: HTTP 500 from /v1/completions"}},
		{name: "-force codifies the measured cells and says what it left out", args: []string{"-force", errored}, code: 0,
			inStdout: []string{`"8K" = [408.2, null]`, "#   decode/ctx=8K/conc=64: HTTP 500 from /v1/completions"},
			inStderr: []string{"codify: -force: " + errored + ": values from the measured cells only, although", "decode/ctx=8K/conc=64: HTTP 500 from /v1/completions"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := runProgram(context.Background(), &stdout, &stderr, append([]string{"codify"}, tc.args...))
			if got := exit.Code(err); got != tc.code {
				t.Fatalf("exit %d (%v), want %d\nstdout:\n%s\nstderr:\n%s", got, err, tc.code, stdout.String(), stderr.String())
			}
			for _, s := range tc.inStdout {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout.String())
				}
			}
			if tc.inFile != "" {
				b, err := os.ReadFile(tc.inFile)
				if err != nil || !strings.Contains(string(b), `expect "decode_total_tps"`) || stdout.Len() > 0 {
					t.Errorf("-o %s: %v\n%s\nstdout:\n%s", tc.inFile, err, b, stdout.String())
				}
			}
			if tc.inError != "" && (err == nil || !strings.Contains(err.Error(), tc.inError)) {
				t.Errorf("error %v, want it to contain %q", err, tc.inError)
			}
			stderrText := stderr.String()
			if err != nil {
				stderrText += err.Error() // main prints it
			}
			for _, s := range tc.inStderr {
				if !strings.Contains(stderrText, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderrText)
				}
			}
		})
	}
}

// finishedRun rewrites the results at path as a run that finished, then
// applies change.
func finishedRun(t *testing.T, path string, change func(*result.Results)) string {
	t.Helper()
	r, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	r.Started = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	r.Finished = r.Started.Add(20 * time.Minute)
	change(r)
	if err := r.Write(path); err != nil {
		t.Fatal(err)
	}
	return path
}
