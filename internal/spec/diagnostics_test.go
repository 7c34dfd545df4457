package spec

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/requests"
)

// testEnv is the environment env() sees in tests: fixed, so results do not
// depend on the machine.
func testEnv(name string) (string, bool) {
	v, ok := map[string]string{"HOME": "$HOME", "SLOGATE_TEST": "yes"}[name]
	return v, ok
}

// wantDiag is one expected diagnostic: the line of its subject, its
// severity (ERROR or WARNING) and its summary.
type wantDiag struct {
	Line     int
	Severity string
	Summary  string
}

var diagMarker = regexp.MustCompile(`#\s*(ERROR|WARNING):\s*([^#]+)`)

// expectedDiagnostics reads the `# ERROR: Summary` and `# WARNING: Summary`
// comments of a fixture; one line may carry several.
func expectedDiagnostics(t *testing.T, src []byte) []wantDiag {
	t.Helper()
	var want []wantDiag
	for i, line := range strings.Split(string(src), "\n") {
		for _, m := range diagMarker.FindAllStringSubmatch(line, -1) {
			want = append(want, wantDiag{Line: i + 1, Severity: m[1], Summary: strings.TrimSpace(m[2])})
		}
	}
	return want
}

func severityName(s hcl.DiagnosticSeverity) string {
	if s == hcl.DiagWarning {
		return "WARNING"
	}
	return "ERROR"
}

func sortDiags(d []wantDiag) {
	sort.Slice(d, func(i, j int) bool {
		if d[i].Line != d[j].Line {
			return d[i].Line < d[j].Line
		}
		if d[i].Summary != d[j].Summary {
			return d[i].Summary < d[j].Summary
		}
		return d[i].Severity < d[j].Severity
	})
}

// TestInvalidFixtures loads every spec/testdata/invalid/*.hcl and checks
// that its diagnostics are exactly the ones its comments announce, each
// on the announced line.
func TestInvalidFixtures(t *testing.T) {
	paths, err := filepath.Glob("testdata/invalid/*.hcl")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := expectedDiagnostics(t, src)
			if len(want) == 0 {
				t.Fatalf("%s announces no diagnostic: add `# ERROR: Summary` (or `# WARNING: Summary`) on the offending line", path)
			}
			s, diags := Load(path, LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset, ReadItems: requests.ReadItems})
			var got []wantDiag
			for _, d := range diags {
				if d.Subject == nil {
					t.Errorf("diagnostic %q has no Subject", d.Summary)
					continue
				}
				if d.Subject.Filename != path {
					t.Errorf("diagnostic %q points into %q, want %q", d.Summary, d.Subject.Filename, path)
				}
				got = append(got, wantDiag{Line: d.Subject.Start.Line, Severity: severityName(d.Severity), Summary: d.Summary})
			}
			sortDiags(want)
			sortDiags(got)
			if diff := cmp.Diff(want, got); diff != "" {
				var buf bytes.Buffer
				WriteDiagnostics(&buf, s.Files, diags, false)
				t.Errorf("diagnostics (-want +got):\n%s\nall diagnostics:\n%s", diff, buf.String())
			}
			// Every diagnostic prints with its file and line.
			var buf bytes.Buffer
			if err := WriteDiagnostics(&buf, s.Files, diags, false); err != nil {
				t.Fatal(err)
			}
			if loc := fmt.Sprintf("on %s line %d", path, want[0].Line); !strings.Contains(buf.String(), loc) {
				t.Errorf("printed diagnostics do not name %s:\n%s", loc, buf.String())
			}
		})
	}
}

// TestVarFlags checks the -var rules that no fixture line can carry.
func TestVarFlags(t *testing.T) {
	const src = `
variable "n" {
  type    = number
  default = 1
}
variable "s" { default = "x" }
variable "l" { type = list(number) }
server "a" {
  model = "m"
  port  = 8000 + var.n
  served_model_name = var.s
}
`
	tests := []struct {
		name     string
		vars     map[string]string
		wantSumm []string
		// wantDetail: every phrase the diagnostic's detail must hold.
		wantDetail []string
		wantPort   int
		wantName   string
	}{
		{name: "required variable unset", vars: nil, wantSumm: []string{"No value for required variable"}},
		{name: "all set", vars: map[string]string{"l": "[1, 2]", "n": "5", "s": "y"}, wantPort: 8005, wantName: "y"},
		{name: "number converted", vars: map[string]string{"l": "[1]", "n": "12"}, wantPort: 8012, wantName: "x"},
		{name: "not a number", vars: map[string]string{"l": "[]", "n": "0x"}, wantSumm: []string{"Invalid value for variable"},
			wantDetail: []string{`-var n=0x`, `variable "n" is of type number`, `"0x" is not a number`}},
		{name: "bool for a number", vars: map[string]string{"l": "[]", "n": "true"}, wantSumm: []string{"Invalid value for variable"},
			wantDetail: []string{`variable "n" is of type number`, `"true" is not a number`}},
		{name: "list that does not parse", vars: map[string]string{"l": "[1,", "n": "1"}, wantSumm: []string{"Invalid value for variable"},
			wantDetail: []string{`-var l=[1,`, `variable "l" is of type list(number)`, `"[1," is not a list(number)`}},
		{name: "list of strings for a list of numbers", vars: map[string]string{"l": `["a"]`, "n": "1"}, wantSumm: []string{"Invalid value for variable"},
			wantDetail: []string{`variable "l" is of type list(number)`, `is not a list(number)`}},
		{name: "undeclared", vars: map[string]string{"l": "[]", "nn": "1"}, wantSumm: []string{"Value for undeclared variable"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, diags := LoadSource("vars.hcl", []byte(src), LoadOptions{Vars: tt.vars, LookupEnv: testEnv, ReadDataset: requests.ReadDataset, ReadItems: requests.ReadItems})
			var got []string
			for _, d := range diags {
				got = append(got, d.Summary)
			}
			if diff := cmp.Diff(tt.wantSumm, got); diff != "" {
				t.Fatalf("summaries (-want +got):\n%s", diff)
			}
			for _, phrase := range tt.wantDetail {
				if !strings.Contains(diags[0].Detail, phrase) {
					t.Errorf("detail %q does not say %q", diags[0].Detail, phrase)
				}
			}
			for _, d := range diags {
				if d.Summary == "Invalid value for variable" && (d.Subject == nil || d.Subject.Filename != "vars.hcl") {
					t.Errorf("diagnostic %q does not point into the spec: %v", d.Summary, d.Subject)
				}
			}
			if tt.wantPort != 0 {
				if s.Servers[0].Port != tt.wantPort || s.Servers[0].ServedModelName != tt.wantName {
					t.Errorf("port %d name %q, want %d %q", s.Servers[0].Port, s.Servers[0].ServedModelName, tt.wantPort, tt.wantName)
				}
			}
		})
	}
}

// TestFileFunction checks file(): relative to the spec, never outside it.
func TestFileFunction(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "specs")
	for _, err := range []error{
		os.Mkdir(sub, 0o755),
		os.WriteFile(filepath.Join(sub, "key.txt"), []byte("secret"), 0o600),
		os.WriteFile(filepath.Join(dir, "outside.txt"), []byte("nope"), 0o600),
		os.Symlink(filepath.Join(dir, "outside.txt"), filepath.Join(sub, "link.txt")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	const outside = "is outside the spec's folder"
	tests := []struct {
		name, expr, want, wantErr, wantDetail string
	}{
		{name: "beside the spec", expr: `file("key.txt")`, want: "secret"},
		{name: "parent folder", expr: `file("../outside.txt")`, wantErr: "Invalid function argument", wantDetail: outside},
		{name: "absolute path outside", expr: fmt.Sprintf("file(%q)", filepath.Join(dir, "outside.txt")), wantErr: "Invalid function argument", wantDetail: outside},
		{name: "symlink out", expr: `file("link.txt")`, wantErr: "Invalid function argument", wantDetail: outside},
		{name: "missing", expr: `file("nope.txt")`, wantErr: "Invalid function argument", wantDetail: "nope.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(sub, "s.hcl")
			src := fmt.Sprintf("server \"a\" {\n  model = \"m\"\n  api_key = %s\n}\n", tt.expr)
			if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
				t.Fatal(err)
			}
			s, diags := Load(path, LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset, ReadItems: requests.ReadItems})
			if tt.wantErr != "" {
				if len(diags) != 1 || diags[0].Summary != tt.wantErr || !strings.Contains(diags[0].Detail, tt.wantDetail) {
					t.Fatalf("diags = %v, want one %q whose detail says %q", diags, tt.wantErr, tt.wantDetail)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if got := s.Servers[0].APIKey; got != tt.want {
				t.Errorf("api_key = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLoadMissingFile checks that an unreadable path is a diagnostic, not a panic.
func TestLoadMissingFile(t *testing.T) {
	s, diags := Load("testdata/does-not-exist.hcl", LoadOptions{})
	if s == nil || s.Files == nil || !diags.HasErrors() {
		t.Fatalf("Load = %v, %v; want a Spec with Files and an error", s, diags)
	}
	if diags[0].Summary != "Cannot read spec file" {
		t.Errorf("summary %q", diags[0].Summary)
	}
}
