package measure

import (
	"testing"
	"time"

	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/warning"
	"github.com/slogate/slogate/internal/workload"
)

// TestTraceWarnings: a trace replay that left requests out says how many
// and why (warning.TraceCounts); one that sent its whole slice says
// nothing.
func TestTraceWarnings(t *testing.T) {
	w := &spec.Workload{Name: "m", DatasetText: "traces/m.jsonl"}
	tests := []struct {
		name string
		plan requests.Schedule
		want map[string]float64 // nil: no warning
	}{
		{name: "whole slice sent", plan: requests.Schedule{Examined: 6, Usable: 6}},
		{name: "one over max_model_len, one without tokens", plan: requests.Schedule{Examined: 3, Usable: 2, Dropped: requests.Dropped{OverLength: 1, ZeroLength: 1}},
			want: map[string]float64{warning.FigExamined: 3, warning.FigKept: 2, warning.FigOverLength: 1, warning.FigZeroLength: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := traceWarnings(w, &tc.plan)
			if tc.want == nil {
				if len(got) != 0 {
					t.Fatalf("warnings %+v; want none", got)
				}
				return
			}
			if len(got) != 1 || got[0].Code != warning.TraceCounts {
				t.Fatalf("warnings %+v; want one trace_counts", got)
			}
			for k, v := range tc.want {
				if got[0].Figures[k] != v {
					t.Errorf("figure %s = %v; want %v", k, got[0].Figures[k], v)
				}
			}
		})
	}
}

// TestTraceSettings: the replay's settings go into the schedule and its
// hash: another speed or slice is another schedule, named by the
// setting that differs.
func TestTraceSettings(t *testing.T) {
	seal := func(tr workload.Trace) *result.Schedule {
		s := &result.Schedule{Settings: map[string]string{}}
		traceSettings(s, tr, "abc")
		return s
	}
	a := seal(workload.Trace{})
	tests := []struct {
		name, field string
		tr          workload.Trace
	}{
		{name: "speed", field: "workload setting speed", tr: workload.Trace{Speed: 2}},
		{name: "slice", field: "workload setting slice", tr: workload.Trace{From: 10 * time.Minute, To: 20 * time.Minute}},
		{name: "max_requests", field: "workload setting max_requests", tr: workload.Trace{MaxRequests: 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := seal(tc.tr)
			ch := a.Changes(b)
			if a.Hash == b.Hash || len(ch) != 1 || ch[0].Field != tc.field {
				t.Errorf("changes %+v (hashes %s, %s); want one, %s", ch, a.Hash, b.Hash, tc.field)
			}
		})
	}
}
