package result

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func baseSchedule() *Schedule {
	return (&Schedule{Seed: 7, Arrivals: "poisson", Rate: 2.5, WarmUpS: 5, WindowS: 30,
		Workload: "chat", Settings: map[string]string{"prompt": "dataset", "seed": "0", "context": "0", "max_output": "128"},
		DatasetSHA256: "3f2a000000000000000000000000000000000000000000000000000000009c1d"}).Seal()
}

func TestScheduleDifferences(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Schedule)
		want   []string
	}{
		{name: "same", change: func(*Schedule) {}, want: nil},
		{name: "seed", change: func(s *Schedule) { s.Seed = 8 }, want: []string{"seed 7 vs 8"}},
		{name: "arrivals and burstiness", change: func(s *Schedule) { s.Arrivals, s.Burstiness = "gamma", 0.5 },
			want: []string{`arrivals "poisson" vs "gamma"`, "burstiness 0 vs 0.5"}},
		{name: "rate", change: func(s *Schedule) { s.Rate = 3 }, want: []string{"rate 2.5 vs 3"}},
		{name: "closed loop", change: func(s *Schedule) { s.Rate, s.Concurrency = 0, 4 },
			want: []string{"rate 2.5 vs 0", "concurrency 0 vs 4"}},
		{name: "window", change: func(s *Schedule) { s.WarmUpS, s.WindowS = 10, 60 }, want: []string{"warm-up 5s vs 10s", "window 30s vs 60s"}},
		{name: "workload", change: func(s *Schedule) { s.Workload = "" }, want: []string{`workload "chat" vs (none)`}},
		{name: "setting changed", change: func(s *Schedule) {
			s.Settings = map[string]string{"prompt": "dataset", "seed": "1", "context": "0", "max_output": "128"}
		},
			want: []string{"workload setting seed 0 vs 1"}},
		{name: "setting added", change: func(s *Schedule) {
			s.Settings = map[string]string{"prompt": "dataset", "seed": "0", "context": "0", "max_output": "128", "turns": "3"}
		}, want: []string{"workload setting turns (unset) vs 3"}},
		{name: "dataset", change: func(s *Schedule) { s.DatasetSHA256 = "77b00000000000000000000000000000000000000000000000000000000e412" },
			want: []string{"dataset SHA-256 3f2a…9c1d vs 77b0…e412"}},
		{name: "hash only", change: func(s *Schedule) { s.Hash = "0000000000000000000000000000000000000000000000000000000000000000" },
			want: []string{"hash " + short(baseSchedule().Hash) + " vs 0000…0000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := baseSchedule(), baseSchedule()
			tt.change(b)
			if tt.name != "hash only" {
				b.Seal()
			}
			if diff := cmp.Diff(tt.want, a.Differences(b)); diff != "" {
				t.Errorf("Differences (-want +got):\n%s", diff)
			}
			changes := a.Changes(b)
			if len(changes) != len(tt.want) {
				t.Fatalf("changes %+v, want %d", changes, len(tt.want))
			}
			for i, c := range changes {
				if c.String() != tt.want[i] || c.Field == "" || c.A == c.B {
					t.Errorf("change %+v reads %q, want %q", c, c.String(), tt.want[i])
				}
			}
			if same := a.Hash == b.Hash; same != (tt.want == nil) {
				t.Errorf("hashes equal = %v with differences %q", same, tt.want)
			}
		})
	}
}

func TestScheduleNil(t *testing.T) {
	var none *Schedule
	if d := none.Differences(nil); d != nil {
		t.Errorf("nil vs nil = %q", d)
	}
	if d := none.Differences(baseSchedule()); len(d) != 1 {
		t.Errorf("nil vs a schedule = %q, want one difference", d)
	}
	if d := baseSchedule().Differences(nil); len(d) != 1 {
		t.Errorf("a schedule vs nil = %q, want one difference", d)
	}
	if c := none.Changes(baseSchedule()); len(c) != 1 || c[0].Field != "schedule" || c[0].A != "(not recorded)" {
		t.Errorf("nil vs a schedule changes %+v, want the schedule not recorded on the first side", c)
	}
	if c := none.Changes(nil); c != nil {
		t.Errorf("nil vs nil changes %+v", c)
	}
}

// TestScheduleHashStable pins that the hash depends on the fields only,
// not on the order Settings were filled in or on a JSON round trip.
func TestScheduleHashStable(t *testing.T) {
	a := baseSchedule()
	b := &Schedule{Settings: map[string]string{}}
	for _, k := range []string{"max_output", "context", "seed", "prompt"} {
		b.Settings[k] = a.Settings[k]
	}
	b.Seed, b.Arrivals, b.Rate, b.WarmUpS, b.WindowS, b.Workload, b.DatasetSHA256 = a.Seed, a.Arrivals, a.Rate, a.WarmUpS, a.WindowS, a.Workload, a.DatasetSHA256
	if b.Seal().Hash != a.Hash {
		t.Errorf("hash depends on the order settings were set")
	}
	if len(a.Hash) != 64 {
		t.Errorf("hash %q is not a hex SHA-256", a.Hash)
	}
	raw, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var back Schedule
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if back.Digest() != a.Hash {
		t.Errorf("hash after a JSON round trip = %s, want %s", back.Digest(), a.Hash)
	}
}

func TestTrafficScheduleRoundTrip(t *testing.T) {
	i, planned, lag := 3, 1250.5, 0.8
	rec := RequestRecord{Cell: "traffic/steady/ctx=8K/rate=2.5", Index: &i, PlannedMs: &planned, LagMs: &lag, Status: RequestFinished}
	var buf bytes.Buffer
	if err := AppendRequest(&buf, &rec); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"index":3`, `"planned_ms":1250.5`, `"lag_ms":0.8`} {
		if !bytes.Contains(buf.Bytes(), []byte(key)) {
			t.Errorf("requests.jsonl line %s lacks %s", buf.Bytes(), key)
		}
	}
	var gotRec RequestRecord
	if err := json.Unmarshal(buf.Bytes(), &gotRec); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rec, gotRec); diff != "" {
		t.Errorf("record round trip (-want +got):\n%s", diff)
	}
	// A decode request has none of them.
	buf.Reset()
	if err := AppendRequest(&buf, &RequestRecord{Cell: "decode/ctx=8K/conc=4"}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"index", "planned_ms", "lag_ms"} {
		if bytes.Contains(buf.Bytes(), []byte(`"`+key+`"`)) {
			t.Errorf("decode record %s holds %s", buf.Bytes(), key)
		}
	}
	cell := TrafficCell{Traffic: "steady", Rate: 2.5, Schedule: baseSchedule(), LagMsP99: 1.5, LagMsMax: 4}
	raw, err := json.Marshal(&cell)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"schedule":{`, `"hash":"`, `"lag_ms_p99":1.5`, `"lag_ms_max":4`} {
		if !bytes.Contains(raw, []byte(key)) {
			t.Errorf("traffic cell %s lacks %s", raw, key)
		}
	}
	var got TrafficCell
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cell, got); diff != "" {
		t.Errorf("cell round trip (-want +got):\n%s", diff)
	}
}
