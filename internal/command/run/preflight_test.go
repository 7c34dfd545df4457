package run

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/spec"
)

// TestPreflight: what would stop a server's run is found before anything
// is printed or created, every server's problem at once with the worst
// exit code; under -json the refused spec is a failed test2json package.
func TestPreflight(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	free := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}
	const cells = "matrix \"decode\" {\n  contexts    = [\"1K\"]\n  concurrency = [1]\n}\n"
	llama := fmt.Sprintf("server \"tiny\" {\n  engine = \"llamacpp\"\n  model  = \"/m/tiny.gguf\"\n  port   = %d\n}\n", free())
	vllm := func(name string, port int, command string) string {
		return fmt.Sprintf("server %q {\n  model   = \"m\"\n  host    = \"127.0.0.1\"\n  port    = %d\n  command = %q\n}\n", name, port, command)
	}
	tests := []struct {
		name     string
		src      string
		sim      bool
		json     bool
		code     int
		want     []string // in the error
		wantJSON string   // in stdout (-json)
	}{
		{name: "simulator refuses the engine", src: llama, sim: true, code: exit.Usage,
			want: []string{`-sim: slogate's simulator imitates vLLM and SGLang, not llama.cpp (server "tiny", engine = "llamacpp")`}},
		{name: "command not installed", src: vllm("q", free(), "vllm-not-installed"), code: exit.Infra,
			want: []string{`the server's command "vllm-not-installed" cannot be run: exec: "vllm-not-installed": executable file not found in $PATH`}},
		{name: "installed command on a free port", src: vllm("q", free(), "true")},
		{name: "the simulator needs no command", src: vllm("q", free(), "vllm-not-installed"), sim: true},
		{name: "port taken", src: vllm("q", taken, "true"), code: exit.Infra,
			want: []string{fmt.Sprintf("port 127.0.0.1:%d already accepts connections before the server was started", taken), fmt.Sprintf("`fuser -k %d/tcp`", taken)}},
		{name: "every server at once, the worst code", src: llama + vllm("busy", taken, "true"), sim: true, code: exit.Infra,
			want: []string{`not llama.cpp (server "tiny"`, fmt.Sprintf(`server "busy": port 127.0.0.1:%d already accepts connections`, taken)}},
		{name: "a server named as its command is still named", src: llama + vllm("vllm-not-installed", free(), "vllm-not-installed"), code: exit.Infra,
			want: []string{`server "vllm-not-installed": the server's command "vllm-not-installed" cannot be run`}},
		{name: "-json: a failed package", src: llama, sim: true, json: true, code: exit.Usage,
			want: []string{"-sim: slogate's simulator"}, wantJSON: `"Action":"fail"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s.hcl")
			sp, diags := spec.LoadSource(path, []byte(tc.src+cells), spec.LoadOptions{})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			var stdout bytes.Buffer
			o := Options{Specs: []*spec.Spec{sp}, Sim: tc.sim, JSON: tc.json, Stdout: &stdout, Stderr: &stdout, OutDir: filepath.Join(dir, "out")}
			err := o.preflight(context.Background())
			if exit.Code(err) != tc.code {
				t.Fatalf("exit %d (%v), want %d", exit.Code(err), err, tc.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if got := stdout.String(); (tc.wantJSON == "") != (got == "") || !strings.Contains(got, tc.wantJSON) {
				t.Errorf("stdout %q, want %q", got, tc.wantJSON)
			}
			if _, err := os.Stat(o.OutDir); !os.IsNotExist(err) {
				t.Errorf("preflight created %s", o.OutDir)
			}
		})
	}
}

// TestRemoveRun: the files of a run that started no server go, and its
// folder with them when the run made it; a folder that was there before
// stays, and so does anything not the run's.
func TestRemoveRun(t *testing.T) {
	tests := []struct {
		name     string
		existed  bool
		other    bool // a file that is not the run's
		wantGone bool
	}{
		{name: "folder the run made", wantGone: true},
		{name: "folder that was there", existed: true},
		{name: "folder holding another file", other: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			os.Mkdir(dir, 0o755)
			for _, name := range []string{"results.json", "cells.jsonl", "requests.jsonl"} {
				os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o644)
			}
			if tc.other {
				os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644)
			}
			removeRun(dir, tc.existed)
			_, err := os.Stat(dir)
			if gone := os.IsNotExist(err); gone != tc.wantGone {
				t.Fatalf("folder gone: %v, want %v", gone, tc.wantGone)
			}
			if _, err := os.Stat(filepath.Join(dir, "results.json")); !os.IsNotExist(err) {
				t.Errorf("results.json of a run that started no server is left")
			}
		})
	}
}
