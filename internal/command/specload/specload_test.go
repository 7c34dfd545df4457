package specload

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/spec"
)

// marker is a fixture's expected diagnostic: "# ERROR: Summary" or
// "# WARNING: Summary" at the end of the line it is reported on.
var marker = regexp.MustCompile(`#\s*(ERROR|WARNING):\s*(.+?)\s*$`)

// expected are the diagnostics path's markers state, as "line: SEVERITY:
// summary", sorted.
func expected(t *testing.T, path string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, line := range strings.Split(string(src), "\n") {
		if m := marker.FindStringSubmatch(line); m != nil {
			out = append(out, strconv.Itoa(i+1)+": "+m[1]+": "+m[2])
		}
	}
	slices.Sort(out)
	return out
}

// got are diags in expected's form.
func got(diags hcl.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		sev := "ERROR"
		if d.Severity == hcl.DiagWarning {
			sev = "WARNING"
		}
		line := 0
		if d.Subject != nil {
			line = d.Subject.Start.Line
		}
		out = append(out, strconv.Itoa(line)+": "+sev+": "+d.Summary)
	}
	slices.Sort(out)
	return out
}

// TestLoadFilesFixtures: each fixture in testdata gets exactly the
// diagnostics its comments state, at their lines: the language's, the
// conditions' and the plan's in one pass, the plan's only for a spec
// without errors.
func TestLoadFilesFixtures(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.hcl")
	if err != nil || len(paths) < 5 {
		t.Fatalf("testdata/*.hcl: %d files, %v", len(paths), err)
	}
	files := LoadFiles(paths, nil)
	if len(files) != len(paths) {
		t.Fatalf("%d files loaded of %d", len(files), len(paths))
	}
	for i, f := range files {
		t.Run(filepath.Base(f.Path), func(t *testing.T) {
			if f.Path != paths[i] {
				t.Errorf("file %d is %s, want %s: in the order given", i, f.Path, paths[i])
			}
			want, have := expected(t, f.Path), got(f.Diags)
			if !slices.Equal(want, have) {
				t.Errorf("diagnostics:\n  %s\nwant (the fixture's comments):\n  %s", strings.Join(have, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
}

// TestLoad: the valid specs come back in order; any error is a quiet
// usage error (exit 2, its diagnostics already shown on stderr with file,
// line and snippet); warnings are shown without failing.
func TestLoad(t *testing.T) {
	tests := []struct {
		name      string
		paths     []string
		wantSpecs int
		wantCode  int
		stderr    []string
	}{
		{name: "valid", paths: []string{"testdata/valid.hcl"}, wantSpecs: 1, wantCode: exit.OK},
		{name: "a warning does not fail", paths: []string{"testdata/plan_warning.hcl"}, wantSpecs: 1, wantCode: exit.OK,
			stderr: []string{"Warning: Concurrency above max_num_seqs", "on testdata/plan_warning.hcl line 11"}},
		{name: "one bad among good ones", paths: []string{"testdata/valid.hcl", "testdata/one_pass.hcl", "testdata/plan_warning.hcl"}, wantSpecs: 2, wantCode: exit.Usage,
			stderr: []string{"Error: Unsupported argument", "on testdata/one_pass.hcl line 6", "max_nm_seqs = 2", "Error: Condition is not a bool", "on testdata/one_pass.hcl line 15"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			specs, err := Load(&stderr, tt.paths, nil)
			if exit.Code(err) != tt.wantCode || (err != nil && !exit.IsQuiet(err)) {
				t.Fatalf("error %v (exit %d), want exit %d, quiet", err, exit.Code(err), tt.wantCode)
			}
			if len(specs) != tt.wantSpecs {
				t.Errorf("%d specs, want %d", len(specs), tt.wantSpecs)
			}
			for _, s := range tt.stderr {
				if !strings.Contains(stderr.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr.String())
				}
			}
			if len(tt.stderr) == 0 && stderr.Len() > 0 {
				t.Errorf("stderr, want nothing:\n%s", stderr.String())
			}
		})
	}
}

// TestLoadForRunJSON: under -json an invalid spec also writes the
// test2json events of a failed package on stdout, as `go test -json`
// does for a package that does not build; a valid one writes nothing
// there.
func TestLoadForRunJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	specs, err := LoadForRun(&stdout, &stderr, []string{"testdata/valid.hcl", "testdata/no_plan_when_invalid.hcl"}, nil, true)
	if exit.Code(err) != exit.Usage || len(specs) != 1 {
		t.Fatalf("%d specs, error %v: want the valid one and exit 2", len(specs), err)
	}
	out := stdout.String()
	if !strings.Contains(out, `"Action":"fail"`) || !strings.Contains(out, "no_plan_when_invalid.hcl") || strings.Contains(out, "valid.hcl\"") && !strings.Contains(out, "no_plan_when_invalid.hcl") {
		t.Errorf("stdout, want the failed package's events of the invalid spec only:\n%s", out)
	}
	if !strings.Contains(stderr.String(), "Error: Unsupported argument") {
		t.Errorf("stderr lacks the diagnostic:\n%s", stderr.String())
	}
	stdout.Reset()
	if _, err := LoadForRun(&stdout, &stderr, []string{"testdata/no_plan_when_invalid.hcl"}, nil, false); exit.Code(err) != exit.Usage || stdout.Len() > 0 {
		t.Errorf("without -json: error %v, stdout %q; want exit 2 and nothing on stdout", err, stdout.String())
	}
}

// TestBuildLoad: a build is the build variable's value or the one
// server's container image; the window is set; what cannot name a build
// is a usage error that says what to do.
func TestBuildLoad(t *testing.T) {
	tests := []struct {
		name    string
		b       Build
		command string // the server's command line wanted ("" to skip)
		image   string // the container's image wanted ("" to skip)
		err     string
	}{
		{name: "the build variable", b: Build{Command: "bisect", SpecPath: "testdata/build/var.hcl", VarName: "vllm", Duration: 3 * time.Second},
			command: "/opt/b07/bin/vllm"},
		{name: "the build variable set by -var too", b: Build{Command: "bisect", SpecPath: "testdata/build/var.hcl", VarName: "vllm", Vars: spec.Vars{"vllm": "x"}},
			err: "-var vllm is the build variable of -var-name: leave it out"},
		{name: "the container's image", b: Build{Command: "interleave", SpecPath: "testdata/build/container.hcl"}, image: "b07"},
		{name: "no container", b: Build{Command: "interleave", SpecPath: "testdata/valid.hcl"},
			err: `testdata/valid.hcl: server "qwen" has no container block: its builds are container images, or give -var-name for a launched server`},
		{name: "two servers", b: Build{Command: "bisect", SpecPath: "testdata/build/two.hcl", VarName: "x"},
			err: "Value for undeclared variable"},
		{name: "two servers, images", b: Build{Command: "bisect", SpecPath: "testdata/build/two.hcl"},
			err: "testdata/build/two.hcl: bisect measures one server; the spec has 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			sp, err := tt.b.Load(&stderr, "b07")
			if tt.err != "" {
				if exit.Code(err) != exit.Usage || !strings.Contains(errText(err)+stderr.String(), tt.err) {
					t.Fatalf("error %v (exit %d), stderr %q; want exit 2 saying %q", err, exit.Code(err), stderr.String(), tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("error %v\n%s", err, stderr.String())
			}
			srv := sp.Servers[0]
			if tt.command != "" && !strings.Contains(srv.Command, tt.command) {
				t.Errorf("command %q, want %q", srv.Command, tt.command)
			}
			if tt.image != "" && (srv.Container == nil || srv.Container.Image != tt.image) {
				t.Errorf("container %+v, want image %q", srv.Container, tt.image)
			}
			if tt.b.Duration > 0 && sp.Measure.Duration != tt.b.Duration {
				t.Errorf("window %v, want %v", sp.Measure.Duration, tt.b.Duration)
			}
		})
	}
}

func errText(err error) string {
	if err == nil || exit.IsQuiet(err) {
		return ""
	}
	return err.Error()
}
