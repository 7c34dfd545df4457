package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/exit"
)

// TestCleanUsage checks the arguments `slogate clean` refuses before it
// asks any runtime (the removal itself is tested end to end in
// e2e/container_test.go).
func TestCleanUsage(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		inError string
	}{
		{name: "unknown runtime", args: []string{"-runtime", "rkt"}, inError: `clean: -runtime is docker or podman, not "rkt"`},
		{name: "an argument", args: []string{"slogate-abc-qwen"}, inError: "clean: want exactly no arguments, got 1"},
		{name: "a prefix no container name can start with", args: []string{"-name-prefix", "-ci"},
			inError: `clean: -name-prefix "-ci" is not a container name prefix`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := cmdClean(context.Background(), &stdout, &stderr, tt.args)
			if exit.Code(err) != exit.Usage || !strings.Contains(err.Error(), tt.inError) {
				t.Errorf("error %v (exit %d), want exit 2 saying %q", err, exit.Code(err), tt.inError)
			}
		})
	}
}
