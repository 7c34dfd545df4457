package assert

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/spec"
)

// errorMarker is the `# ERROR: Summary` comment a fixture puts on each line
// that must get a diagnostic.
var errorMarker = regexp.MustCompile(`#\s*ERROR:\s*([^#]+)`)

// staticDiag is one diagnostic as a fixture announces it.
type staticDiag struct {
	Line    int
	Summary string
}

// TestCheckFixtures loads every testdata/static/*.hcl and checks that the
// load and CheckLoaded, together, report exactly the diagnostics its
// comments announce, each on the announced line of that file, quickly:
// errors the load finds in one assert do not hide the others' (validate's
// single pass).
func TestCheckFixtures(t *testing.T) {
	paths, err := filepath.Glob("testdata/static/*.hcl")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var want []staticDiag
			for i, line := range strings.Split(string(src), "\n") {
				for _, m := range errorMarker.FindAllStringSubmatch(line, -1) {
					want = append(want, staticDiag{Line: i + 1, Summary: strings.TrimSpace(m[1])})
				}
			}
			sp, diags := spec.Load(path, spec.LoadOptions{})
			start := time.Now()
			diags = append(diags, CheckLoaded(sp, diags)...)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Check took %v; it must take well under a second", d)
			}
			var got []staticDiag
			for _, d := range diags {
				if d.Subject == nil || d.Subject.Filename != path {
					t.Errorf("diagnostic %q has subject %v, want a range in %s", d.Summary, d.Subject, path)
					continue
				}
				if d.Detail == "" {
					t.Errorf("line %d: %q has no detail", d.Subject.Start.Line, d.Summary)
				}
				got = append(got, staticDiag{Line: d.Subject.Start.Line, Summary: d.Summary})
			}
			sortStatic(want)
			sortStatic(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("diagnostics (-announced +got):\n%s\nall:\n%v", diff, diags)
			}
		})
	}
}

func sortStatic(d []staticDiag) {
	sort.Slice(d, func(i, j int) bool {
		if d[i].Line != d[j].Line {
			return d[i].Line < d[j].Line
		}
		return d[i].Summary < d[j].Summary
	})
}

// TestCheckMessages pins the wording of each kind of static diagnostic:
// what is wrong and what to write instead.
func TestCheckMessages(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		line   int
		detail string
	}{
		{
			name: "not a bool names the type and shows a comparison", file: "conditions.hcl", line: 21,
			detail: `The condition is a number; it must be true or false: write a comparison such as decode["8K"][64].total_tps >= 6000.`,
		},
		{
			name: "number against string says what is required", file: "conditions.hcl", line: 25,
			detail: "Unsuitable value for right operand: a number is required.",
		},
		{
			name: "spec_accept_rate without speculative names the server", file: "speculative.hcl", line: 14,
			detail: `Server "plain" has no speculative block, so it reports no spec_accept_rate (vLLM exports speculative-decoding counters only when speculative decoding is on). Add a speculative block to the server, or read another metric.`,
		},
		{
			name: "expect over spec_accept_rate without speculative", file: "speculative.hcl", line: 26,
			detail: `expect "acceptance" reads spec_accept_rate, but server "plain" has no speculative block, so it reports no spec_accept_rate (vLLM exports speculative-decoding counters only when speculative decoding is on). Add a speculative block to the server, or read another metric.`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join("testdata/static", tc.file)
			sp, diags := spec.Load(path, spec.LoadOptions{})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			var details []string
			for _, d := range Check(sp) {
				if d.Subject != nil && d.Subject.Start.Line == tc.line {
					details = append(details, d.Detail)
				}
			}
			if len(details) != 1 || details[0] != tc.detail {
				t.Errorf("line %d details:\n%q\nwant\n%q", tc.line, details, tc.detail)
			}
		})
	}
}

// TestStaticTypesMatchTheRun: the static scope's objects have the types of
// the real scope's (a condition that type-checks statically evaluates in
// a run), and the server object has exactly the attributes the spec loader
// lets a condition read.
func TestStaticTypesMatchTheRun(t *testing.T) {
	sp, res := fixture()
	srv := &spec.Server{Name: "qwen"}
	real, static := newScope(sp, srv, res, nil), newStaticScope(sp, srv)
	for _, name := range []string{"decode", "prefill", "server"} {
		rt, st := real.ctx.Variables[name].Type(), static.ctx.Variables[name].Type()
		if !rt.Equals(st) {
			t.Errorf("%s: run type %s, static type %s", name, rt.GoString(), st.GoString())
		}
	}
	var attrs []string
	for name := range serverObjectType.AttributeTypes() {
		attrs = append(attrs, name)
	}
	sort.Strings(attrs)
	want := append([]string(nil), spec.ServerAttributes...)
	sort.Strings(want)
	if diff := cmp.Diff(want, attrs); diff != "" {
		t.Errorf("server attributes (-spec.ServerAttributes +serverObject):\n%s", diff)
	}
}
