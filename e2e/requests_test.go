package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	res "github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// readRequests reads a run's requests.jsonl.
func readRequests(t *testing.T, out string) []res.RequestRecord {
	t.Helper()
	f, err := os.Open(filepath.Join(out, "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []res.RequestRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r res.RequestRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("requests.jsonl line %d %q: %v", len(recs)+1, sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return recs
}

// TestRequestRecords: requests.jsonl holds one line per generation request
// the simulator received (--sim-record), prefill, warm-up, decode, traffic
// and search probe requests alike, each naming its cell, with its times,
// tokens and finish reason; the traffic cell's launched and completed
// counts are its in-window lines (docs/method.md#per-request-records).
func TestRequestRecords(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	t.Cleanup(func() { noLeftovers(t, mark) })
	rec := &sentLog{path: filepath.Join(t.TempDir(), "sent.jsonl")}
	base := startSim(t, mark, "Qwen/Qwen3.5-4B", "--served-model-name", "qwen", "--max-model-len", "65536",
		"--sim-tbt", "5ms", "--sim-ttft", "20ms", "--sim-kv-tokens", "1000000", "--sim-record", rec.path)
	const maxOutput = 24
	spec := writeSpec(t, freePort(t), "", `measure {
  duration   = "1s"
  max_output = 24
}
workload { distinct = true }
prefill { contexts = ["1K"] }
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [2]
}
traffic "steady" {
  context  = "1K"
  rate     = [8]
  duration = "1s"
  warmup   = "200ms"
}
search "max_users" {
  context     = "1K"
  concurrency = [1, 2]
  objective   = cell.per_request_tps >= 1
}
`)
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-endpoint", base, "-out", out, spec)
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	results, sent := readResults(t, out), rec.next(t)
	recs := readRequests(t, out)
	if len(recs) != len(sent) {
		t.Fatalf("requests.jsonl has %d lines, the simulator received %d requests", len(recs), len(sent))
	}
	byCell := map[string][]res.RequestRecord{}
	oneChunk, timed := 0, 0 // finished decode/traffic records without and with a TPOT
	for _, r := range recs {
		byCell[r.Cell] = append(byCell[r.Cell], r)
		if r.Start.IsZero() || r.End.Before(r.Start) || r.PromptTokens != 1024 || r.Status == "" {
			t.Fatalf("record %+v: want start ≤ end, 1024 prompt tokens, a status", r)
		}
		if r.Status == res.RequestFinished && (r.TTFTMs == nil || r.FinishReason != "length" || r.OutputTokens < 1) {
			t.Fatalf("finished record %+v: want a TTFT, finish_reason length, output tokens", r)
		}
		if r.Status != res.RequestFinished || r.Purpose != "" || r.Phase == vocab.PhasePrefill {
			continue
		}
		if r.OutputTokens != maxOutput {
			t.Fatalf("finished decode/traffic record %+v: want %d output tokens", r, maxOutput)
		}
		// A client that fell behind gets its tokens merged into one chunk
		// (the simulator merges a lagging stream's deltas as vLLM's
		// RequestOutputCollector does): one arrival time, so neither a
		// TPOT nor an inter-token gap is observable. Both are then
		// absent together; most requests must have both.
		switch {
		case r.TPOTMs == nil && r.ITL == nil:
			oneChunk++
		case r.TPOTMs == nil || r.ITL == nil || r.ITL.Count < 1:
			t.Fatalf("finished decode/traffic record %+v: want a TPOT and an ITL summary, or neither (one chunk)", r)
		default:
			timed++
		}
	}
	if oneChunk > timed {
		t.Errorf("%d finished decode/traffic records came in one chunk, %d with a TPOT and ITL: want most timed", oneChunk, timed)
	}
	warm := 0
	for _, r := range byCell["prefill/ctx=1K"] {
		if r.Purpose == res.PurposeWarmUp {
			warm++
		}
	}
	if len(byCell["prefill/ctx=1K"]) < 2 || warm < 1 {
		t.Errorf("prefill/ctx=1K: %d records, %d warm-up: want the cold request and the warm-up of stream 2", len(byCell["prefill/ctx=1K"]), warm)
	}
	for _, name := range []string{"decode/ctx=1K/conc=2", "search/max_users/conc=1", "search/max_users/conc=2"} {
		finishedIn := 0
		for _, r := range byCell[name] {
			if r.InWindow && r.Status == res.RequestFinished {
				finishedIn++
			}
		}
		if finishedIn == 0 {
			t.Errorf("%s: no finished request counted in the window among %d records", name, len(byCell[name]))
		}
	}
	if len(results.Traffic) != 1 {
		t.Fatalf("%d traffic cells", len(results.Traffic))
	}
	tc := results.Traffic[0]
	launched, completed := 0, 0
	for _, r := range byCell["traffic/steady/ctx=1K/rate=8"] {
		if r.InWindow {
			launched++
			if r.Status == res.RequestFinished {
				completed++
			}
		}
	}
	if launched != tc.Launched || completed != tc.Completed || launched == 0 {
		t.Errorf("traffic: %d in-window records, %d finished; the cell launched %d, completed %d", launched, completed, tc.Launched, tc.Completed)
	}
}

// TestPercentileCondition: measure.percentiles adds p95 and p99.9, with the
// mean and the count, to results.json; a condition reads
// decode["8K"][64].ttft_ms_p95 as recorded, and its verdict line quotes
// it (docs/method.md#metric-names).
func TestPercentileCondition(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := writeSpec(t, freePort(t), `"--sim-tbt", "2ms", "--sim-ttft", "15ms", "--sim-kv-tokens", "4000000"`, `measure {
  duration    = "1s"
  max_output  = 300
  percentiles = [50, 90, 95, 99, 99.9]
}
matrix "decode" {
  contexts    = ["8K"]
  concurrency = [64]
}
assert "tail" {
  condition = decode["8K"][64].ttft_ms_p95 <= 60000 && decode["8K"][64].ttft_ms_count >= 64 && decode["8K"][64].ttft_ms_p99_9 >= decode["8K"][64].ttft_ms_p95
}
`)
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-sim", "-v", "-out", out, spec)
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	c := readResults(t, out).Decode[0]
	p95, ok := c.Stats["ttft_ms_p95"]
	if !ok || c.Stats["ttft_ms_count"] < 64 || c.Stats["ttft_ms_p99_9"] < p95 || p95 < c.TTFTMsP90 || p95 > c.TTFTMsP99 {
		t.Fatalf("stats %v, p90 %v, p99 %v: want p90 ≤ p95 ≤ p99.9 and at least 64 requests", c.Stats, c.TTFTMsP90, c.TTFTMsP99)
	}
	// One token a chunk: an ITL per decode-token gap; TPOTs of the requests completed in the window.
	if itl, tbt := c.Stats["itl_ms_count"], c.Stats["tbt_ms_count"]; itl < 100 || itl < 0.99*tbt || itl > tbt || c.Stats["tpot_ms_count"] != float64(c.Completed) {
		t.Errorf("itl_ms_count %v, tbt_ms_count %v, tpot_ms_count %v, completed %d: want one ITL a token gap and one TPOT a completed request",
			itl, tbt, c.Stats["tpot_ms_count"], c.Completed)
	}
	want := fmt.Sprintf(`decode["8K"][64].ttft_ms_p95 = %s, want <= 60000: ok`, strconv.FormatFloat(p95, 'f', -1, 64))
	if !strings.Contains(r.Stdout, want) {
		t.Errorf("stdout lacks %q:\n%s", want, r.Stdout)
	}
}

// TestTrafficNoWarmUp: a traffic block's warmup = "0s" is no warm-up (it
// was refused as "must be a positive duration"): the window opens with the
// first request, so every request of the cell's requests.jsonl lines is in
// the window and the cell launched them all.
func TestTrafficNoWarmUp(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	t.Cleanup(func() { noLeftovers(t, mark) })
	spec := writeSpec(t, freePort(t), `"--sim-tbt", "5ms", "--sim-ttft", "20ms", "--sim-kv-tokens", "1000000"`, `measure {
  duration   = "1s"
  max_output = 16
}
traffic "cold" {
  context  = "1K"
  rate     = [8]
  duration = "1s"
  warmup   = "0s"
}
`)
	if v := slogate(t, mark, time.Minute, "", nil, "plan", spec); v.Code != 0 || !strings.Contains(v.Stdout, "traffic/cold") {
		t.Fatalf("plan: exit %d\n%s%s", v.Code, v.Stdout, v.Stderr)
	}
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-sim", "-out", out, spec)
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	results := readResults(t, out)
	if len(results.Traffic) != 1 || results.Traffic[0].Launched == 0 {
		t.Fatalf("traffic cells %+v: want one that launched requests", results.Traffic)
	}
	n := 0
	for _, rec := range readRequests(t, out) {
		if rec.Phase != vocab.PhaseTraffic {
			continue
		}
		n++
		if !rec.InWindow {
			t.Errorf("record %+v is outside the window: warmup = \"0s\" sends no warm-up", rec)
		}
	}
	if n != results.Traffic[0].Launched {
		t.Errorf("%d traffic records, the cell launched %d: every request is in the window", n, results.Traffic[0].Launched)
	}
}
