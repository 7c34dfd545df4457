package result

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/slogate/slogate/vocab"
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

func TestWorstOrdersOutcomes(t *testing.T) {
	order := []Outcome{Pass, Skip, Inconclusive, Fail, Error}
	for i, a := range order {
		for j, b := range order {
			want := order[max(i, j)]
			if got := Worst(a, b); got != want {
				t.Errorf("Worst(%v, %v) = %v, want %v", a, b, got, want)
			}
		}
	}
	r := Results{Verdicts: []Verdict{{Outcome: Pass}, {Outcome: Error}, {Outcome: Fail}}}
	if got := r.Outcome(); got != Error {
		t.Errorf("Results.Outcome() = %v, want error", got)
	}
}

func TestOutcomeJSON(t *testing.T) {
	for _, o := range []Outcome{Fail, Inconclusive} {
		b, err := json.Marshal(Verdict{Test: "x", Outcome: o})
		if err != nil {
			t.Fatal(err)
		}
		if want := `"outcome":"` + o.String() + `"`; !bytes.Contains(b, []byte(want)) {
			t.Errorf("marshalled %s, want %s", b, want)
		}
		var v Verdict
		if err := json.Unmarshal(b, &v); err != nil || v.Outcome != o {
			t.Errorf("round trip of %v = %v, %v", o, v.Outcome, err)
		}
	}
	if Pass.Failed() || Skip.Failed() || !Inconclusive.Failed() || !Fail.Failed() || !Error.Failed() {
		t.Error("Failed: want inconclusive, fail and error to fail the gate, pass and skip not")
	}
	var v Verdict
	if err := json.Unmarshal([]byte(`{"outcome":"meh"}`), &v); err == nil {
		t.Error("unknown outcome decoded without error")
	}
}

func TestTestNames(t *testing.T) {
	prefill := CellRef{Phase: vocab.PhasePrefill, Context: 8192}
	decode := CellRef{Phase: vocab.PhaseDecode, Context: 8192, Concurrency: 64}
	long := CellRef{Phase: vocab.PhaseDecode, Matrix: "long", Context: 257024, Concurrency: 2}
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
}

func TestResultsWriteRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	want := &Results{
		Schema:  Schema,
		Spec:    "specs/demo.hcl",
		Server:  Server{Name: "qwen", KVCacheTokens: 24000000},
		Prefill: []PrefillCell{{Context: 8192, Status: StatusValid, TPS: 46700, TTFTMs: 175}},
		Decode:  []DecodeCell{{Matrix: "decode", Context: 8192, Concurrency: 64, Status: StatusQueued, TotalTPS: 6018.4}},
		Verdicts: []Verdict{{Test: "qwen/assert/a", Kind: KindAssert, Outcome: Fail,
			Cells: []CellRef{{Phase: vocab.PhaseDecode, Context: 8192, Concurrency: 64}}}},
	}
	if err := want.Write(path); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if _, err := Decode("x.json", []byte(`{"schema":"other/v9"}`)); err == nil || !strings.Contains(err.Error(), "slogate/results/v1") {
		t.Errorf("wrong schema: err = %v", err)
	}
}

func TestReadCells(t *testing.T) {
	var buf bytes.Buffer
	recs := []CellRecord{
		{Server: "qwen", Phase: vocab.PhasePrefill, Prefill: &PrefillCell{Context: 8192, Status: StatusValid}},
		{Server: "qwen", Phase: vocab.PhaseDecode, Decode: &DecodeCell{Matrix: "decode", Context: 8192, Concurrency: 1, Status: StatusValid}},
	}
	for _, r := range recs {
		if err := AppendCell(&buf, r); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		in      string
		want    int
		wantErr bool
	}{
		{name: "whole", in: buf.String(), want: 2},
		{name: "torn last line is dropped", in: buf.String() + `{"server":"qwen","pha`, want: 2},
		{name: "bad middle line is an error", in: `{"x":1}` + "\n" + buf.String(), wantErr: true},
		{name: "empty", in: "", want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadCells(strings.NewReader(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && len(got) != tt.want {
				t.Errorf("got %d records, want %d", len(got), tt.want)
			}
		})
	}
}

func TestVerdictWhere(t *testing.T) {
	tests := []struct {
		name string
		v    Verdict
		want string
	}{
		{name: "file and line", v: Verdict{File: "specs/demo.hcl", Line: 50}, want: "specs/demo.hcl:50"},
		{name: "file only", v: Verdict{File: "specs/demo.hcl"}, want: "specs/demo.hcl"},
		{name: "nowhere", v: Verdict{Line: 50}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.v.Where(); got != tt.want {
				t.Errorf("Where() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMatrixLabels(t *testing.T) {
	r := &Results{Decode: []DecodeCell{
		{Matrix: "decode", Context: 8192, Concurrency: 1},
		{Matrix: "long", Context: 65536, Concurrency: 1},
		{Matrix: "decode", Context: 8192, Concurrency: 64},
		{Context: 16384, Concurrency: 1}, // no matrix: "decode"
	}}
	if diff := cmp.Diff([]string{"decode", "long"}, r.MatrixLabels()); diff != "" {
		t.Errorf("MatrixLabels (-want +got):\n%s", diff)
	}
	if got := (&Results{}).MatrixLabels(); got != nil {
		t.Errorf("no decode cells: MatrixLabels = %v, want nil", got)
	}
}

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
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RunNames(tc.runs); !slices.Equal(got, tc.want) {
				t.Errorf("RunNames = %q, want %q", got, tc.want)
			}
		})
	}
}
