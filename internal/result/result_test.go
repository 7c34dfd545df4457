package result

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

func TestResultsWriteRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	want := &Results{
		Schema:  Schema,
		Spec:    "specs/demo.hcl",
		Server:  Server{Name: "qwen", KVCacheTokens: 24000000},
		Prefill: []PrefillCell{{Context: 8192, Status: vocab.StatusValid, TPS: 46700, TTFTMs: 175}},
		Decode:  []DecodeCell{{Matrix: "decode", Context: 8192, Concurrency: 64, Status: vocab.StatusQueued, TotalTPS: 6018.4}},
		Verdicts: []Verdict{{Test: "qwen/assert/a", Kind: vocab.KindAssert, Outcome: vocab.Fail,
			Cells: []vocab.CellRef{{Phase: vocab.PhaseDecode, Context: 8192, Concurrency: 64}}}},
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
	if _, err := Decode("x.json", []byte(`{"schema":"other/v9"}`)); err == nil || !strings.Contains(err.Error(), Schema) || !strings.Contains(err.Error(), SchemaV1) {
		t.Errorf("wrong schema: err = %v", err)
	}
}

func TestReadCells(t *testing.T) {
	var buf bytes.Buffer
	recs := []CellRecord{
		{Server: "qwen", Phase: vocab.PhasePrefill, Prefill: &PrefillCell{Context: 8192, Status: vocab.StatusValid}},
		{Server: "qwen", Phase: vocab.PhaseDecode, Decode: &DecodeCell{Matrix: "decode", Context: 8192, Concurrency: 1, Status: vocab.StatusValid}},
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

func TestWorstOrdersOutcomes(t *testing.T) {
	order := []vocab.Outcome{vocab.Pass, vocab.Skip, vocab.Inconclusive, vocab.Fail, vocab.Error}
	for i, a := range order {
		for j, b := range order {
			want := order[max(i, j)]
			if got := vocab.Worst(a, b); got != want {
				t.Errorf("Worst(%v, %v) = %v, want %v", a, b, got, want)
			}
		}
	}
	r := Results{Verdicts: []Verdict{{Outcome: vocab.Pass}, {Outcome: vocab.Error}, {Outcome: vocab.Fail}}}
	if got := r.Outcome(); got != vocab.Error {
		t.Errorf("Results.Outcome() = %v, want error", got)
	}
}

func TestOutcomeJSON(t *testing.T) {
	for _, o := range []vocab.Outcome{vocab.Fail, vocab.Inconclusive} {
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
	if vocab.Pass.Failed() || vocab.Skip.Failed() || !vocab.Inconclusive.Failed() || !vocab.Fail.Failed() || !vocab.Error.Failed() {
		t.Error("Failed: want inconclusive, fail and error to fail the gate, pass and skip not")
	}
	var v Verdict
	if err := json.Unmarshal([]byte(`{"outcome":"meh"}`), &v); err == nil {
		t.Error("unknown outcome decoded without error")
	}
}

// TestReadOldWarnings: a results.json written before warnings had codes
// holds them as plain strings; it still reads, each warning of no kind
// (no code, so resulttest never explains it) with the same text, and
// written again it holds them as objects.
func TestReadOldWarnings(t *testing.T) {
	const old = `{"schema":"slogate/results/v1","spec":"s.hcl","server":{"name":"q"},
"decode":[{"matrix":"decode","context":8192,"concurrency":1,"status":"valid",
"warnings":["server_total_tps 331.1 differs from total_tps 378.5 by -12.5%","no /metrics around the window: server_total_tps not measured"]}]}`
	r, err := Decode("old.json", []byte(old))
	if err != nil {
		t.Fatal(err)
	}
	if r.Schema != Schema {
		t.Errorf("schema read %q, want %q (what is in memory is the current schema)", r.Schema, Schema)
	}
	want := []warning.Warning{{Summary: "server_total_tps 331.1 differs from total_tps 378.5 by -12.5%"},
		{Summary: "no /metrics around the window: server_total_tps not measured"}}
	if len(r.Decode) != 1 || !cmp.Equal(r.Decode[0].Warnings, want) {
		t.Fatalf("decode %+v, want one cell with warnings %+v", r.Decode, want)
	}
	if got := warning.Strings(r.Decode[0].Warnings); !cmp.Equal(got, []string{want[0].Summary, want[1].Summary}) {
		t.Errorf("texts %q", got)
	}
	b, err := json.Marshal(r.Decode[0].Warnings)
	if err != nil {
		t.Fatal(err)
	}
	if s := `[{"summary":"server_total_tps 331.1 differs from total_tps 378.5 by -12.5%"},{"summary":"no /metrics around the window: server_total_tps not measured"}]`; string(b) != s {
		t.Errorf("written again: %s, want %s", b, s)
	}
}

// TestReadOldNotes: a v1 results.json's notes are plain strings, a
// decode cell's and a correctness comparison's alike; they read as notes
// of no code with the same text, as its warnings do.
func TestReadOldNotes(t *testing.T) {
	const old = `{"schema":"slogate/results/v1","spec":"s.hcl","server":{"name":"q"},
"decode":[{"matrix":"decode","context":8192,"concurrency":16,"status":"valid",
"notes":["14.9 of 16 streams active on average: the client's restart gaps (a finished stream's next request before its first token), not server queueing"]}],
"comparison":{"baseline":"b","tolerance":0.05,"alpha":0.05,"outcome":"pass","rows":[],
"correctness":[{"name":"greedy","outcome":"pass","prompts":2,"exact":2,"near_ties":0,"mismatches":0,"agreement_rate":1,"near_tie_rate":0,"mismatch_rate":0,"max_mismatch":0,
"notes":["the engines differ: the comparison informs, it does not gate"]}]}}`
	r, err := Decode("old.json", []byte(old))
	if err != nil {
		t.Fatal(err)
	}
	cell := []warning.Warning{{Summary: "14.9 of 16 streams active on average: the client's restart gaps (a finished stream's next request before its first token), not server queueing"}}
	block := []warning.Warning{{Summary: "the engines differ: the comparison informs, it does not gate"}}
	if len(r.Decode) != 1 || !cmp.Equal(r.Decode[0].Notes, cell) {
		t.Errorf("decode %+v, want one cell with notes %+v", r.Decode, cell)
	}
	if r.Comparison == nil || len(r.Comparison.Correctness) != 1 || !cmp.Equal(r.Comparison.Correctness[0].Notes, block) {
		t.Errorf("comparison %+v, want one correctness block with notes %+v", r.Comparison, block)
	}
}
