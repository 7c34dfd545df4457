package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	res "github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// TestRejections runs the binary against the simulator launched as vLLM
// with admission control (docs/method.md#rejections): --max-num-seqs 2
// runs two requests, --max-num-queued-reqs 3 takes a third into its queue
// and refuses the rest with vLLM's 503. A decode cell of 2 streams is
// untouched; one of 6 has three streams refused over and over, and so
// has a closed-loop traffic cell of 6 (a closed loop: an open loop's
// client-lag rule would make a loaded machine's stall the cell's error).
// Neither cell is an error and the run is not: the exit code is the
// assertions' (one fails on the refused traffic: exit 1). The cells count their
// refused requests as rejected, results.json has the figures with the
// server's count (vllm:admission_rejections_total) agreeing with the
// client's, requests.jsonl marks them, and the console and report.md say
// so.
func TestRejections(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := writeSpecLen(t, freePort(t), 4096,
		`"--max-num-seqs", "2", "--max-num-queued-reqs", "3", "--sim-kv-tokens", "10000000", "--sim-tbt", "10ms", "--sim-ttft", "20ms", "--sim-prefill-tps", "1000000"`, `
measure {
  max_output = 40
  duration   = "2s"
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [2, 6]
}
traffic "over" {
  context     = "1K"
  concurrency = [6]
  duration    = "3s"
  warmup      = "1s"
}
assert "refused_above_the_queue" {
  condition = decode["1K"][6].rejected > 0 && decode["1K"][2].rejected == 0
}
assert "few_refused" {
  condition     = over["1K"][6].rejected_share <= 0.1
  error_message = "the server refused more than a tenth of the traffic"
}
`)
	out := filepath.Join(t.TempDir(), "out")
	start := time.Now()
	r := slogate(t, mark, 3*time.Minute, "", nil, "run", "-sim", "-v", "-out", out, spec)
	t.Logf("run took %v\n%s", time.Since(start).Round(time.Second), r.Stdout)
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1 (few_refused fails; no error)\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	results := readResults(t, out)
	decode := func(conc int) res.DecodeCell {
		c, ok := results.DecodeCell("decode", 1024, conc)
		if !ok {
			t.Fatalf("no decode cell at concurrency %d", conc)
		}
		return *c
	}
	// agrees checks the cross-check of a cell with refusals: the server's
	// counter over the cell equals the client's count, but for requests
	// the cell closed before any answer (each may have been refused
	// unseen), and no rejections_gap warning.
	agrees := func(name string, rj *res.Rejections, windowRejected int, warnings []warning.Warning) {
		t.Helper()
		if rj == nil || rj.Server == nil {
			t.Errorf("%s: rejections %+v, want the client's and the server's counts", name, rj)
			return
		}
		t.Logf("%s: rejected %d in the window; over the cell client %d, server %d, unanswered %d, by reason %v", name, windowRejected, rj.Client, *rj.Server, rj.Unanswered, rj.ByReason)
		if rj.Client < windowRejected || !rj.Agree() || rj.Unanswered == 0 && *rj.Server != int64(rj.Client) || warning.Has(warnings, warning.RejectionsGap) {
			t.Errorf("%s: server counted %d, client %d (%d unanswered), window %d; want the server's count to equal the client's", name, *rj.Server, rj.Client, rj.Unanswered, windowRejected)
		}
		if rj.ByReason["max_num_queued_reqs"] != *rj.Server {
			t.Errorf("%s: by reason %v, want all %d for max_num_queued_reqs", name, rj.ByReason, *rj.Server)
		}
	}

	two, six := decode(2), decode(6)
	if two.Status != vocab.StatusValid || two.Rejected != 0 || two.Rejections != nil {
		t.Errorf("decode at 2: %s (%s), rejected %d, rejections %+v; want valid, none refused", two.Status, two.Reason, two.Rejected, two.Rejections)
	}
	if six.Status != vocab.StatusQueued || six.Rejected == 0 || !strings.Contains(six.Reason, "at admission") || six.TotalTPS <= 0 {
		t.Errorf("decode at 6: %s (%s), rejected %d, total_tps %v; want queued by the refusals, measured", six.Status, six.Reason, six.Rejected, six.TotalTPS)
	}
	agrees("decode at 6", six.Rejections, six.Rejected, six.Warnings)

	tc, ok := results.TrafficCell(vocab.CellRef{Phase: vocab.PhaseTraffic, Matrix: "over", Context: 1024, Concurrency: 6})
	if !ok {
		t.Fatal("no traffic cell at concurrency 6")
	}
	if tc.Status != vocab.StatusQueued || tc.Rejected == 0 || tc.Completed == 0 || tc.Rejected+tc.Completed+tc.Unfinished > tc.Launched {
		t.Errorf("traffic: %s (%s); launched %d, completed %d, rejected %d, unfinished %d", tc.Status, tc.Reason, tc.Launched, tc.Completed, tc.Rejected, tc.Unfinished)
	}
	if good := tc.GoodputShare * float64(tc.Launched); good > float64(tc.Launched-tc.Rejected)+0.5 || tc.RejectedShare < 0.5 {
		t.Errorf("traffic: goodput share %v, rejected share %v of %d launched; want the refused counted against goodput, most of them refused", tc.GoodputShare, tc.RejectedShare, tc.Launched)
	}
	agrees("traffic", tc.Rejections, tc.Rejected, tc.Warnings)

	// requests.jsonl: the refused requests are marked, as many as the
	// cells' clients counted, none an error.
	byCell := map[string]map[res.RequestStatus]int{}
	for _, rec := range readRequests(t, out) {
		if byCell[rec.Cell] == nil {
			byCell[rec.Cell] = map[res.RequestStatus]int{}
		}
		byCell[rec.Cell][rec.Status]++
		if rec.Status == res.RequestRejected && (!strings.Contains(rec.Error, "refused the request at admission") || rec.TTFTMs != nil || rec.OutputTokens != 0) {
			t.Errorf("a rejected record %+v, want the refusal quoted, no token", rec)
		}
	}
	for name, want := range map[string]int{six.Ref().Name(): six.Rejections.Client, tc.Ref().Name(): tc.Rejections.Client, two.Ref().Name(): 0} {
		if got := byCell[name][res.RequestRejected]; got != want {
			t.Errorf("requests.jsonl: %s has %d rejected records, want %d", name, got, want)
		}
		if n := byCell[name][res.RequestError]; n != 0 {
			t.Errorf("requests.jsonl: %s has %d records in error, want none", name, n)
		}
	}

	for _, want := range []string{
		"--- PASS: sim/assert/refused_above_the_queue",
		"--- FAIL: sim/assert/few_refused",
		"the server refused more than a tenth of the traffic",
		" rejected · queued (the server refused ",
		" rejected in ",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Rejected requests", "- decode/ctx=1K/conc=6: ", "- traffic/over/ctx=1K/conc=6: ", "counted by the server (max_num_queued_reqs ", "| Rejected requests |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}
