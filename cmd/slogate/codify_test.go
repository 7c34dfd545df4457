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

func TestCmdCodify(t *testing.T) {
	dir := t.TempDir()
	good := writeRun(t, dir, "good.json", 6018.4)
	empty := filepath.Join(dir, "empty.json")
	if err := (&result.Results{Server: result.Server{Name: "qwen"}}).Write(empty); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		code     int
		inStdout []string
		inError  string // substring of the returned error (usage errors)
	}{
		{name: "default margin", args: []string{good}, code: 0, inStdout: []string{`expect "decode_total_tps"`, "tolerance = 0.1", `decode["8K"][64].total_tps >= 5410`}},
		{name: "margin after the file", args: []string{good, "-margin", "5%"}, code: 0, inStdout: []string{"tolerance = 0.05", `decode["8K"][64].total_tps >= 5710`}},
		{name: "no file", args: nil, code: 2, inError: "codify: want exactly one results file, got 0"},
		{name: "bad margin", args: []string{"-margin", "lots", good}, code: 2, inError: `codify: -margin: "lots" is not a percentage`},
		{name: "missing file", args: []string{filepath.Join(dir, "nope.json")}, code: 2, inError: "nope.json does not exist"},
		{name: "nothing measured", args: []string{empty}, code: 2, inError: "the run has no measured cell to codify"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), &stdout, &stderr, append([]string{"codify"}, tc.args...))
			if got := exit.Code(err); got != tc.code {
				t.Fatalf("exit %d (%v), want %d\nstdout:\n%s\nstderr:\n%s", got, err, tc.code, stdout.String(), stderr.String())
			}
			for _, s := range tc.inStdout {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout.String())
				}
			}
			if tc.inError != "" && (err == nil || !strings.Contains(err.Error(), tc.inError)) {
				t.Errorf("error %v, want it to contain %q", err, tc.inError)
			}
		})
	}
}
