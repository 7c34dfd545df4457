package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/result"
)

func ptr(v float64) *float64 { return &v }

// TestCombineRepeats: repeats combine every metric of the table by its
// median with [min, max] in Spread; an optional metric only when every run
// has it (else it is dropped, with a note); warnings once each; an errored
// run is the result.
func TestCombineRepeats(t *testing.T) {
	tests := []struct {
		name       string
		runs       []result.DecodeCell
		wantRate   *float64
		wantSpread map[string][2]float64 // the entries checked
		wantStatus result.Status
		// wantNotes and wantWarnings, when set, are the cell's notes and warnings.
		wantNotes, wantWarnings []string
	}{
		{name: "optional metric in every run",
			runs: []result.DecodeCell{
				{Status: result.StatusValid, TBTMsP99: 9, SpeculativeAcceptRate: ptr(0.5), OutputTokens: 11},
				{Status: result.StatusValid, TBTMsP99: 3, SpeculativeAcceptRate: ptr(0.7), OutputTokens: 12},
				{Status: result.StatusValid, TBTMsP99: 5, SpeculativeAcceptRate: ptr(0.6), OutputTokens: 15},
			},
			wantRate:   ptr(0.6),
			wantSpread: map[string][2]float64{"tbt_ms_p99": {3, 9}, "spec_accept_rate": {0.5, 0.7}, "output_tokens": {11, 15}},
			wantStatus: result.StatusValid},
		{name: "optional metric missing in one run is dropped, with a note",
			runs: []result.DecodeCell{
				{Status: result.StatusValid, SpeculativeAcceptRate: ptr(0.5)},
				{Status: result.StatusValid},
			},
			wantRate:   nil,
			wantSpread: map[string][2]float64{"spec_accept_rate": {}},
			wantNotes:  []string{"spec_accept_rate dropped: 1 of 2 repeats reported it"},
			wantStatus: result.StatusValid},
		{name: "a warning of every run is kept once",
			runs: []result.DecodeCell{
				{Status: result.StatusValid, Warnings: []string{speculativeDidNotRun}},
				{Status: result.StatusValid, Warnings: []string{speculativeDidNotRun, "no /metrics around the window: server_total_tps not measured"}},
				{Status: result.StatusValid, Warnings: []string{speculativeDidNotRun}},
			},
			wantWarnings: []string{speculativeDidNotRun, "no /metrics around the window: server_total_tps not measured"},
			wantStatus:   result.StatusValid},
		{name: "an errored run is the result",
			runs: []result.DecodeCell{
				{Status: result.StatusValid, TotalTPS: 5},
				{Status: result.StatusError, Reason: "stalled"},
			},
			wantStatus: result.StatusError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := combineDecode(tc.runs)
			if c.Status != tc.wantStatus {
				t.Fatalf("status %s, want %s", c.Status, tc.wantStatus)
			}
			if diff := cmp.Diff(tc.wantRate, c.SpeculativeAcceptRate); diff != "" {
				t.Errorf("spec_accept_rate (-want +got):\n%s", diff)
			}
			if tc.wantNotes != nil {
				if diff := cmp.Diff(tc.wantNotes, c.Notes); diff != "" {
					t.Errorf("notes (-want +got):\n%s", diff)
				}
			}
			if tc.wantWarnings != nil {
				if diff := cmp.Diff(tc.wantWarnings, c.Warnings); diff != "" {
					t.Errorf("warnings (-want +got):\n%s", diff)
				}
			}
			for name, want := range tc.wantSpread {
				if got := c.Spread[name]; got != want {
					t.Errorf("Spread[%s] = %v, want %v", name, got, want)
				}
			}
		})
	}
	if c := combineDecode([]result.DecodeCell{{Status: result.StatusValid, TBTMsP99: 9, OutputTokens: 11}, {Status: result.StatusValid, TBTMsP99: 3, OutputTokens: 12}}); c.TBTMsP99 != 6 || c.OutputTokens != 12 {
		t.Errorf("two runs: tbt_ms_p99 %v output_tokens %d, want 6 and 12 (the median 11.5 rounded)", c.TBTMsP99, c.OutputTokens)
	}
	p := combinePrefill([]result.PrefillCell{{Status: result.StatusValid, TPS: 10, TTFTMs: 300}, {Status: result.StatusValid, TPS: 30, TTFTMs: 100}, {Status: result.StatusValid, TPS: 20, TTFTMs: 200}})
	if p.TPS != 20 || p.TTFTMs != 200 || p.Repeats != 3 || p.Spread["tps"] != [2]float64{10, 30} || p.Spread["ttft_ms"] != [2]float64{100, 300} {
		t.Errorf("prefill combined = %+v", p)
	}
}

// secondRepeatObserver calls then once, when the second run of a repeated
// decode cell starts its steady-state gate (a warm-up after a window).
type secondRepeatObserver struct {
	nopObserver
	measured bool
	once     sync.Once
	then     func()
}

func (o *secondRepeatObserver) Progress(p Progress) {
	switch {
	case p.Stage == result.StageMeasuring:
		o.measured = true
	case p.Stage == result.StageWarmUp && o.measured:
		o.once.Do(o.then)
	}
}

// TestRepeatFailureKeepsMeasuredRuns: when repeat 2 of 3 of a decode cell
// cannot be measured — its streams fail, or the run is interrupted — the
// cell is an error that keeps repeat 1's metrics and samples, in
// results.json and cells.jsonl (docs/method.md#repeats).
func TestRepeatFailureKeepsMeasuredRuns(t *testing.T) {
	tests := []struct {
		name       string
		interrupt  bool
		wantReason string
	}{
		{name: "streams fail", wantReason: "repeat 2 of 3 could not be measured: server error in stream: engine died"},
		{name: "interrupted", interrupt: true, wantReason: "repeat 2 of 3 could not be measured: interrupted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := fakeVLLM{tokens: 100000, gap: 2 * time.Millisecond}
			s := f.start(t)
			sp := smallSpec(1)
			sp.Measure.Repeat = 3
			cfg := testConfig(t, s.URL, sp, "decode")
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			cfg.Observer = &secondRepeatObserver{then: func() {
				if tc.interrupt {
					cancel(errors.New("interrupted"))
				} else {
					f.failNow.Store(true)
				}
			}}
			res, err := Run(ctx, cfg)
			if tc.interrupt != (err != nil) {
				t.Fatalf("err = %v, want an error only when interrupted", err)
			}
			saved, rerr := result.Read(filepath.Join(cfg.OutDir, "results.json"))
			if rerr != nil {
				t.Fatal(rerr)
			}
			for _, r := range []*result.Results{res, saved} {
				if len(r.Decode) != 1 {
					t.Fatalf("decode = %+v, want one cell", r.Decode)
				}
				c := r.Decode[0]
				if c.Status != result.StatusError || !strings.HasPrefix(c.Reason, tc.wantReason) || c.Repeats != 1 ||
					len(c.Samples["total_tps"]) != 1 || c.Samples["total_tps"][0] <= 0 || c.TotalTPS != c.Samples["total_tps"][0] {
					t.Errorf("cell = %+v, want an error %q keeping repeat 1's total_tps", c, tc.wantReason)
				}
			}
			fh, err := os.Open(filepath.Join(cfg.OutDir, "cells.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			recs, err := result.ReadCells(fh)
			if err != nil || len(recs) != 2 || recs[1].Decode == nil || len(recs[1].Decode.Samples["total_tps"]) != 1 {
				t.Errorf("cells.jsonl: %d records (%v), want the prefill and the partial decode cell", len(recs), err)
			}
		})
	}
}
