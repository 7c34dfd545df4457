package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/workload"
)

// noteObserver keeps the run's notes.
type noteObserver struct {
	nopObserver
	notes []event.Note
}

func (o *noteObserver) Note(n event.Note) { o.notes = append(o.notes, n) }

// TestResumeKeepsCorrectness: a resumed run keeps a correctness block the
// run it continues measured in full (results.json's record and its outputs
// in correctness.jsonl) and measures again one that was stopped, changed,
// or whose outputs are gone, saying why.
func TestResumeKeepsCorrectness(t *testing.T) {
	items := &workload.Items{Items: []workload.Item{{Line: 1, Prompt: "a"}, {Line: 2, Prompt: "b"}}}
	block := &spec.Correctness{Name: "greedy", DatasetText: "p.jsonl", Items: items, MaxOutput: 8, Logprobs: 5, Concurrency: 1, NearTieGap: 0.1, Margin: 0.01}
	measured := func(edit func(*result.Correctness)) *result.Correctness {
		c := &result.Correctness{Name: "greedy", Dataset: "p.jsonl", MaxOutput: 8, Logprobs: 5, Concurrency: 1, NearTieGap: 0.1, Margin: 0.01,
			Prompts: 2, ElapsedS: 1.5, Outputs: []result.CorrectnessOutput{{Block: "greedy", Line: 1, Prompt: "a", Text: "x"}, {Block: "greedy", Line: 2, Prompt: "b", Text: "y"}}}
		if edit != nil {
			edit(c)
		}
		return c
	}
	tests := []struct {
		name string
		prev *result.Correctness // nil: the run it continues measured no block
		kept bool
		note event.Note // the note that says so; nil for none
	}{
		{name: "complete block kept", prev: measured(nil), kept: true, note: event.CorrectnessKept{Server: "q", Block: "greedy", Outputs: 2, File: "correctness.jsonl"}},
		{name: "no block measured", prev: nil},
		{name: "stopped while measured", prev: measured(func(c *result.Correctness) { c.Unfinished = true; c.Errors = 1 }),
			note: event.CorrectnessRemeasured{Server: "q", Block: "greedy", Why: event.RemeasureUnfinished}},
		{name: "settings changed", prev: measured(func(c *result.Correctness) { c.MaxOutput = 16 }),
			note: event.CorrectnessRemeasured{Server: "q", Block: "greedy", Why: event.RemeasureSettingsChanged}},
		{name: "outputs gone", prev: measured(func(c *result.Correctness) { c.Outputs = nil }),
			note: event.CorrectnessRemeasured{Server: "q", Block: "greedy", Why: event.RemeasureOutputsMissing, Outputs: 0, Prompts: 2}},
		{name: "dataset changed", prev: measured(func(c *result.Correctness) { c.Outputs[1].Prompt = "c" }),
			note: event.CorrectnessRemeasured{Server: "q", Block: "greedy", Why: event.RemeasureDatasetChanged, Line: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, "http://127.0.0.1:1", smallSpec(1), "")
			cfg.OutDir = t.TempDir()
			cfg.Plan.Correctness = []*spec.Correctness{block}
			cfg.Resume = []result.CellRecord{}
			cfg.Previous = &result.Results{Server: result.Server{Name: cfg.Server.Name}}
			if tc.prev != nil {
				cfg.Previous.Correctness = []result.Correctness{*tc.prev}
				if err := cfg.Previous.WriteCorrectness(cfg.OutDir); err != nil {
					t.Fatal(err)
				}
			}
			obs := &noteObserver{}
			r := &run{cfg: cfg, observer: obs}
			r.results = r.initialResults()
			if _, err := r.resume(); err != nil {
				t.Fatal(err)
			}
			got := r.results.CorrectnessBlock("greedy")
			if (got != nil) != tc.kept || r.correctnessPending() == tc.kept {
				t.Fatalf("block kept %v, pending %v; want kept %v", got != nil, r.correctnessPending(), tc.kept)
			}
			b, err := os.ReadFile(filepath.Join(cfg.OutDir, result.CorrectnessFile))
			switch {
			case tc.kept && (err != nil || strings.Count(string(b), "\n") != 2 || got.ElapsedS != 1.5):
				t.Errorf("kept block: correctness.jsonl %q (%v), elapsed %v; want its 2 outputs and its cost", b, err, got.ElapsedS)
			case !tc.kept && err == nil:
				t.Errorf("a block measured again left its old outputs in correctness.jsonl:\n%s", b)
			}
			var notes []event.Note
			for _, n := range obs.notes {
				switch n := n.(type) {
				case event.CorrectnessKept, event.CorrectnessRemeasured:
					notes = append(notes, n)
				}
			}
			var want []event.Note
			if tc.note != nil {
				want = []event.Note{tc.note}
			}
			if d := cmp.Diff(want, notes); d != "" {
				t.Errorf("correctness notes (-want +got):\n%s", d)
			}
		})
	}
}
