package views

import (
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/bisection"
)

func f(v float64) *float64 { return &v }

func TestBisectStep(t *testing.T) {
	tests := []struct {
		name string
		rec  bisection.Record
		n    int
		want string
	}{
		{name: "a bad step", n: 2, rec: bisection.Record{Build: "b07", Role: bisection.RoleCandidate, Attempt: 1, GPUSeconds: 12.34,
			Cells: []bisection.CellStep{{Cell: "decode/ctx=8K/conc=4", Outcome: bisection.AtOrBefore,
				Metrics: []bisection.MetricStep{{Metric: "total_tps", VsGood: f(-0.164), VsBad: f(0.003), GoodChange: "regressed", BadChange: "unchanged"}}}}},
			want: "b07 (step 2): decode/ctx=8K/conc=4 bad (first bad at or before): total_tps -16.4% vs good (regressed), +0.3% vs bad (unchanged); GPU time 12.3s"},
		{name: "a partial step", n: 3, rec: bisection.Record{Build: "b05", Role: bisection.RoleCandidate, Attempt: 1, GPUSeconds: 1,
			Cells: []bisection.CellStep{{Cell: "decode/ctx=8K/conc=4", Outcome: bisection.After, Partial: true,
				Metrics: []bisection.MetricStep{{Metric: "total_tps", VsGood: f(-0.04), VsBad: f(0.043), GoodChange: "unchanged", BadChange: "unchanged", Partial: true}}}}},
			want: "b05 (step 3): decode/ctx=8K/conc=4 good (first bad after), a partial change (decided by the nearer endpoint): total_tps -4.0% vs good (unchanged), +4.3% vs bad (unchanged); GPU time 1s"},
		{name: "a build that did not start", n: 1, rec: bisection.Record{Build: "b03", Role: bisection.RoleCandidate, Attempt: 1, Error: "server exited\nlog tail"},
			want: "b03 (step 1): skipped: server exited; GPU time 0s"},
		{name: "the bad endpoint again", rec: bisection.Record{Build: "b15", Role: bisection.RoleBad, Attempt: 2, GPUSeconds: 60},
			want: "b15 (the bad build, measured again with the most repeats: its comparison with good was inconclusive): measured; GPU time 1m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BisectStep(tt.rec, tt.n); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestBisectAnswer(t *testing.T) {
	at := &bisection.CellStep{Cell: "decode/ctx=8K/conc=4", Metrics: []bisection.MetricStep{{Metric: "total_tps", VsGood: f(-0.2), GoodChange: "regressed"}}}
	lg := &bisection.CellStep{Cell: "decode/ctx=8K/conc=4", Metrics: []bisection.MetricStep{{Metric: "total_tps", VsGood: f(0.001), GoodChange: "unchanged"}}}
	tests := []struct {
		name string
		rep  bisection.Report
		want []string
	}{
		{name: "one build", rep: bisection.Report{Good: "b00", Bad: "b15", Builds: make([]string, 16), GPUSeconds: 90,
			Steps: []bisection.Record{{Build: "b00"}, {Build: "b15"}, {Build: "b07"}},
			Cells: []bisection.CellAnswer{{Cell: "decode/ctx=8K/conc=4", Found: true, FirstBad: "b07", LastGood: "b06", AtFirstBad: at, AtLastGood: lg}}},
			want: []string{"first bad: b07\n", "  decode/ctx=8K/conc=4: total_tps -20.0% against good at b07 (regressed); last good b06 (total_tps +0.1% against good)\n",
				"3 builds measured of 16, 3 steps; GPU time 1m30s\n"}},
		{name: "two builds", rep: bisection.Report{Good: "b00", Bad: "b07", Builds: make([]string, 8),
			Cells: []bisection.CellAnswer{{Cell: "decode/ctx=1K/conc=1", Found: true, FirstBad: "b05", LastGood: "b04", AtFirstBad: at},
				{Cell: "decode/ctx=1K/conc=8", Found: true, FirstBad: "b02", LastGood: "b01", AtFirstBad: at}}},
			want: []string{"first bad: b05 (decode/ctx=1K/conc=1)\n", "first bad: b02 (decode/ctx=1K/conc=8)\n"}},
		{name: "budget out, undecided", rep: bisection.Report{Good: "b00", Bad: "b15", Builds: make([]string, 16), BudgetOut: true, GPUSeconds: 30,
			Cells: []bisection.CellAnswer{{Cell: "decode/ctx=8K/conc=4", LastGood: "b00", Candidates: []string{"b01", "b02", "b15"}}}},
			want: []string{"undecided: decode/ctx=8K/conc=4: the first bad is one of b01, b02, b15 (last good b00)\n",
				"the GPU time budget ran out (-max-gpu-time): 30s spent\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			BisectAnswer(&b, &tt.rep)
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("lacks %q:\n%s", w, b.String())
				}
			}
			if strings.Contains(b.String(), "first bad:") != (tt.name != "budget out, undecided") {
				t.Errorf("a first bad line where none is found, or none where one is:\n%s", b.String())
			}
		})
	}
}
