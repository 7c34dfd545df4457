package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/result"
)

func TestRunUsageErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.hcl")
	os.WriteFile(good, []byte(`server "q" {
  model = "m"
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
`), 0o644)
	bad := filepath.Join(dir, "bad.hcl")
	os.WriteFile(bad, []byte("server \"q\" {\n  modle = \"m\"\n}\n"), 0o644)
	// A readable baseline, so that a row about one flag fails only for that
	// flag (with a missing baseline every -tolerance row would exit 2 anyway).
	base := filepath.Join(dir, "base.json")
	if err := (&result.Results{Schema: result.Schema}).Write(base); err != nil {
		t.Fatal(err)
	}
	// Each row states the one message that names its fault: the exit code
	// alone is shared by every usage error.
	tests := []struct {
		name string
		args []string
		msg  string // in the error or on stderr
	}{
		{name: "no spec", args: nil, msg: "run: no SPEC given\nRun 'slogate help run' for usage."},
		{name: "bad -run regexp", args: []string{"-run", "(", good}, msg: "-run: error parsing regexp: missing closing )"},
		{name: "-sim with -endpoint", args: []string{"-sim", "-endpoint", "http://127.0.0.1:1", good}, msg: "-sim and -endpoint exclude each other"},
		{name: "bad -tolerance", args: []string{"-baseline", base, "-tolerance", "five", good}, msg: `invalid value "five" for -tolerance PCT: want a percentage such as 5% or a fraction such as 0.05`},
		{name: "negative -tolerance", args: []string{"-baseline", base, "-tolerance", "-5%", good}, msg: `invalid value "-5%" for -tolerance PCT`},
		{name: "tolerance above 100%", args: []string{"-baseline", base, "-tolerance", "5", good}, msg: `invalid value "5" for -tolerance PCT: want a percentage such as 5% or a fraction such as 0.05, from 0 to 100%`},
		{name: "unreadable -baseline", args: []string{"-baseline", filepath.Join(dir, "none.json"), good}, msg: "-baseline: open " + filepath.Join(dir, "none.json")},
		{name: "invalid spec prints diagnostics", args: []string{bad}, msg: `Did you mean "model"?`},
		{name: "unknown flag", args: []string{"-nope", good}, msg: "run: unknown flag -nope\nRun 'slogate help run' for usage."},
		{name: "bad -duration names the form", args: []string{good, "-duration", "60sec"}, msg: `invalid value "60sec" for -duration D: want a duration such as 2s, 500ms or 1m30s`},
		{name: "flag without its value", args: []string{good, "-out"}, msg: "run: -out needs a value: -out DIR"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := cmdRun(context.Background(), &stdout, &stderr, tc.args)
			if exit.Code(err) != exit.Usage {
				t.Fatalf("exit %d (%v), want 2", exit.Code(err), err)
			}
			got := stderr.String()
			if err != nil {
				got = err.Error() + "\n" + got
			}
			if !strings.Contains(got, tc.msg) {
				t.Errorf("the error and stderr lack %q:\n%s", tc.msg, got)
			}
		})
	}
}

// TestRunUnreachableEndpointIsInfra: an -endpoint that does not answer is
// an infrastructure error (exit 3) found before anything is printed or
// created.
func TestRunUnreachableEndpointIsInfra(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "s.hcl")
	os.WriteFile(spec, []byte(`server "q" {
  model = "m"
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
`), 0o644)
	var stdout, stderr bytes.Buffer
	out := filepath.Join(dir, "out")
	err := cmdRun(context.Background(), &stdout, &stderr, []string{"-endpoint", "http://127.0.0.1:1", "-out", out, spec})
	if exit.Code(err) != exit.Infra || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("exit %d (%v), want 3", exit.Code(err), err)
	}
	// Refused before the run prints its plan or creates its folder.
	if stdout.Len() > 0 {
		t.Errorf("stdout holds what a run that measured nothing should not print:\n%s", stdout.String())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("-out %s was created by a run that never measured (stat: %v)", out, err)
	}
}
