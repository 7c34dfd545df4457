package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
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
		// warnings is how many warnings a valid spec may print (all on
		// stderr, none an error).
		warnings int
	}{
		{
			name:       "real specs are valid",
			args:       specs,
			wantCode:   exit.OK,
			wantStdout: []string{"ok  ../../specs/demo.hcl", "ok  ../../specs/qwen3.5-4b-h200-dflash.hcl"},
			// The GLM seed measures above its max_num_seqs = 32 on purpose
			// (the seed report's "Requests queued" cells), and is told so.
			wantStderr: []string{"Warning: Concurrency above max_num_seqs", "on ../../specs/glm-5.3-flash-nvfp4-h200x2.hcl line 86", `Matrix "decode" runs 64, 128 streams`},
			warnings:   1,
		},
		{
			name:     "broken spec exits 2 with file, line and snippet",
			args:     []string{"../../internal/spec/testdata/invalid/unknown_attribute.hcl"},
			wantCode: exit.Usage,
			wantStderr: []string{
				"Error: Unsupported argument",
				"on ../../internal/spec/testdata/invalid/unknown_attribute.hcl line 3",
				`Did you mean "tensor_parallel_size"?`,
				"tensor_paralel_size  = 1",
			},
		},
		{
			name:       "one bad spec among good ones",
			args:       []string{"../../specs/demo.hcl", "../../internal/spec/testdata/invalid/no_server.hcl"},
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
		{name: "no spec", args: nil, wantCode: exit.Usage, wantStderr: []string{"validate: no SPEC given\nRun 'slogate help validate' for usage."}},
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
			err := runProgram(context.Background(), &stdout, &stderr, append([]string{"validate"}, tt.args...))
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
			if tt.wantCode == exit.OK && (strings.Count(stderr.String(), "Warning: ") != tt.warnings || strings.Contains(stderr.String(), "Error: ")) {
				t.Errorf("valid specs wrote to stderr (want %d warnings, no error):\n%s", tt.warnings, stderr.String())
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

// writeFiles writes each name → content below dir, creating folders.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const (
	goodSpec = "server \"q\" {\n  model = \"m\"\n}\nmatrix \"decode\" {\n  contexts    = [\"1K\"]\n  concurrency = [1]\n}\n"
	// badSpec misspells model on line 2, columns 3 to 8 (bytes 15 to 20),
	// so it has two errors: that argument, and model missing.
	badSpec = "server \"q\" {\n  modle = \"m\"\n}\n"
)

// TestValidateFolders: a folder stands for every *.hcl file below it, in
// lexical order; hidden folders and other files are skipped.
func TestValidateFolders(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"b.hcl":             goodSpec,
		"a/z.hcl":           goodSpec,
		"a/sub/bad.hcl":     badSpec,
		"a/.hidden/bad.hcl": badSpec,
		"a/notes.txt":       "not a spec",
		"empty/readme.md":   "no specs here",
	})
	stdout, stderr, code := cliRun(t, "validate", dir)
	if code != 2 {
		t.Fatalf("exit %d, want 2\n%s", code, stderr)
	}
	wantOK := "ok  " + filepath.Join(dir, "a/z.hcl") + "\nok  " + filepath.Join(dir, "b.hcl") + "\n"
	if stdout != wantOK {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, wantOK)
	}
	if n := strings.Count(stderr, "Error: Unsupported argument"); n != 1 || !strings.Contains(stderr, "on "+filepath.Join(dir, "a/sub/bad.hcl")+" line 2") {
		t.Errorf("want one diagnostic, for a/sub/bad.hcl (not the hidden folder's), got %d:\n%s", n, stderr)
	}
	if _, stderr, code := cliRun(t, "validate", filepath.Join(dir, "empty")); code != 2 ||
		!strings.Contains(stderr, "validate: no *.hcl spec file in folder "+filepath.Join(dir, "empty")) {
		t.Errorf("empty folder: exit %d, stderr:\n%s", code, stderr)
	}
	if stdout, _, code := cliRun(t, "validate", filepath.Join(dir, "b.hcl"), filepath.Join(dir, "a", "z.hcl")); code != 0 || !strings.Contains(stdout, "ok  "+filepath.Join(dir, "b.hcl")) {
		t.Errorf("files: exit %d, stdout:\n%s", code, stdout)
	}
}

// validateDoc is `slogate validate -json` as terraform tools read it.
type validateDoc struct {
	FormatVersion string `json:"format_version"`
	Valid         *bool  `json:"valid"`
	ErrorCount    *int   `json:"error_count"`
	WarningCount  *int   `json:"warning_count"`
	Diagnostics   []struct {
		Severity, Summary, Detail string
		Range                     *struct {
			Filename   string
			Start, End struct{ Line, Column, Byte int }
		}
		Snippet *struct {
			Context              *string
			Code                 string
			StartLine            int `json:"start_line"`
			HighlightStartOffset int `json:"highlight_start_offset"`
			HighlightEndOffset   int `json:"highlight_end_offset"`
			Values               []any
		}
	}
}

func TestValidateJSON(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"good.hcl": goodSpec, "sub/bad.hcl": badSpec})
	bad := filepath.Join(dir, "sub/bad.hcl")
	tests := []struct {
		name               string
		args               []string
		code               int
		valid              bool
		errors, warnings   int
		wantRange, snippet bool
	}{
		{name: "folder with an invalid spec", args: []string{"validate", "-json", dir}, code: 2, errors: 2, wantRange: true, snippet: true},
		{name: "-format json is the same", args: []string{"validate", dir, "-format", "json"}, code: 2, errors: 2, wantRange: true, snippet: true},
		{name: "valid spec", args: []string{"validate", "-json", filepath.Join(dir, "good.hcl")}, code: 0, valid: true},
		{name: "missing file has no range", args: []string{"validate", "-json", filepath.Join(dir, "nope.hcl")}, code: 2, errors: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := cliRun(t, tt.args...)
			if code != tt.code || stderr != "" {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			var doc validateDoc
			dec := json.NewDecoder(strings.NewReader(stdout))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("%v:\n%s", err, stdout)
			}
			if doc.FormatVersion != "1.0" || doc.Valid == nil || *doc.Valid != tt.valid || doc.ErrorCount == nil || *doc.ErrorCount != tt.errors ||
				doc.WarningCount == nil || *doc.WarningCount != tt.warnings || doc.Diagnostics == nil || len(doc.Diagnostics) != tt.errors+tt.warnings {
				t.Fatalf("document:\n%s", stdout)
			}
			if tt.errors == 0 {
				return
			}
			d := doc.Diagnostics[len(doc.Diagnostics)-1]
			if d.Severity != "error" || d.Summary == "" || d.Detail == "" || (d.Range != nil) != tt.wantRange || (d.Snippet != nil) != tt.snippet {
				t.Fatalf("diagnostic:\n%s", stdout)
			}
			if !tt.wantRange {
				return
			}
			r := d.Range
			if d.Summary != "Unsupported argument" || r.Filename != bad || r.Start.Line != 2 || r.Start.Column != 3 || r.Start.Byte != 15 ||
				r.End.Line != 2 || r.End.Column != 8 || r.End.Byte != 20 {
				t.Errorf("range of %q: %+v, want %s 2:3 (byte 15) to 2:8 (byte 20)", d.Summary, *r, bad)
			}
			s := d.Snippet
			if s.Code != `  modle = "m"` || s.StartLine != 2 || s.Code[s.HighlightStartOffset:s.HighlightEndOffset] != "modle" ||
				s.Context == nil || *s.Context != `server "q"` || s.Values == nil {
				t.Errorf("snippet: %+v (context %v)", *s, s.Context)
			}
		})
	}
}

// TestRunJSONInvalidSpec: under -json an invalid spec is a failed package,
// as `go test -json` reports one that does not build: its diagnostics as
// output events, then a fail event, all with Package = the spec file.
func TestRunJSONInvalidSpec(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.hcl")
	writeFiles(t, filepath.Dir(bad), map[string]string{"bad.hcl": badSpec})
	stdout, stderr, code := cliRun(t, "run", "-json", bad)
	if code != 2 {
		t.Fatalf("exit %d, want 2\n%s", code, stderr)
	}
	if !strings.Contains(stderr, `Did you mean "model"?`) {
		t.Errorf("stderr lacks the diagnostic:\n%s", stderr)
	}
	type event struct {
		Action, Package, Test string
		Output                *string
		Elapsed               *float64
	}
	var events []event
	dec := json.NewDecoder(strings.NewReader(stdout))
	for dec.More() {
		var e event
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("%v:\n%s", err, stdout)
		}
		events = append(events, e)
	}
	if len(events) < 3 || events[0].Action != "start" || events[len(events)-1].Action != "fail" || events[len(events)-1].Elapsed == nil {
		t.Fatalf("want start … fail, got:\n%s", stdout)
	}
	var output strings.Builder
	for _, e := range events {
		if e.Package != bad || e.Test != "" {
			t.Errorf("event %+v: want Package %s and no Test", e, bad)
		}
		if e.Action == "output" {
			output.WriteString(*e.Output)
		}
	}
	for _, want := range []string{"Error: Unsupported argument", "on " + bad + " line 2", `Did you mean "model"?`, "FAIL\t" + bad + "\t"} {
		if !strings.Contains(output.String(), want) {
			t.Errorf("output events lack %q:\n%s", want, output.String())
		}
	}
}
