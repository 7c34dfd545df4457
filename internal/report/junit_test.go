package report

import (
	"bytes"
	"encoding/xml"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// sampleRun is a small run with every status and outcome.
func sampleRun(spec, server string) *result.Results {
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	return &result.Results{
		Schema: result.Schema, Spec: spec, Tool: "test",
		Server: result.Server{Name: server, Model: "Qwen/Qwen3.5-4B", ServedModel: server, Simulated: true,
			Version: "0.26.1", KVCacheTokens: 1_000_000, KVCacheSource: "metrics",
			Argv: []string{"vllm", "serve", "Qwen/Qwen3.5-4B", "--api-key", "<redacted>"}},
		Measure: result.Measure{Duration: "2s", DurationS: 2, MaxOutput: 256, Endpoint: "completions", Repeat: 1},
		Started: start, Finished: start.Add(12500 * time.Millisecond),
		Prefill: []result.PrefillCell{
			{Context: 8192, Status: vocab.StatusValid, TPS: 46700, TTFTMs: 175.4, ElapsedS: 0.2},
			{Context: 16384, Status: vocab.StatusError, Reason: "HTTP 500 from /v1/completions", ElapsedS: 0.1},
		},
		Decode: []result.DecodeCell{
			{Matrix: "decode", Context: 8192, Concurrency: 1, Status: vocab.StatusValid, TotalTPS: 408.2, PerRequestTPS: 405.9,
				TTFTMs: 78, TBTMs: 2.5, ActiveAvg: 1, Completed: 3, OutputTokens: 12247, MeasuredS: 30, ElapsedS: 2.5},
			{Matrix: "decode", Context: 8192, Concurrency: 64, Status: vocab.StatusQueued, TotalTPS: 5421.3, PerRequestTPS: 84.7,
				TTFTMs: 8671, TBTMs: 26.6, ActiveAvg: 23.1, OutputTokens: 162639, MeasuredS: 30, ElapsedS: 3.5},
			{Matrix: "decode", Context: 16384, Concurrency: 1, Status: vocab.StatusError, Reason: "stream stalled for 30s"},
			{Matrix: "decode", Context: 16384, Concurrency: 64, Status: vocab.StatusOverCapacity, Reason: "64 × (16384 + 256) > 1,000,000 KV tokens"},
		},
		Verdicts: []result.Verdict{
			{Test: server + "/assert/decode_8k_1", Kind: vocab.KindAssert, Outcome: vocab.Pass, Rule: `decode["8K"][1].total_tps >= 300`,
				File: spec, Line: 30, Details: []string{`decode["8K"][1].total_tps = 408.2`}},
			{Test: server + "/assert/decode_8k_64", Kind: vocab.KindAssert, Outcome: vocab.Fail, Rule: `decode["8K"][64].total_tps >= 6000`,
				File: spec, Line: 42, Message: "decode throughput at 8K x 64 fell below 6,000 tok/s",
				Details: []string{`decode["8K"][64].total_tps = 5421.3, want >= 6000 (-9.6%)`}},
			{Test: server + "/assert/needs_16k_64", Kind: vocab.KindAssert, Outcome: vocab.Error, Rule: `decode["16K"][64].ttft_ms < 500`,
				File: spec, Line: 50, Message: "cell not measured: over capacity", Infra: true},
			{Test: server + "/expect/decode_total_tps/ctx=16K/conc=64", Kind: vocab.KindExpect, Outcome: vocab.Skip, Message: "no expectation"},
		},
	}
}

func TestJUnitGolden(t *testing.T) {
	a, b := sampleRun("specs/a.hcl", "qwen"), sampleRun("specs/b.hcl", "glm")
	c := sampleRun("specs/a.hcl", "qwen-tp2")
	c.Prefill, c.Decode, c.Verdicts = nil, nil, nil
	c.Error = "server exited with status 1 before it was ready"
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, []*result.Results{a, b, c}); err != nil {
		t.Fatal(err)
	}
	golden(t, "junit.xml", buf.Bytes())

	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Skipped  int `xml:"skipped,attr"`
		junitDoc
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc.junitDoc); err != nil {
		t.Fatalf("invalid XML: %v", err)
	}
	type counts struct{ Name, Tests, Failures, Errors, Skipped any }
	var got []counts
	for _, s := range doc.junitDoc.Suites {
		got = append(got, counts{s.Name, s.Tests, s.Failures, s.Errors, s.Skipped})
	}
	// Per run: 2 prefill + 4 decode + 4 verdicts = 10 cases; 1 failure;
	// errors: prefill 16K, decode 16K×1, needs_16k_64; skipped: over
	// capacity and the skipped expect cell. The crashed run adds 1 error.
	want := []counts{{"specs/a.hcl", 11, 1, 4, 2}, {"specs/b.hcl", 10, 1, 3, 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("suites (-want +got):\n%s", diff)
	}
	for _, cs := range doc.junitDoc.Suites[0].Cases {
		switch cs.Name {
		case "qwen/assert/decode_8k_64":
			if cs.Failure == nil || cs.Failure.Message != "decode throughput at 8K x 64 fell below 6,000 tok/s" ||
				!bytes.Contains([]byte(cs.Failure.Text), []byte("want >= 6000 (-9.6%)")) {
				t.Errorf("failure = %+v", cs.Failure)
			}
		case "qwen/decode/ctx=16K/conc=64":
			if cs.Skipped == nil || cs.Skipped.Message != "over capacity" {
				t.Errorf("over-capacity cell: skipped = %+v", cs.Skipped)
			}
		case "qwen-tp2":
			if cs.Error == nil || cs.Error.Message != c.Error {
				t.Errorf("crashed run: error = %+v", cs.Error)
			}
		}
	}
}

func TestJUnitEscapes(t *testing.T) {
	r := sampleRun("specs/<&>.hcl", "q")
	r.Verdicts[1].Message = `a "quoted" <message> & more` + "\x00"
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, []*result.Results{r}); err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("invalid XML: %v\n%s", err, buf.String())
	}
	if doc.Suites[0].Name != "specs/<&>.hcl" {
		t.Errorf("suite name %q", doc.Suites[0].Name)
	}
}

// TestJUnitInconclusive: an inconclusive baseline comparison is a failure of
// its own type, so that CI can tell "measure more" from "regressed".
func TestJUnitInconclusive(t *testing.T) {
	res := &result.Results{Schema: result.Schema, Spec: "specs/a.hcl", Server: result.Server{Name: "qwen"},
		Verdicts: []result.Verdict{
			{Test: "qwen/baseline/decode/ctx=8K/conc=64", Kind: vocab.KindBaseline, Outcome: vocab.Inconclusive,
				Message: "total_tps inconclusive against the baseline"},
			{Test: "qwen/baseline/decode/ctx=8K/conc=1", Kind: vocab.KindBaseline, Outcome: vocab.Fail, Message: "total_tps regressed"},
		}}
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, []*result.Results{res}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Failures != 2 {
		t.Errorf("failures = %d, want 2 (the inconclusive comparison fails)\n%s", doc.Failures, buf.String())
	}
	if !bytes.Contains(buf.Bytes(), []byte(`type="inconclusive"`)) || !bytes.Contains(buf.Bytes(), []byte(`type="baseline"`)) {
		t.Errorf("want one failure of type inconclusive and one of type baseline:\n%s", buf.String())
	}
}

// TestJUnitCellLines: each prefill, decode and traffic cell's test case
// carries its own line as output: a traffic cell its TrafficSummary, a
// prefill cell its tok/s and TTFT, a cell not measured its status and
// reason.
func TestJUnitCellLines(t *testing.T) {
	traffic := trafficResults()
	traffic.Traffic = append(traffic.Traffic, result.TrafficCell{Traffic: "steady", Context: 1024, Rate: 32, Arrivals: vocab.ArrivalsPoisson,
		Status: vocab.StatusError, Reason: "server gone"})
	tests := []struct {
		name string
		res  *result.Results
		want func(res *result.Results) map[string]string // test name → its output
	}{
		{"traffic", traffic, func(res *result.Results) map[string]string {
			out := map[string]string{}
			for i := range res.Traffic {
				c := &res.Traffic[i]
				line := TrafficSummary(c)
				if !c.Status.Measured() {
					line = "Error: server gone"
				}
				out[c.Ref().TestName(res.Server.Name)] = line
			}
			return out
		}},
		{"prefill and decode", sampleRun("specs/a.hcl", "qwen"), func(res *result.Results) map[string]string {
			out := map[string]string{}
			for i := range res.Prefill {
				c := &res.Prefill[i]
				line := withReason(statusWord(c.Status), c.Reason)
				if c.Status.Measured() {
					line = prefillTPSText(c.TPS, 0) + " tok/s · " + prefillTTFTText(c) + " TTFT"
				}
				out[c.Ref().TestName(res.Server.Name)] = line
			}
			for i := range res.Decode {
				out[res.Decode[i].Ref().TestName(res.Server.Name)] = decodeSummary(&res.Decode[i])
			}
			return out
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteJUnit(&buf, []*result.Results{tt.res}); err != nil {
				t.Fatal(err)
			}
			var doc junitSuites
			if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, s := range doc.Suites {
				for _, c := range s.Cases {
					got[c.Name] = c.SystemOut
				}
			}
			want := tt.want(tt.res)
			if len(want) < 3 {
				t.Fatalf("%d cells: the case checks too little", len(want))
			}
			for name, line := range want {
				if got[name] != line {
					t.Errorf("%s: output %q, want %q", name, got[name], line)
				}
			}
		})
	}
}

// TestJUnitProbes: a search probe the search took as meeting its
// objective passes; one it did not take so (missed, or undecided and
// taken as missing) is skipped with its decision as the message, as on
// the console; one not measured keeps its error (docs/method.md#search).
func TestJUnitProbes(t *testing.T) {
	traffic := func(rate float64, st vocab.Status) *result.TrafficCell {
		return &result.TrafficCell{Traffic: "chat", Search: "capacity", Context: 1024, Rate: rate, Status: st, Reason: "server gone"}
	}
	res := &result.Results{Schema: result.Schema, Spec: "specs/a.hcl", Server: result.Server{Name: "q"},
		Search: []result.Search{{Name: "capacity", Traffic: "chat", Probes: []result.SearchProbe{
			{Rate: 8, Traffic: traffic(8, vocab.StatusValid), Decision: result.DecisionMet, Passed: true, Reason: "met even at the pessimistic bounds"},
			{Rate: 32, Traffic: traffic(32, vocab.StatusQueued), Decision: result.DecisionFailed, Reason: "failed even at the optimistic bounds"},
			{Rate: 16, Traffic: traffic(16, vocab.StatusValid), Decision: result.DecisionUndecided, Reason: "undecided after 4 windows, taken as failed"},
			{Rate: 12, Traffic: traffic(12, vocab.StatusError), Decision: result.DecisionFailed},
		}}, {Name: "users", Probes: []result.SearchProbe{
			{Concurrency: 4, Cell: result.DecodeCell{Search: "users", Context: 1024, Concurrency: 4, Status: vocab.StatusValid}, Passed: true},
			{Concurrency: 8, Cell: result.DecodeCell{Search: "users", Context: 1024, Concurrency: 8, Status: vocab.StatusQueued}, Reason: "ttft_ms = 900, want < 500"},
		}}}}
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, []*result.Results{res}); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range doc.Suites[0].Cases {
		switch {
		case c.Skipped != nil:
			got[c.Name] = "skipped: " + c.Skipped.Message
		case c.Error != nil:
			got[c.Name] = "error: " + c.Error.Message
		case c.Failure != nil:
			got[c.Name] = "failure: " + c.Failure.Message
		default:
			got[c.Name] = "passed"
		}
	}
	want := map[string]string{
		"q/search/capacity/rate=8":  "passed",
		"q/search/capacity/rate=32": "skipped: objective not met: failed even at the optimistic bounds",
		"q/search/capacity/rate=16": "skipped: objective undecided: undecided after 4 windows, taken as failed",
		"q/search/capacity/rate=12": "error: server gone",
		"q/search/users/conc=4":     "passed",
		"q/search/users/conc=8":     "skipped: objective not met: ttft_ms = 900, want < 500",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
