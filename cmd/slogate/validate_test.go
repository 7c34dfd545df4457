package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/exit"
)

func TestValidate(t *testing.T) {
	specs, _ := filepath.Glob("../../specs/*.hcl")
	if len(specs) < 4 {
		t.Fatalf("specs/*.hcl: found %d", len(specs))
	}
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string
		wantStderr []string
	}{
		{
			name:       "real specs are valid",
			args:       specs,
			wantCode:   exit.OK,
			wantStdout: []string{"ok  ../../specs/demo.hcl", "ok  ../../specs/qwen3.5-4b-h200-dflash.hcl"},
		},
		{
			name:     "broken spec exits 2 with file, line and snippet",
			args:     []string{"../../spec/testdata/invalid/unknown_attribute.hcl"},
			wantCode: exit.Usage,
			wantStderr: []string{
				"Error: Unsupported argument",
				"on ../../spec/testdata/invalid/unknown_attribute.hcl line 3",
				`Did you mean "tensor_parallel_size"?`,
				"tensor_paralel_size  = 1",
			},
		},
		{
			name:       "one bad spec among good ones",
			args:       []string{"../../specs/demo.hcl", "../../spec/testdata/invalid/no_server.hcl"},
			wantCode:   exit.Usage,
			wantStdout: []string{"ok  ../../specs/demo.hcl"},
			wantStderr: []string{"Missing server block"},
		},
		{
			name:       "-var sets a variable",
			args:       []string{"-var", "api_key=abc", "../../specs/qwen3.5-4b-h200-dflash.hcl"},
			wantCode:   exit.OK,
			wantStdout: []string{"ok  ../../specs/qwen3.5-4b-h200-dflash.hcl"},
		},
		{
			name:       "-var for an undeclared variable",
			args:       []string{"-var", "nope=1", "../../specs/demo.hcl"},
			wantCode:   exit.Usage,
			wantStderr: []string{"Value for undeclared variable"},
		},
		{
			name:       "malformed -var",
			args:       []string{"-var", "novalue", "../../specs/demo.hcl"},
			wantCode:   exit.Usage,
			wantStderr: []string{"is not NAME=VALUE"},
		},
		{name: "no spec", args: nil, wantCode: exit.Usage, wantStderr: []string{"Usage: slogate validate"}},
		{
			name:       "missing file",
			args:       []string{"nope.hcl"},
			wantCode:   exit.Usage,
			wantStderr: []string{"Cannot read spec file"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), &stdout, &stderr, append([]string{"validate"}, tt.args...))
			if got := exit.Code(err); got != tt.wantCode {
				t.Fatalf("exit code %d (%v), want %d\nstderr:\n%s", got, err, tt.wantCode, stderr.String())
			}
			for _, s := range tt.wantStdout {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout.String())
				}
			}
			for _, s := range tt.wantStderr {
				if !strings.Contains(stderr.String()+errString(err), s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr.String())
				}
			}
			if tt.wantCode == exit.OK && stderr.Len() > 0 {
				t.Errorf("valid specs wrote to stderr:\n%s", stderr.String())
			}
		})
	}
}

// errString is what main would print for err.
func errString(err error) string {
	if err == nil || exit.IsQuiet(err) {
		return ""
	}
	return err.Error()
}
