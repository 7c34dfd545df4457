package vocab

import (
	"slices"
	"strings"
	"testing"
)

func TestParseTokens(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    int
		wantErr string
	}{
		{name: "plain", in: "8192", want: 8192},
		{name: "K", in: "8K", want: 8192},
		{name: "lower k", in: "8k", want: 8192},
		{name: "251K", in: "251K", want: 257024},
		{name: "1019K", in: "1019K", want: 1043456},
		{name: "M", in: "1M", want: 1048576},
		{name: "spaces", in: " 16K ", want: 16384},
		{name: "bad suffix", in: "16Q", wantErr: "not a token count"},
		{name: "empty", in: "", wantErr: "not a token count"},
		{name: "bare suffix", in: "K", wantErr: "not a token count"},
		{name: "zero", in: "0", wantErr: "not a positive"},
		{name: "negative", in: "-8K", wantErr: "not a token count"},
		{name: "fraction", in: "1.5K", wantErr: "not a token count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTokens(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseTokens(%q) = %d, %v; want error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseTokens(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestFormatTokens(t *testing.T) {
	tests := []struct {
		name string
		in   int
		want string
	}{
		{name: "8K", in: 8192, want: "8K"},
		{name: "251K", in: 257024, want: "251K"},
		{name: "1024K stays K as in the seeds", in: 1048576, want: "1024K"},
		{name: "not a multiple", in: 1000, want: "1000"},
		{name: "zero", in: 0, want: "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FormatTokens(tt.in); got != tt.want {
				t.Errorf("FormatTokens(%d) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestTestNames(t *testing.T) {
	prefill := CellRef{Phase: PhasePrefill, Context: 8192}
	decode := CellRef{Phase: PhaseDecode, Context: 8192, Concurrency: 64}
	long := CellRef{Phase: PhaseDecode, Matrix: "long", Context: 257024, Concurrency: 2}
	steady := CellRef{Phase: PhaseTraffic, Matrix: "steady", Context: 8192, Rate: 0.5}
	closedCtx := CellRef{Phase: PhaseTraffic, Matrix: "closed", Context: 8192, Concurrency: 8}
	replay := CellRef{Phase: PhaseTraffic, Matrix: "replay", Concurrency: 8}
	replayRate := CellRef{Phase: PhaseTraffic, Matrix: "replay_open", Rate: 4}
	probe := ProbeRef("max_users", 8192, 16)
	rateProbe := RateProbeRef("capacity", "steady", 8192, 3.2)
	tests := []struct {
		name string
		id   TestID
		want string
	}{
		{name: "prefill cell", id: TestID{Server: "qwen", Cell: &prefill}, want: "qwen/prefill/ctx=8K"},
		{name: "decode cell of the default matrix", id: TestID{Server: "qwen", Cell: &decode}, want: "qwen/decode/ctx=8K/conc=64"},
		{name: "decode cell of a labelled matrix", id: TestID{Server: "qwen", Cell: &long}, want: "qwen/long/ctx=251K/conc=2"},
		{name: "assert", id: TestID{Server: "qwen", Kind: KindAssert, Block: "decode_8k_64"}, want: "qwen/assert/decode_8k_64"},
		{name: "expect block", id: TestID{Server: "qwen", Kind: KindExpect, Block: "tps"}, want: "qwen/expect/tps"},
		{name: "expect decode cell has no matrix label", id: TestID{Server: "qwen", Kind: KindExpect, Block: "tps", Cell: &long}, want: "qwen/expect/tps/ctx=251K/conc=2"},
		{name: "expect prefill cell", id: TestID{Server: "qwen", Kind: KindExpect, Block: "pf", Cell: &prefill}, want: "qwen/expect/pf/ctx=8K"},
		{name: "baseline decode", id: TestID{Server: "qwen", Kind: KindBaseline, Cell: &decode}, want: "qwen/baseline/decode/ctx=8K/conc=64"},
		{name: "baseline prefill", id: TestID{Server: "qwen", Kind: KindBaseline, Cell: &prefill}, want: "qwen/baseline/prefill/ctx=8K"},
		{name: "open-loop traffic at a context", id: TestID{Server: "qwen", Cell: &steady}, want: "qwen/traffic/steady/ctx=8K/rate=0.5"},
		{name: "closed-loop traffic at a context", id: TestID{Server: "qwen", Cell: &closedCtx}, want: "qwen/traffic/closed/ctx=8K/conc=8"},
		{name: "closed-loop traffic without context", id: TestID{Server: "qwen", Cell: &replay}, want: "qwen/traffic/replay/conc=8"},
		{name: "open-loop traffic without context", id: TestID{Server: "qwen", Cell: &replayRate}, want: "qwen/traffic/replay_open/rate=4"},
		{name: "baseline traffic without context", id: TestID{Server: "qwen", Kind: KindBaseline, Cell: &replay}, want: "qwen/baseline/traffic/replay/conc=8"},
		{name: "concurrency search probe", id: TestID{Server: "qwen", Kind: KindSearch, Cell: &probe}, want: "qwen/search/max_users/conc=16"},
		{name: "rate search probe", id: TestID{Server: "qwen", Kind: KindSearch, Cell: &rateProbe}, want: "qwen/search/capacity/rate=3.2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.id.Name(); got != tt.want {
				t.Errorf("Name() = %q, want %q", got, tt.want)
			}
		})
	}
	if got, want := long.TestName("qwen"), "qwen/long/ctx=251K/conc=2"; got != want {
		t.Errorf("CellRef.TestName = %q, want %q", got, want)
	}
	if got, want := rateProbe.Name(), "search/capacity/rate=3.2"; got != want {
		t.Errorf("rate probe CellRef.Name = %q, want %q", got, want)
	}
}

// TestRunNames: a run is named by its server, or by the shortest tail
// of its spec's path that tells it from the other specs with a server of
// that name (docs/ci.md#run-names).
func TestRunNames(t *testing.T) {
	tests := []struct {
		name string
		runs []RunKey
		want []string
	}{
		{name: "unique servers keep their names", runs: []RunKey{{"specs/a.hcl", "qwen"}, {"specs/b.hcl", "glm"}}, want: []string{"qwen", "glm"}},
		{name: "a name two specs share gains the spec's", runs: []RunKey{{"specs/demo.hcl", "qwen"}, {"specs/qwen3.5-4b-h200-dflash.hcl", "qwen"}, {"specs/glm.hcl", "glm"}},
			want: []string{"demo/qwen", "qwen3.5-4b-h200-dflash/qwen", "glm"}},
		{name: "two servers of one spec", runs: []RunKey{{"a.hcl", "x"}, {"a.hcl", "y"}}, want: []string{"x", "y"}},
		{name: "one spec given twice", runs: []RunKey{{"specs/a.hcl", "x"}, {"specs/a.hcl", "x"}}, want: []string{"x", "x"}},
		{name: "specs of one file name in two folders", runs: []RunKey{{"specs/ling-3.0-flash-int4-h200x2.hcl", "ling"}, {"specs/sglang/ling-3.0-flash-int4-h200x2.hcl", "ling"}, {"specs/glm.hcl", "glm"}},
			want: []string{"ling-3.0-flash-int4-h200x2/ling", "sglang/ling-3.0-flash-int4-h200x2/ling", "glm"}},
		{name: "the same twins given the other way round", runs: []RunKey{{"specs/sglang/ling.hcl", "ling"}, {"specs/ling.hcl", "ling"}},
			want: []string{"sglang/ling/ling", "ling/ling"}},
		{name: "only the specs sharing the server name count", runs: []RunKey{{"specs/demo.hcl", "qwen"}, {"specs/q.hcl", "qwen"}, {"specs/sglang/demo.hcl", "other"}},
			want: []string{"demo/qwen", "q/qwen", "other"}},
		{name: "two folders deep", runs: []RunKey{{"a/x/s.hcl", "q"}, {"b/x/s.hcl", "q"}}, want: []string{"a/x/s/q", "b/x/s/q"}},
		{name: "a path written differently is the same spec", runs: []RunKey{{"./specs/a.hcl", "q"}, {"specs/a.hcl", "q"}, {"specs/b.hcl", "q"}}, want: []string{"a/q", "a/q", "b/q"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RunNames(tc.runs); !slices.Equal(got, tc.want) {
				t.Errorf("RunNames = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSpecNames: the base name when it is unique, else as many folders
// below the shared one as tell the paths apart; distinct paths never get
// the same name.
func TestSpecNames(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
		want  []string
	}{
		{name: "one spec", paths: []string{"specs/sglang/ling.hcl"}, want: []string{"ling"}},
		{name: "distinct base names", paths: []string{"specs/a.hcl", "other/b.hcl"}, want: []string{"a", "b"}},
		{name: "one base name, one folder apart", paths: []string{"specs/ling.hcl", "specs/sglang/ling.hcl"}, want: []string{"ling", "sglang/ling"}},
		{name: "no shared folder", paths: []string{"ling.hcl", "sglang/ling.hcl"}, want: []string{"ling", "sglang/ling"}},
		{name: "absolute and relative", paths: []string{"../../specs/demo.hcl", "/tmp/t1/demo.hcl"}, want: []string{"specs/demo", "t1/demo"}},
		{name: "three of one name", paths: []string{"a/s.hcl", "a/b/s.hcl", "a/c/b/s.hcl"}, want: []string{"s", "b/s", "c/b/s"}},
		{name: "no extension", paths: []string{"x/spec", "y/spec"}, want: []string{"x/spec", "y/spec"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := SpecNames(tc.paths)
			if !slices.Equal(got, tc.want) {
				t.Errorf("SpecNames(%q) = %q, want %q", tc.paths, got, tc.want)
			}
		})
	}
}
