package result

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/vocab"
)

// TestTrafficSLOMet: a request meets the SLO when it finished and its own
// TTFT, mean time between tokens (0 for one token) and e2e latency are
// each at most the limit, the limit counting (measure's goodput rule,
// docs/method.md#goodput).
func TestTrafficSLOMet(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	req := RequestRecord{Status: RequestFinished, TTFTMs: f(200), TPOTMs: f(20), E2EMs: 410}
	one := RequestRecord{Status: RequestFinished, TTFTMs: f(100), E2EMs: 100}
	cancelled := req
	cancelled.Status = RequestCancelled
	tests := []struct {
		name string
		slo  *TrafficSLO
		r    RequestRecord
		want bool
	}{
		{name: "no slo: finished", r: req, want: true},
		{name: "no slo: not finished", r: cancelled, want: false},
		{name: "ttft at the limit counts", slo: &TrafficSLO{TTFTMs: f(200)}, r: req, want: true},
		{name: "ttft over", slo: &TrafficSLO{TTFTMs: f(199.9)}, r: req, want: false},
		{name: "tbt over", slo: &TrafficSLO{TBTMs: f(15)}, r: req, want: false},
		{name: "one token has no gap", slo: &TrafficSLO{TBTMs: f(15)}, r: one, want: true},
		{name: "e2e over", slo: &TrafficSLO{E2EMs: f(400)}, r: req, want: false},
		{name: "every limit, cancelled", slo: &TrafficSLO{TTFTMs: f(1000), TBTMs: f(1000), E2EMs: f(1000)}, r: cancelled, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.slo.Met(&tt.r); got != tt.want {
				t.Errorf("Met %v, want %v", got, tt.want)
			}
		})
	}
}

// TestReadRequests: the traffic cells get their own records from
// requests.jsonl, a request recorded twice by its last record; a missing
// file says so; a malformed traffic line is an error naming it.
func TestReadRequests(t *testing.T) {
	idx := func(i int) *int { return &i }
	lines := []RequestRecord{
		{Cell: "decode/ctx=8K/conc=1", Phase: vocab.PhaseDecode, E2EMs: 1},
		{Cell: "traffic/replay/rate=4", Phase: vocab.PhaseTraffic, Index: idx(0), E2EMs: 10, InWindow: true},
		{Cell: "traffic/replay/rate=4", Phase: vocab.PhaseTraffic, Index: idx(1), E2EMs: 11, InWindow: true},
		{Cell: "traffic/other/rate=4", Phase: vocab.PhaseTraffic, Index: idx(0), E2EMs: 12},
		{Cell: "traffic/replay/rate=4", Phase: vocab.PhaseTraffic, Index: idx(0), E2EMs: 13, InWindow: true}, // measured again
	}
	dir := t.TempDir()
	var b strings.Builder
	for _, l := range lines {
		if err := AppendRequest(&b, &l); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, RequestsFile), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &Results{Traffic: []TrafficCell{{Traffic: "replay", Rate: 4}}}
	if err := r.ReadRequests(dir); err != nil {
		t.Fatal(err)
	}
	got := r.Traffic[0].Requests
	if !r.RequestsRead || len(got) != 2 || got[0].E2EMs != 13 || got[1].E2EMs != 11 {
		t.Errorf("read %v, records %+v; want indices 0 (its last record, e2e 13) and 1", r.RequestsRead, got)
	}
	missing := &Results{Traffic: []TrafficCell{{Traffic: "replay", Rate: 4}}}
	if err := missing.ReadRequests(t.TempDir()); err != nil || missing.RequestsRead || missing.Traffic[0].Requests != nil {
		t.Errorf("no file: err %v, read %v, records %v; want none, said", err, missing.RequestsRead, missing.Traffic[0].Requests)
	}
	bad := t.TempDir()
	content := `{"cell":"traffic/replay/rate=4","phase":"traffic","e2e_ms":"x"}` + "\n" + b.String()
	if err := os.WriteFile(filepath.Join(bad, RequestsFile), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.ReadRequests(bad); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("malformed line: err %v, want one naming line 1", err)
	}
}
