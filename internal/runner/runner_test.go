package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/plan"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vllmfake"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

func TestCombineDecode(t *testing.T) {
	runs := []result.DecodeCell{
		{Status: vocab.StatusValid, TotalTPS: 100, Completed: 1, OutputTokens: 10, TokenSource: result.TokenSourceUsage},
		{Status: vocab.StatusQueued, Reason: "waited", TotalTPS: 300, Completed: 3, OutputTokens: 30, TokenSource: result.TokenSourceUsage},
		{Status: vocab.StatusValid, TotalTPS: 200, Completed: 2, OutputTokens: 20, TokenSource: result.TokenSourceChunks},
	}
	c := combineDecode(runs)
	if c.TotalTPS != 200 || c.Completed != 2 || c.OutputTokens != 20 || c.Repeats != 3 ||
		c.Status != vocab.StatusQueued || c.TokenSource != result.TokenSourceChunks || c.Spread["total_tps"] != [2]float64{100, 300} {
		t.Errorf("combined = %+v", c)
	}
	// Every run's value is kept, in the order measured, for the interval that compares runs.
	if !slices.Equal(c.Samples["total_tps"], []float64{100, 300, 200}) || !slices.Equal(c.Samples["completed"], []float64{1, 3, 2}) {
		t.Errorf("samples = %v", c.Samples)
	}
}

// testConfig measures a fake endpoint with short windows.
func testConfig(t *testing.T, url string, sp *spec.Spec, run string) Config {
	srv := sp.Servers[0]
	var keep *regexpT
	if run != "" {
		keep = mustRegexp(run)
	}
	return Config{Spec: sp, Server: srv, Plan: plan.New(sp, srv, keep), OutDir: t.TempDir(), Endpoint: url,
		SteadyHold: 100 * time.Millisecond, StreamIdleTimeout: 2 * time.Second, ReasonText: report.CellReasonText, WarningText: report.WarningText}
}

func smallSpec(conc ...int) *spec.Spec {
	return &spec.Spec{
		Filename: "t.hcl",
		Servers:  []*spec.Server{{Name: "q", Model: "Qwen/Q", ServedModelName: "qwen"}},
		Measure:  &spec.Measure{Duration: 500 * time.Millisecond, DurationText: "500ms", MaxOutput: 4096, Endpoint: "completions", Repeat: 1},
		Prefill:  &spec.Prefill{Contexts: []int{1000}},
		Matrices: []*spec.Matrix{{Label: "decode", Contexts: []int{1000}, Concurrency: conc}},
	}
}

func TestRunEndpoint(t *testing.T) {
	// Capacity 700 blocks × 16 = 11,200 tokens: C × (1000 + 4096) fits for
	// C = 1 and 2, not for C = 64.
	f := vllmfake.Server{Tokens: 100000, PerChunk: 2, Gap: 2 * time.Millisecond, KVBlocks: 700, MaxModelLen: 8192}
	s := f.Start(t)
	cfg := testConfig(t, s.URL, smallSpec(1, 2, 64), "")
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Server.KVCacheTokens != 11200 || res.Server.KVCacheSource != "metrics" || res.Server.Version != "0.0.fake" || res.Server.MaxModelLen != 8192 {
		t.Errorf("server = %+v", res.Server)
	}
	if len(res.Prefill) != 1 || res.Prefill[0].Status != vocab.StatusValid || res.Prefill[0].TPS <= 0 {
		t.Errorf("prefill = %+v", res.Prefill)
	}
	var statuses []vocab.Status
	for _, c := range res.Decode {
		statuses = append(statuses, c.Status)
	}
	if diff := cmp.Diff([]vocab.Status{vocab.StatusValid, vocab.StatusValid, vocab.StatusOverCapacity}, statuses); diff != "" {
		t.Fatalf("statuses (-want +got):\n%s\n%+v", diff, res.Decode)
	}
	for _, c := range res.Decode[:2] {
		if c.OutputTokens <= 0 || c.TotalTPS <= 0 || c.ServerTotalTPS == nil || c.TokenSource != result.TokenSourceUsage ||
			c.MeasuredS < 0.45 || c.MeasuredS > 0.7 || c.ActiveAvg < 0.95*float64(c.Concurrency) {
			t.Errorf("cell %s = %+v", c.Ref().Name(), c)
		}
		// Two tokens per chunk: a gap counts for two tokens.
		if c.TBTMs <= 0 || c.TBTMs > 5 {
			t.Errorf("cell %s tbt_ms = %v, want about 1 ms", c.Ref().Name(), c.TBTMs)
		}
	}
	body := f.LastBody.Load().(map[string]any)
	if body["min_tokens"] != 4096.0 || body["ignore_eos"] != true || body["temperature"] != nil || body["cache_salt"] == nil ||
		len(body["prompt"].([]any)) != 1000 {
		t.Errorf("last request body = %v", body)
	}
	// Files: cells.jsonl has every cell; results.json is complete.
	fh, err := os.Open(filepath.Join(cfg.OutDir, "cells.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	recs, err := result.ReadCells(fh)
	if err != nil || len(recs) != 4 {
		t.Fatalf("cells.jsonl: %d records, %v", len(recs), err)
	}
	saved, err := result.Read(filepath.Join(cfg.OutDir, "results.json"))
	if err != nil || len(saved.Decode) != 3 || saved.Finished.IsZero() {
		t.Fatalf("results.json: %+v, %v", saved, err)
	}
}

func TestRunQueued(t *testing.T) {
	f := vllmfake.Server{Tokens: 100000, Gap: 2 * time.Millisecond, Waiting: 3}
	s := f.Start(t)
	res, err := Run(context.Background(), testConfig(t, s.URL, smallSpec(2), "decode"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Decode) != 1 || res.Decode[0].Status != vocab.StatusQueued || !strings.Contains(res.Decode[0].Reason, "waited") {
		t.Fatalf("decode = %+v, want one queued cell", res.Decode)
	}
	if len(res.Warnings) == 0 || res.Warnings[0].Code != warning.KVUnknown {
		t.Errorf("warnings = %+v, want the unknown-capacity warning", res.Warnings)
	}
}

// TestRunWaitingDuringTheHold: waiting requests in two polls in a row
// after the steady-state gate's conditions first held do not break the
// hold for long (a restart shows for a moment), but the server made a
// request wait: the cell is queued. One poll alone is a moment (a request
// that waited one engine step): valid. Waiting requests during the
// ramp-up, before the conditions first held, are the C requests being
// admitted: valid (docs/method.md#statuses). The fake keys the waiting
// gauge to the nth poll that found all C requests streaming, not to the
// clock.
func TestRunWaitingDuringTheHold(t *testing.T) {
	tests := []struct {
		name       string
		waitingAt  []int64 // the polls (counted from all C streaming) that report num_requests_waiting = 1
		want       vocab.Status
		wantReason string
	}{
		// The hold begins at poll 1 (or 2, if the client had not yet read a
		// first token); polls 10 and 11 are inside the 2 s hold unless ten
		// polls of 50 ms took 2 s.
		{name: "in the hold", waitingAt: []int64{10, 11},
			want: vocab.StatusQueued, wantReason: "the server reported requests waiting for capacity during the steady-state hold"},
		{name: "one poll in the hold is a moment", waitingAt: []int64{10}, want: vocab.StatusValid},
		// Polls 1 and 2 keep the conditions from holding: the ramp-up.
		{name: "in the ramp-up", waitingAt: []int64{1, 2}, want: vocab.StatusValid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := vllmfake.Server{Tokens: 100000, Gap: 2 * time.Millisecond, Full: 2, WaitingAt: func(n int64) float64 {
				if slices.Contains(tc.waitingAt, n) {
					return 1
				}
				return 0
			}}
			s := f.Start(t)
			cfg := testConfig(t, s.URL, smallSpec(2), "decode")
			cfg.SteadyHold = 2 * time.Second
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Decode) != 1 || res.Decode[0].Status != tc.want || res.Decode[0].Reason != tc.wantReason {
				t.Fatalf("decode = %+v, want one cell %s %q", res.Decode, tc.want, tc.wantReason)
			}
			if got := f.FullPolls.Load(); got <= slices.Max(tc.waitingAt) {
				t.Fatalf("the fake saw %d polls with all streams running: the waiting poll never came", got)
			}
		})
	}
}

func TestRunStreamErrorMakesCellError(t *testing.T) {
	f := vllmfake.Server{Tokens: 100000, Gap: 2 * time.Millisecond, MidError: true}
	s := f.Start(t)
	res, err := Run(context.Background(), testConfig(t, s.URL, smallSpec(1), "decode"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Decode) != 1 || res.Decode[0].Status != vocab.StatusError || !strings.Contains(res.Decode[0].Reason, "engine died") {
		t.Fatalf("decode = %+v, want an error cell", res.Decode)
	}
}

// TestRunServerRefusal: an endpoint that answers but refuses (another
// served name, a missing API key) is exit 3 with the server's answer and the
// fix, never reported as unreachable.
func TestRunServerRefusal(t *testing.T) {
	tests := []struct {
		name string
		fake *vllmfake.Server
		want string
	}{
		{name: "wrong served name", fake: &vllmfake.Server{Model: "someone-else", Tokens: 10}, want: `the server at %s serves "someone-else", not "qwen": set served_model_name`},
		{name: "API key refused", fake: &vllmfake.Server{Model: "qwen", Tokens: 10, AuthRequired: "secret"}, want: "GET /v1/models was refused (401 Unauthorized): set api_key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.fake.Start(t)
			_, err := Run(context.Background(), testConfig(t, s.URL, smallSpec(1), ""))
			want := tc.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, s.URL)
			}
			if exit.Code(err) != exit.Infra || err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("err = %v (exit %d), want exit 3 starting %q", err, exit.Code(err), want)
			}
		})
	}
}

func TestRunUnreachableEndpoint(t *testing.T) {
	defer func(d time.Duration) { endpointReadyTimeout = d }(endpointReadyTimeout)
	endpointReadyTimeout = 500 * time.Millisecond
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	url := "http://" + l.Addr().String()
	l.Close()
	res, err := Run(context.Background(), testConfig(t, url, smallSpec(1), ""))
	if exit.Code(err) != exit.Infra || !strings.Contains(err.Error(), "unreachable") || res.Error == "" {
		t.Fatalf("err = %v, want exit 3 saying the endpoint is unreachable", err)
	}
}

func TestRunInterrupted(t *testing.T) {
	f := vllmfake.Server{Tokens: 100000, Gap: 2 * time.Millisecond}
	s := f.Start(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	sig := exit.With(exit.SIGINT, errors.New("interrupted by interrupt"))
	cfg := testConfig(t, s.URL, smallSpec(1, 2), "")
	obs := &cancelAfter{n: 2, cancel: func() { cancel(sig) }}
	cfg.Observer = obs
	res, err := Run(ctx, cfg)
	if !errors.Is(err, sig) || exit.Code(err) != exit.SIGINT {
		t.Fatalf("err = %v, want the signal cause", err)
	}
	saved, rerr := result.Read(filepath.Join(cfg.OutDir, "results.json"))
	if rerr != nil || !saved.Interrupted || len(saved.Prefill) != 1 || len(saved.Decode) != 1 || !res.Interrupted {
		t.Fatalf("results.json after interrupt: %+v, %v", saved, rerr)
	}
}

// cancelAfter cancels the run when the n-th cell starts.
type cancelAfter struct {
	nopObserver
	n      int
	seen   int
	cancel func()
}

func (c *cancelAfter) CellStart(vocab.CellRef) {
	if c.seen++; c.seen == c.n+1 {
		c.cancel()
	}
}

func TestRunRefusesBusyPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	sp := smallSpec(1)
	sp.Servers[0].Host = "127.0.0.1"
	sp.Servers[0].Port = l.Addr().(*net.TCPAddr).Port
	sp.Servers[0].Command = "true"
	cfg := testConfig(t, "", sp, "")
	_, err = Run(context.Background(), cfg)
	if exit.Code(err) != exit.Infra || !strings.Contains(err.Error(), "already accepts connections") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(cfg.OutDir, "server.log")); err == nil {
		t.Error("a server was started although the port was busy")
	}
}

type regexpT = regexp.Regexp

func mustRegexp(s string) *regexp.Regexp { return regexp.MustCompile(s) }

func TestResumeKeepsCells(t *testing.T) {
	sp := smallSpec(1, 2, 4)
	cfg := testConfig(t, "http://127.0.0.1:1", sp, "")
	srv := sp.Servers[0].Name
	dec := func(conc int, st vocab.Status) result.CellRecord {
		return result.CellRecord{Server: srv, Phase: vocab.PhaseDecode,
			Decode: &result.DecodeCell{Matrix: "decode", Context: 1000, Concurrency: conc, Status: st, TotalTPS: float64(conc)}}
	}
	tests := []struct {
		name     string
		records  []result.CellRecord
		keptConc []int // decode cells kept, in cells.jsonl order
		left     int   // cells of the plan (1 prefill + 3 decode) still to measure
	}{
		{name: "nothing recorded", left: 4},
		{name: "valid cells kept", records: []result.CellRecord{dec(1, vocab.StatusValid), dec(2, vocab.StatusQueued)},
			keptConc: []int{1, 2}, left: 2},
		{name: "errors measured again", records: []result.CellRecord{dec(1, vocab.StatusValid), dec(2, vocab.StatusError)},
			keptConc: []int{1}, left: 3},
		{name: "a later record wins", records: []result.CellRecord{dec(2, vocab.StatusValid), dec(2, vocab.StatusError), dec(4, vocab.StatusError), dec(4, vocab.StatusOverCapacity)},
			keptConc: []int{4}, left: 3},
		{name: "another server's cells ignored", records: []result.CellRecord{{Server: "other", Phase: vocab.PhaseDecode,
			Decode: &result.DecodeCell{Matrix: "decode", Context: 1000, Concurrency: 1, Status: vocab.StatusValid}}}, left: 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			c.OutDir = t.TempDir()
			c.Resume = append([]result.CellRecord{}, tc.records...)
			r := &run{cfg: c, observer: nopObserver{}}
			r.results = r.initialResults()
			left, err := r.resume()
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(filepath.Join(c.OutDir, "cells.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			recs, err := result.ReadCells(f)
			if err != nil {
				t.Fatal(err)
			}
			var got, inResults []int
			for _, rec := range recs {
				got = append(got, rec.Decode.Concurrency)
			}
			for _, d := range r.results.Decode {
				inResults = append(inResults, d.Concurrency)
			}
			if left != tc.left || !cmp.Equal(got, tc.keptConc) || !cmp.Equal(inResults, tc.keptConc) {
				t.Errorf("left %d, cells.jsonl %v, results %v; want %d, %v", left, got, inResults, tc.left, tc.keptConc)
			}
		})
	}
}

// TestSlowScrapesWarn: a decode cell against a server whose /metrics takes
// at least 8 ms records its scrapes (results.json's polling) and warns that
// polling may perturb the server.
func TestSlowScrapesWarn(t *testing.T) {
	f := vllmfake.Server{Tokens: 100000, PerChunk: 2, Gap: 2 * time.Millisecond, KVBlocks: 1000, MaxModelLen: 8192, MetricsDelay: 8 * time.Millisecond}
	s := f.Start(t)
	res, err := Run(context.Background(), testConfig(t, s.URL, smallSpec(1), ""))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Decode) != 1 {
		t.Fatalf("decode = %+v", res.Decode)
	}
	c := res.Decode[0]
	if p := c.Polling; p == nil || p.Scrapes < 2 || p.MeanMs < 8 || p.MaxMs < p.MeanMs {
		t.Errorf("polling = %+v, want scrapes of at least 8 ms", p)
	}
	if !slices.ContainsFunc(c.Warnings, func(w warning.Warning) bool {
		mean, _ := w.Figure(warning.FigMeanMs)
		n, _ := w.Figure(warning.FigScrapes)
		return w.Code == warning.SlowScrape && c.Polling != nil && mean == c.Polling.MeanMs && int(n) == c.Polling.Scrapes
	}) {
		t.Errorf("warnings %+v lack a slow-scrape warning quoting the recorded polling %+v", c.Warnings, c.Polling)
	}
}

// TestPriceRecorded: the spec's price_per_gpu_hour is results.json's
// server.price_per_gpu_hour, and absent when the spec sets none.
func TestPriceRecorded(t *testing.T) {
	price := 3.5
	tests := []struct {
		name  string
		price *float64
		want  string
	}{
		{name: "priced", price: &price, want: `"price_per_gpu_hour":3.5`},
		{name: "no price", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp := smallSpec(1)
			sp.Servers[0].PricePerGPUHour = tc.price
			r := &run{cfg: testConfig(t, "http://127.0.0.1:1", sp, ""), observer: nopObserver{}}
			b, err := json.Marshal(r.initialResults().Server)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(b), "price_per_gpu_hour"); got != (tc.want != "") || !strings.Contains(string(b), tc.want) {
				t.Errorf("server = %s, want %q", b, tc.want)
			}
		})
	}
}
