package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/spec"
)

// testFlags is a flag set with one flag of each kind the commands use.
type testFlags struct {
	fs       *FlagSet
	sim      *bool
	duration *time.Duration
	out      *string
	tol      *Fraction
	vars     spec.Vars
}

func newTestFlags() *testFlags {
	f := &testFlags{fs: NewFlagSet("run", Help{
		Usage:    "slogate run [flags] SPEC...",
		Doc:      []string{"Runs."},
		Examples: []string{"slogate run -sim a.hcl", "slogate run a.hcl -duration 2s"},
	})}
	f.sim = f.fs.Bool("sim", false, "use the simulator")
	f.duration = f.fs.Duration("duration", 0, "window `D`")
	f.out = f.fs.String("out", "", "results `DIR`")
	f.tol = f.fs.Fraction("tolerance", "5%", "allowed regression, `PCT`")
	f.fs.Var(&f.vars, "var", "a spec variable, `NAME=VALUE` (repeatable)")
	f.fs.String("runtime", "docker", "the container `runtime`")
	return f
}

func TestParse(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantPos  []string
		sim      bool
		duration time.Duration
		out      string
		tol      float64
		vars     spec.Vars
		err      string // the whole usage error, "" for none
	}{
		{name: "flags first", args: []string{"-sim", "-duration", "2s", "a.hcl"}, wantPos: []string{"a.hcl"}, sim: true, duration: 2 * time.Second, tol: 0.05},
		{name: "flags last", args: []string{"a.hcl", "-sim", "-duration", "2s"}, wantPos: []string{"a.hcl"}, sim: true, duration: 2 * time.Second, tol: 0.05},
		{name: "flags between", args: []string{"a.hcl", "-out=o", "b.hcl"}, wantPos: []string{"a.hcl", "b.hcl"}, out: "o", tol: 0.05},
		{name: "double dashes", args: []string{"--sim", "a.hcl", "--out", "o", "--duration=1m"}, wantPos: []string{"a.hcl"}, sim: true, out: "o", duration: time.Minute, tol: 0.05},
		{name: "boolean set false", args: []string{"-sim=false", "a.hcl"}, wantPos: []string{"a.hcl"}, tol: 0.05},
		{name: "a boolean takes no separate value", args: []string{"-sim", "false"}, wantPos: []string{"false"}, sim: true, tol: 0.05},
		{name: "-- ends the flags", args: []string{"a.hcl", "--", "-sim", "--", "b"}, wantPos: []string{"a.hcl", "-sim", "--", "b"}, tol: 0.05},
		{name: "a lone dash is an argument", args: []string{"-", "-sim"}, wantPos: []string{"-"}, sim: true, tol: 0.05},
		{name: "a value may start with a dash", args: []string{"-out", "-weird", "a"}, wantPos: []string{"a"}, out: "-weird", tol: 0.05},
		{name: "repeatable -var", args: []string{"-var", "a=1", "x.hcl", "-var=b=2"}, wantPos: []string{"x.hcl"}, tol: 0.05, vars: spec.Vars{"a": "1", "b": "2"}},
		{name: "tolerance as a percentage", args: []string{"-tolerance", "7.5%"}, tol: 0.075},
		{name: "tolerance as a fraction", args: []string{"-tolerance", "0.075"}, tol: 0.075},
		{name: "no arguments", args: nil, tol: 0.05},
		{name: "unknown flag with a suggestion", args: []string{"a.hcl", "-simm"},
			err: "run: unknown flag -simm; did you mean -sim?\nRun 'slogate help run' for usage."},
		{name: "unknown double-dash flag keeps its dashes", args: []string{"--tolerence=1%"},
			err: "run: unknown flag --tolerence; did you mean --tolerance?\nRun 'slogate help run' for usage."},
		{name: "unknown flag by prefix", args: []string{"-dur", "2s"},
			err: "run: unknown flag -dur; did you mean -duration?\nRun 'slogate help run' for usage."},
		{name: "unknown flag far from all", args: []string{"-zzzzzz"},
			err: "run: unknown flag -zzzzzz\nRun 'slogate help run' for usage."},
		{name: "bad duration names the form", args: []string{"-duration", "60sec"},
			err: "run: invalid value \"60sec\" for -duration D: want a duration such as 2s, 500ms or 1m30s\nRun 'slogate help run' for usage."},
		{name: "bad boolean", args: []string{"-sim=maybe"},
			err: "run: invalid value \"maybe\" for -sim: want true or false\nRun 'slogate help run' for usage."},
		{name: "bad tolerance", args: []string{"-tolerance", "five"},
			err: "run: invalid value \"five\" for -tolerance PCT: want a percentage such as 5% or a fraction such as 0.05, from 0 to 100%\nRun 'slogate help run' for usage."},
		{name: "tolerance above 100%", args: []string{"-tolerance", "5"},
			err: "run: invalid value \"5\" for -tolerance PCT: want a percentage such as 5% or a fraction such as 0.05, from 0 to 100%\nRun 'slogate help run' for usage."},
		{name: "bad -var", args: []string{"-var", "novalue"},
			err: "run: invalid value \"novalue\" for -var NAME=VALUE: \"novalue\" is not NAME=VALUE (for example -var api_key=secret)\nRun 'slogate help run' for usage."},
		{name: "missing value", args: []string{"a.hcl", "-out"},
			err: "run: -out needs a value: -out DIR\nRun 'slogate help run' for usage."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestFlags()
			var stdout bytes.Buffer
			pos, err := f.fs.Parse(&stdout, tt.args)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err || exit.Code(err) != exit.Usage {
					t.Fatalf("error %v (exit %d), want exit 2 and:\n%s", err, exit.Code(err), tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantPos, pos); diff != "" {
				t.Errorf("arguments (-want +got):\n%s", diff)
			}
			if *f.sim != tt.sim || *f.duration != tt.duration || *f.out != tt.out || f.tol.Value() != tt.tol || !cmp.Equal(f.vars, tt.vars) {
				t.Errorf("sim %v duration %v out %q tolerance %v vars %v", *f.sim, *f.duration, *f.out, f.tol.Value(), f.vars)
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout: %s", stdout.String())
			}
		})
	}
}

// TestHelpFlag: every spelling of help prints the help on stdout and stops
// with ErrHelp (exit 0); the help lists every flag with its placeholder
// and default, then the examples.
func TestHelpFlag(t *testing.T) {
	want := `Usage: slogate run [flags] SPEC...

Runs.

Flags (before or after the arguments; -flag and --flag are the same; -- ends them):
  -duration D       window D
  -out DIR          results DIR
  -runtime RUNTIME  the container runtime (default docker)
  -sim              use the simulator
  -tolerance PCT    allowed regression, PCT (default 5%)
  -var NAME=VALUE   a spec variable, NAME=VALUE (repeatable)

Examples:
  slogate run -sim a.hcl
  slogate run a.hcl -duration 2s
`
	for _, arg := range []string{"-h", "--help", "-help", "--h"} {
		t.Run(arg, func(t *testing.T) {
			var stdout bytes.Buffer
			_, err := newTestFlags().fs.Parse(&stdout, []string{"a.hcl", arg, "-nope"})
			if !errors.Is(err, ErrHelp) || exit.Code(err) != exit.OK || !exit.IsQuiet(err) {
				t.Fatalf("error %v, want ErrHelp (quiet, exit 0)", err)
			}
			if diff := cmp.Diff(want, stdout.String()); diff != "" {
				t.Errorf("help (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFraction(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want float64
		ok   bool
	}{
		{"percent", "5%", 0.05, true},
		{"fraction", "0.05", 0.05, true},
		{"spaces", " 10 % ", 0.1, true},
		{"zero", "0", 0, true},
		{"all", "100%", 1, true},
		{"negative", "-1%", 0, false},
		{"a bare 5 is 500%", "5", 0, false},
		{"words", "five", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f Fraction
			err := f.Set(tt.in)
			if (err == nil) != tt.ok || (tt.ok && f.Value() != tt.want) {
				t.Errorf("Set(%q): %v, %v; want %v (ok %v)", tt.in, f.Value(), err, tt.want, tt.ok)
			}
			if tt.ok && f.String() != tt.in {
				t.Errorf("String() = %q, want it as written, %q", f.String(), tt.in)
			}
		})
	}
}

// TestTolerance: a comparison's tolerance reads as a Fraction does, and
// refuses 0 however it is written, saying why.
func TestTolerance(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want float64
		err  string
	}{
		{name: "percent", in: "5%", want: 0.05},
		{name: "small", in: "0.1%", want: 0.001},
		{name: "zero", in: "0", err: ErrZeroTolerance.Error()},
		{name: "zero percent", in: "0%", err: ErrZeroTolerance.Error()},
		{name: "words", in: "five", err: "want a percentage such as 5% or a fraction such as 0.05, from 0 to 100%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := NewFlagSet("run", Help{})
			f := fs.Tolerance("tolerance", "5%", "")
			err := f.Set(tt.in)
			if got := errText(err); got != tt.err || (err == nil && f.Value() != tt.want) {
				t.Errorf("Set(%q): %v, %q; want %v, %q", tt.in, f.Value(), got, tt.want, tt.err)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestBuildVersion(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	info := func(version string, settings []debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/slogate/slogate", Version: version}, Settings: settings}
	}
	tests := []struct {
		name              string
		ldVersion, commit string
		info              *debug.BuildInfo
		want              string // without the platform
	}{
		{name: "go install of a tag", ldVersion: "dev", info: info("v1.2.0", nil),
			want: "slogate v1.2.0 (commit unknown) go1.26.0"},
		{name: "go install @latest of an untagged commit", ldVersion: "dev", info: info("v0.0.0-20261130200000-0123456789ab", nil),
			want: "slogate v0.0.0-20261130200000-0123456789ab (commit 0123456789ab, 2026-11-30T20:00:00Z) go1.26.0"},
		{name: "go build in a checkout", ldVersion: "dev",
			info: info("v0.0.0-20261130200000-0123456789ab+dirty", vcs("vcs.revision", "0123456789abcdef0123456789abcdef01234567", "vcs.time", "2026-11-30T20:00:00Z", "vcs.modified", "true")),
			want: "slogate v0.0.0-20261130200000-0123456789ab+dirty (commit 0123456789abcdef0123456789abcdef01234567, 2026-11-30T20:00:00Z, modified) go1.26.0"},
		{name: "make stamps version and commit", ldVersion: "v1.2.0-3-gabcdef1-dirty", commit: "abcdef1234", info: info("(devel)", nil),
			want: "slogate v1.2.0-3-gabcdef1-dirty (commit abcdef1234, modified) go1.26.0"},
		{name: "nothing known", ldVersion: "dev", info: info("(devel)", nil),
			want: "slogate dev (commit unknown) go1.26.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := BuildVersion(tt.ldVersion, tt.commit, tt.info).String()
			if got != tt.want+" "+BuildVersion("", "", nil).Platform {
				t.Errorf("got  %s\nwant %s <platform>", got, tt.want)
			}
		})
	}
	if v := BuildVersion("dev", "", nil); v.Version != "dev" || !strings.HasPrefix(v.Go, "go") {
		t.Errorf("without build info: %+v", v)
	}
}

// TestChoiceAndRegexp: a Choice refuses a word outside its list, naming
// the list; a Regexp compiles at parse time, and "" leaves it unset.
func TestChoiceAndRegexp(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		format  string
		run     string // the compiled -run, "<nil>" when unset
		wantErr string
	}{
		{name: "defaults", format: "text", run: "<nil>"},
		{name: "both set", args: []string{"-format", "matrix", "-run", "ctx=8K/"}, format: "matrix", run: "ctx=8K/"},
		{name: "empty -run keeps everything", args: []string{"-run", ""}, format: "text", run: "<nil>"},
		{name: "word outside the list", args: []string{"-format=yaml"}, wantErr: "plan: -format is text, json or matrix, not \"yaml\"\nRun 'slogate help plan' for usage."},
		{name: "bad expression", args: []string{"-run", "("}, wantErr: "plan: -run: error parsing regexp: missing closing ): `(`\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := NewFlagSet("plan", Help{Usage: "slogate plan"})
			format := fs.Choice("format", []string{"text", "json", "matrix"}, "output `FORMAT`")
			run := fs.Regexp("run", "`REGEX`")
			_, err := fs.Parse(io.Discard, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) || exit.Code(err) != exit.Usage {
					t.Fatalf("error %v, want exit 2 starting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(run.Value()); format.Value() != tt.format || got != tt.run {
				t.Errorf("-format %q -run %s, want %q %s", format.Value(), got, tt.format, tt.run)
			}
		})
	}
}
