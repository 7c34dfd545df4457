package result

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/vocab"
)

// TestSearchStoppedUnmeasurable: a concurrency search stopped at a probe
// the client could not measure is listed with the unmeasurable cells
// (exit 4), not with what could not be measured (exit 3); one stopped at
// an errored probe is the other way round, and one that ended with an
// unmeasurable probe but no error (its answer found) is in neither.
func TestSearchStoppedUnmeasurable(t *testing.T) {
	probe := func(c int, st vocab.Status) SearchProbe {
		return SearchProbe{Concurrency: c, Cell: DecodeCell{Context: 256, Concurrency: c, Status: st}}
	}
	tests := []struct {
		name                             string
		search                           Search
		wantUnmeasured, wantUnmeasurable []string
	}{
		{name: "stopped at an unmeasurable probe",
			search: Search{Name: "slots", Error: "the probe at concurrency 3 could not be measured: the client's per_request_tps …",
				Probes: []SearchProbe{probe(1, vocab.StatusValid), probe(3, vocab.StatusUnmeasurable)}},
			wantUnmeasurable: []string{"search/slots: the probe at concurrency 3 could not be measured: the client's per_request_tps …"}},
		{name: "stopped at an errored probe",
			search: Search{Name: "slots", Error: "the probe at concurrency 3 could not be measured: stream stalled",
				Probes: []SearchProbe{probe(1, vocab.StatusValid), probe(3, vocab.StatusError)}},
			wantUnmeasured: []string{"search/slots: the probe at concurrency 3 could not be measured: stream stalled"}},
		{name: "an unmeasurable probe before the last, no error",
			search: Search{Name: "slots", Probes: []SearchProbe{probe(3, vocab.StatusUnmeasurable), probe(1, vocab.StatusValid)}}},
		{name: "an error with no probe",
			search:         Search{Name: "slots", Error: "the run ended during the search: interrupted"},
			wantUnmeasured: []string{"search/slots: the run ended during the search: interrupted"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Results{Search: []Search{tc.search}}
			if diff := cmp.Diff(tc.wantUnmeasured, r.Unmeasured()); diff != "" {
				t.Errorf("Unmeasured (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantUnmeasurable, r.Unmeasurable()); diff != "" {
				t.Errorf("Unmeasurable (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSaturated: a saturated traffic cell is named, a saturated probe of
// a rate search (a failed probe) and other statuses are not.
func TestSaturated(t *testing.T) {
	tests := []struct {
		name string
		cell TrafficCell
		want int
	}{
		{name: "a saturated cell", cell: TrafficCell{Traffic: "open", Rate: 30, Status: vocab.StatusSaturated, Reason: "past capacity"}, want: 1},
		{name: "a saturated probe", cell: TrafficCell{Traffic: "open", Rate: 30, Search: "capacity", Status: vocab.StatusSaturated}},
		{name: "a queued cell", cell: TrafficCell{Traffic: "open", Rate: 30, Status: vocab.StatusQueued}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Results{Traffic: []TrafficCell{tc.cell}}
			if got := r.Saturated(); len(got) != tc.want || tc.want > 0 && !strings.Contains(got[0], "past capacity") {
				t.Errorf("Saturated() = %q, want %d naming the reason", got, tc.want)
			}
		})
	}
}
