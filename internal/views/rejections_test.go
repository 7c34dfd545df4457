package views

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/judge"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// rejectingRuns are a baseline and a run of one decode cell and one
// traffic cell, the run's server refusing requests at admission
// (docs/method.md#rejections) in both.
func rejectingRuns() (a, b *result.Results) {
	decode := func(tps float64, rejected int, st vocab.Status) result.DecodeCell {
		return result.DecodeCell{Matrix: "decode", Context: 1024, Concurrency: 6, Status: st, TotalTPS: tps, TTFTMs: 10, TBTMs: 20, Rejected: rejected}
	}
	traffic := func(good float64, rejected int, st vocab.Status) result.TrafficCell {
		return result.TrafficCell{Traffic: "steady", Context: 1024, Rate: 8, Arrivals: vocab.ArrivalsConstant, Status: st, AchievedRPS: 8,
			GoodputRPS: good, GoodputShare: good / 8, Launched: 80, Completed: 80 - rejected, Rejected: rejected, RejectedShare: float64(rejected) / 80,
			MeasuredS: 10, E2EMs: 300, TTFTMs: 20, TTFTMsP99: 40, TBTMs: 5}
	}
	a = &result.Results{Server: result.Server{Name: "tiny"}, Decode: []result.DecodeCell{decode(300, 0, vocab.StatusValid)},
		Traffic: []result.TrafficCell{traffic(8, 0, vocab.StatusValid)}}
	b = &result.Results{Server: result.Server{Name: "tiny"}, Decode: []result.DecodeCell{decode(150, 57, vocab.StatusQueued)},
		Traffic: []result.TrafficCell{traffic(6.8, 12, vocab.StatusQueued)}}
	return a, b
}

// TestRejectedInComparisons: `slogate diff` (text, Markdown, JSON) and
// -baseline show the requests either run's server refused at admission as
// a figure of their own, never decided; a comparison without refusals
// shows none.
func TestRejectedInComparisons(t *testing.T) {
	a, b := rejectingRuns()
	d := Diff{PathA: "a.json", PathB: "b.json", C: compare.Build(a, b, compare.Policy{Tolerance: 0.05})}
	var text, md, js bytes.Buffer
	if err := d.Text(&text); err != nil {
		t.Fatal(err)
	}
	if err := d.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := d.JSON(&js); err != nil {
		t.Fatal(err)
	}
	var details []string
	for _, v := range judge.Baseline(d.C, JudgeWords{}) {
		details = append(details, v.Details...)
	}
	tests := []struct {
		name, got, want string
	}{
		{name: "text, decode", got: text.String(), want: "\n" + RejectedNote + "\n  decode/ctx=1K/conc=6: 0 → 57 requests\n"},
		{name: "text, traffic", got: text.String(), want: "    rejected: 0 → 12 requests (n/a)\n"},
		{name: "markdown", got: md.String(), want: RejectedNote + "\n\n- decode/ctx=1K/conc=6: 0 → 57 requests\n"},
		{name: "-baseline, decode", got: strings.Join(details, "\n"), want: "rejected: baseline 0, now 57 requests refused at admission in the window (shown, not decided)"},
		{name: "-baseline, traffic", got: strings.Join(details, "\n"), want: "rejected: 0 → 12 requests (n/a)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(tc.got, tc.want) {
				t.Errorf("got\n%s\nwant it to hold\n%s", tc.got, tc.want)
			}
		})
	}
	t.Run("json", func(t *testing.T) {
		schema, err := jsonschema.NewCompiler().Compile(filepath.Join("..", "..", "docs", "diff.schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(js.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(doc); err != nil {
			t.Fatalf("the document does not fit docs/diff.schema.json: %v", err)
		}
		var got struct {
			Rejected []struct {
				Cell string
				A, B int
			}
			Traffic []struct {
				Values []struct {
					Metric  string
					A, B    float64
					Decided bool
				}
			}
		}
		if err := json.Unmarshal(js.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Rejected) != 1 || got.Rejected[0].Cell != "decode/ctx=1K/conc=6" || got.Rejected[0].A != 0 || got.Rejected[0].B != 57 {
			t.Errorf("rejected %+v, want the decode cell's 0 → 57", got.Rejected)
		}
		found := false
		for _, v := range got.Traffic[0].Values {
			if v.Metric == "rejected" {
				found = v.A == 0 && v.B == 12 && !v.Decided
			}
		}
		if !found {
			t.Errorf("traffic values %+v, want rejected 0 → 12, not decided", got.Traffic[0].Values)
		}
	})
	t.Run("no refusals", func(t *testing.T) {
		var text bytes.Buffer
		Diff{PathA: "a.json", PathB: "a.json", C: compare.Build(a, a, compare.Policy{Tolerance: 0.05})}.Text(&text)
		if strings.Contains(text.String(), "rejected") || strings.Contains(text.String(), "refused") {
			t.Errorf("a comparison without refusals mentions them:\n%s", text.String())
		}
	})
}
