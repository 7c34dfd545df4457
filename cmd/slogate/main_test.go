package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/exit"
)

// cliRun runs slogate with args and returns what main would show: stdout,
// stderr plus the error line main prints, and the exit code.
func cliRun(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errw bytes.Buffer
	err := runProgram(context.Background(), &out, &errw, args)
	if err != nil && !exit.IsQuiet(err) {
		errw.WriteString("slogate: " + err.Error() + "\n")
	}
	return out.String(), errw.String(), exit.Code(err)
}

func TestTopLevel(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // substring ("" = must be empty)
		stderr string // exact ("" = must be empty), or a substring when code is 2 and stdout is ""
	}{
		{name: "no arguments: help on stderr, exit 2", args: nil, code: 2, stderr: "Usage: slogate COMMAND [flags] [args]"},
		{name: "help", args: []string{"help"}, code: 0, stdout: "Exit codes:\n  0    pass\n  1    an assertion or baseline comparison failed\n"},
		{name: "-h", args: []string{"-h"}, code: 0, stdout: "  codify    HCL expect/assert blocks from a run\n"},
		{name: "--help", args: []string{"--help"}, code: 0, stdout: "Usage: slogate COMMAND [flags] [args]"},
		{name: "-help", args: []string{"-help"}, code: 0, stdout: "Run 'slogate help COMMAND'"},
		{name: "unknown command suggests the close one", args: []string{"runn"}, code: 2,
			stderr: "slogate: unknown command \"runn\"; did you mean \"run\"?\nRun 'slogate help' for the list of commands.\n"},
		{name: "unknown command suggests by prefix", args: []string{"valid", "x.hcl"}, code: 2,
			stderr: "slogate: unknown command \"valid\"; did you mean \"validate\"?\nRun 'slogate help' for the list of commands.\n"},
		{name: "unknown command far from all", args: []string{"bench"}, code: 2,
			stderr: "slogate: unknown command \"bench\"\nRun 'slogate help' for the list of commands.\n"},
		{name: "help of an unknown command", args: []string{"help", "dif"}, code: 2,
			stderr: "slogate: unknown command \"dif\"; did you mean \"diff\"?\nRun 'slogate help' for the list of commands.\n"},
		{name: "flag before the command", args: []string{"-v", "run"}, code: 2,
			stderr: "slogate: unknown flag -v: flags go after the command (slogate COMMAND [flags] [args])\nRun 'slogate help' for the list of commands.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := cliRun(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			if tt.stdout == "" && stdout != "" || !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout, want %q in it:\n%s", tt.stdout, stdout)
			}
			if tt.code == 2 && tt.stdout == "" && tt.args == nil {
				if !strings.Contains(stderr, tt.stderr) {
					t.Errorf("stderr lacks %q:\n%s", tt.stderr, stderr)
				}
			} else if stderr != tt.stderr {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr, tt.stderr)
			}
		})
	}
}

// TestVersion: the three spellings print the stamped version and commit and
// the Go version, one line on stdout.
func TestVersion(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "v9.8.7-test", "0123456789abcdef"
	want := "slogate v9.8.7-test (commit 0123456789abcdef) " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	for _, args := range [][]string{{"version"}, {"-version"}, {"--version"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			stdout, stderr, code := cliRun(t, args...)
			if code != 0 || stdout != want || stderr != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 0, stdout %q", code, stdout, stderr, want)
			}
		})
	}
	if _, stderr, code := cliRun(t, "version", "extra"); code != 2 || !strings.Contains(stderr, "version: want exactly no arguments, got 1") {
		t.Errorf("version extra: exit %d, stderr %q", code, stderr)
	}
}

// TestHelp: for every command, -h, --help and `slogate help CMD` print the
// same help on stdout and exit 0: the usage line, every flag with an
// upper-case placeholder chosen for it (not one derived from its type), and
// two or three examples.
func TestHelp(t *testing.T) {
	placeholder := regexp.MustCompile(`^[A-Z][A-Z_]*(=[A-Z]+|\.json)?$`)
	for _, c := range program.Commands {
		t.Run(c.Name, func(t *testing.T) {
			var first string
			for _, args := range [][]string{{c.Name, "-h"}, {c.Name, "--help"}, {"help", c.Name}} {
				stdout, stderr, code := cliRun(t, args...)
				if code != 0 || stderr != "" {
					t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
				}
				if !strings.HasPrefix(stdout, "Usage: slogate "+c.Name) {
					t.Fatalf("%v: help does not start with the usage line:\n%s", args, stdout)
				}
				if first == "" {
					first = stdout
				} else if stdout != first {
					t.Errorf("%v prints another help than %s -h:\n%s", args, c.Name, stdout)
				}
			}
			_, examples, ok := strings.Cut(first, "\nExamples:\n")
			if n := strings.Count("\n"+examples, "\n  slogate "); !ok || n < 2 || n > 3 {
				t.Errorf("want two or three examples, found %d:\n%s", n, first)
			}
			if c.Name == "sim" {
				return // vllm serve's flags, documented (and checked) by the simulator itself
			}
			for _, line := range strings.Split(first, "\n") {
				f := strings.Fields(line)
				if !strings.HasPrefix(line, "  -") || len(f) < 2 {
					continue
				}
				if p := f[1]; !placeholder.MatchString(p) && strings.ToLower(p) != p || slices.Contains([]string{"VALUE", "N", "X"}, p) {
					t.Errorf("flag %s: placeholder %q is not a chosen upper-case name", f[0], p)
				}
			}
		})
	}
}

// TestCommandLine: for every command, flags go before or after the
// arguments, with one or two dashes, "--" ends them, and a flag the command
// does not know is one line that suggests the closest one, plus a line
// pointing at the command's help, exit 2, nothing else.
func TestCommandLine(t *testing.T) {
	dir := t.TempDir()
	res := writeRun(t, dir, "a.json", 6018.4)
	demo := "../../specs/demo.hcl"
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // substring
		stderr string // exact when code is 2, else substring
	}{
		{name: "run: flags after the spec", args: []string{"run", demo, "-sim", "-endpoint", "http://127.0.0.1:1"}, code: 2,
			stderr: "slogate: run: -sim and -endpoint exclude each other: -sim launches a simulator, -endpoint measures a server already running\nRun 'slogate help run' for usage.\n"},
		{name: "run: double dashes", args: []string{"run", "--sim", demo, "--endpoint=http://127.0.0.1:1"}, code: 2,
			stderr: "slogate: run: -sim and -endpoint exclude each other: -sim launches a simulator, -endpoint measures a server already running\nRun 'slogate help run' for usage.\n"},
		{name: "run: tolerance as a percentage", args: []string{"run", demo, "-tolerance", "7.5%", "-sim", "-endpoint", "x"}, code: 2,
			stderr: "slogate: run: -sim and -endpoint exclude each other: -sim launches a simulator, -endpoint measures a server already running\nRun 'slogate help run' for usage.\n"},
		{name: "run: tolerance as a fraction", args: []string{"run", demo, "-tolerance=0.075", "-sim", "-endpoint", "x"}, code: 2,
			stderr: "slogate: run: -sim and -endpoint exclude each other: -sim launches a simulator, -endpoint measures a server already running\nRun 'slogate help run' for usage.\n"},
		{name: "run: unknown flag", args: []string{"run", demo, "-simm"}, code: 2,
			stderr: "slogate: run: unknown flag -simm; did you mean -sim?\nRun 'slogate help run' for usage.\n"},
		{name: "run: unknown double-dash flag", args: []string{"run", "--durration", "2s", demo}, code: 2,
			stderr: "slogate: run: unknown flag --durration; did you mean --duration?\nRun 'slogate help run' for usage.\n"},
		{name: "run: bad duration", args: []string{"run", demo, "-duration", "60sec"}, code: 2,
			stderr: "slogate: run: invalid value \"60sec\" for -duration D: want a duration such as 2s, 500ms or 1m30s\nRun 'slogate help run' for usage.\n"},
		{name: "validate: flags after the spec", args: []string{"validate", demo, "-var", "nope=1"}, code: 2, stderr: "Value for undeclared variable"},
		{name: "validate: -- ends the flags", args: []string{"validate", "--", "-x.hcl"}, code: 2, stderr: "Cannot read spec file"},
		{name: "validate: unknown flag", args: []string{"validate", "-jsn", demo}, code: 2,
			stderr: "slogate: validate: unknown flag -jsn; did you mean -json?\nRun 'slogate help validate' for usage.\n"},
		{name: "plan: flags after the spec", args: []string{"plan", demo, "--format=json"}, code: 0, stdout: "{\n  \"servers\": ["},
		{name: "plan: unknown flag", args: []string{"plan", demo, "-fromat", "json"}, code: 2,
			stderr: "slogate: plan: unknown flag -fromat; did you mean -format?\nRun 'slogate help plan' for usage.\n"},
		{name: "plan: bad format", args: []string{"plan", demo, "-format", "yaml"}, code: 2,
			stderr: "slogate: plan: -format is text, json or matrix, not \"yaml\"\nRun 'slogate help plan' for usage.\n"},
		{name: "diff: flags after the files", args: []string{"diff", res, res, "-tolerance", "1%"}, code: 0, stdout: "tolerance 1%"},
		{name: "diff: unknown flag", args: []string{"diff", res, res, "-tolerence", "1%"}, code: 2,
			stderr: "slogate: diff: unknown flag -tolerence; did you mean -tolerance?\nRun 'slogate help diff' for usage.\n"},
		{name: "report: flags after the file", args: []string{"report", res, "-format", "json"}, code: 0, stdout: `"schema": "slogate/results/v2"`},
		{name: "report: unknown flag", args: []string{"report", "-colour", res}, code: 2,
			stderr: "slogate: report: unknown flag -colour\nRun 'slogate help report' for usage.\n"},
		{name: "report: bad format", args: []string{"report", res, "-format", "pdf"}, code: 2,
			stderr: "slogate: report: -format is md, html, json or csv, not \"pdf\"\nRun 'slogate help report' for usage.\n"},
		{name: "codify: flags after the file", args: []string{"codify", res, "-margin", "0.2", "-force"}, code: 0, stdout: "tolerance = 0.2"},
		{name: "codify: unknown flag", args: []string{"codify", res, "-margn", "5%"}, code: 2,
			stderr: "slogate: codify: unknown flag -margn; did you mean -margin?\nRun 'slogate help codify' for usage.\n"},
		{name: "codify: flag without value", args: []string{"codify", res, "-margin"}, code: 2,
			stderr: "slogate: codify: -margin needs a value: -margin PCT\nRun 'slogate help codify' for usage.\n"},
		{name: "merge: flags after the folders", args: []string{"merge", dir, "-out", filepath.Join(dir, "m")}, code: 2, stderr: "no results.json"},
		{name: "merge: -out is required", args: []string{"merge", dir}, code: 2,
			stderr: "slogate: merge: -out DIR is required\nRun 'slogate help merge' for usage.\n"},
		{name: "merge: unknown flag", args: []string{"merge", "-outt", "m", dir}, code: 2,
			stderr: "slogate: merge: unknown flag -outt; did you mean -out?\nRun 'slogate help merge' for usage.\n"},
		{name: "version: unknown flag", args: []string{"version", "-short"}, code: 2,
			stderr: "slogate: version: unknown flag -short\nRun 'slogate help version' for usage.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := cliRun(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, stdout)
			}
			exact := tt.code == 2 && strings.HasPrefix(tt.stderr, "slogate: ")
			if exact && stderr != tt.stderr || !exact && !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr, tt.stderr)
			}
		})
	}
}

// TestToleranceZeroRefused: every command that compares refuses
// -tolerance 0, however written, with the reason, before it reads
// anything: a comparison cannot call a change within ±0, and no part of
// it reads 0 as another tolerance.
func TestToleranceZeroRefused(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{name: "run", args: []string{"run", "-baseline", "base.json", "-tolerance", "0", "spec.hcl"}},
		{name: "diff", args: []string{"diff", "-tolerance", "0%", "a.json", "b.json"}},
		{name: "bisect", args: []string{"bisect", "-tolerance", "0", "-good", "a", "-bad", "b", "spec.hcl"}},
		{name: "interleave", args: []string{"interleave", "-tolerance", "0.0", "spec.hcl"}},
		{name: "noise", args: []string{"noise", "-tolerance", "0", "a.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := cliRun(t, tt.args...)
			want := `invalid value "` + tt.args[slices.Index(tt.args, "-tolerance")+1] + `" for -tolerance PCT: a comparison cannot decide a change within a tolerance of 0: every interval has width, so no cell could ever be called unchanged; give the smallest change that matters, such as 1%`
			if code != exit.Usage || !strings.Contains(stderr, want) {
				t.Errorf("exit %d, want 2 saying %q:\n%s", code, want, stderr)
			}
		})
	}
}
