package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/exit"
)

func TestDispatch(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		inStdout string
		inStderr string
		inError  string
	}{
		{name: "no arguments shows the usage and exits 2", args: nil, code: 2, inStderr: "Usage: slogate COMMAND"},
		{name: "help", args: []string{"help"}, code: 0, inStderr: "Exit codes: 0 pass, 1 assertion failed"},
		{name: "-h", args: []string{"-h"}, code: 0, inStderr: "  codify    print HCL expect/assert blocks"},
		{name: "unknown command", args: []string{"bench"}, code: 2, inStderr: "Usage: slogate COMMAND", inError: `unknown command "bench": the commands are listed above`},
		{name: "version", args: []string{"version"}, code: 0, inStdout: "slogate " + version},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), &stdout, &stderr, tt.args)
			if got := exit.Code(err); got != tt.code {
				t.Fatalf("exit %d (%v), want %d", got, err, tt.code)
			}
			if tt.inError != "" && (err == nil || !strings.Contains(err.Error(), tt.inError)) {
				t.Errorf("error %v, want it to contain %q", err, tt.inError)
			}
			if !strings.Contains(stdout.String(), tt.inStdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.inStdout, stdout.String())
			}
			if !strings.Contains(stderr.String(), tt.inStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.inStderr, stderr.String())
			}
		})
	}
}
