package measure

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestRequestTraceRecord: a trace becomes the documented record: TTFT from
// the start, TPOT = (last chunk − first chunk) ÷ (output tokens − 1) as
// vLLM's benchmark computes it, the ITL summary of the chunk gaps, and the
// status from how the request ended.
func TestRequestTraceRecord(t *testing.T) {
	origin := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	ms := int64(time.Millisecond)
	trace := func() requestTrace {
		var tr requestTrace
		tr.begin(10 * ms)
		for _, at := range []int64{30, 35, 40, 50} { // first chunk at 30 ms, then gaps 5, 5, 10
			tr.chunk(at * ms)
		}
		tr.end, tr.promptTokens, tr.outputTokens, tr.finishReason = 52*ms, 1024, 5, "length"
		return tr
	}
	f := func(v float64) *float64 { return &v }
	meta := requestMeta{cell: "decode/ctx=1K/conc=2", phase: vocab.PhaseDecode, stream: 2, repeat: 1}
	base := result.RequestRecord{Cell: "decode/ctx=1K/conc=2", Phase: vocab.PhaseDecode, Stream: 2, Repeat: 1,
		Start: origin.Add(10 * time.Millisecond), End: origin.Add(52 * time.Millisecond),
		TTFTMs: f(20), E2EMs: 42, TPOTMs: f(5), // (50 − 30) ÷ (5 − 1)
		ITL:          &result.GapSummary{Count: 3, Mean: 6.667, P50: 5, P99: 9.9, Max: 10},
		PromptTokens: 1024, OutputTokens: 5, FinishReason: "length"}
	tests := []struct {
		name                string
		finished, cancelled bool
		err                 error
		want                result.RequestStatus
		wantErr             string
	}{
		{name: "finished", finished: true, want: result.RequestFinished},
		{name: "cancelled by the window's end", cancelled: true, want: result.RequestCancelled},
		{name: "error", err: errors.New("stream stalled"), want: result.RequestError, wantErr: "stream stalled"},
		{name: "ended without a finish reason", want: result.RequestUnfinished},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := trace()
			got := tr.record(origin, meta, tt.finished, tt.cancelled, tt.err)
			want := base
			want.Status, want.Error = tt.want, tt.wantErr
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("record (-want +got):\n%s", d)
			}
		})
	}
	t.Run("no chunk: no TTFT, TPOT or ITL", func(t *testing.T) {
		var tr requestTrace
		tr.begin(0)
		tr.end = 3 * ms
		got := tr.record(origin, meta, false, true, nil)
		if got.TTFTMs != nil || got.TPOTMs != nil || got.ITL != nil || got.E2EMs != 3 {
			t.Errorf("record %+v", got)
		}
	})
}

// BenchmarkRequestLog256: 256 streams each finishing requests of 4096 output
// tokens (4095 gaps to summarise) and writing their records, appended as
// JSON lines to a buffered file under a lock as the runner's requests.jsonl
// is; one op is one request record.
func BenchmarkRequestLog256(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "requests.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var mu sync.Mutex
	w := bufio.NewWriterSize(f, 64<<10)
	write := func(rec *result.RequestRecord) error {
		mu.Lock()
		defer mu.Unlock()
		return result.AppendRequest(w, rec)
	}
	origin := time.Now()
	meta := requestMeta{cell: "decode/ctx=8K/conc=256", phase: vocab.PhaseDecode, promptTokens: 8192}
	const streams, tokens = 256, 4096
	traces := make([]requestTrace, streams)
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	per := (b.N + streams - 1) / streams
	for s := range streams {
		wg.Add(1)
		go func(tr *requestTrace) {
			defer wg.Done()
			m := meta
			m.stream = s + 1
			for range per {
				tr.begin(0)
				for k := range tokens {
					tr.chunk(int64(k)*int64(5*time.Millisecond) + int64(k%7)*int64(time.Microsecond))
				}
				tr.end, tr.outputTokens, tr.finishReason = int64(tokens)*int64(5*time.Millisecond), tokens, "length"
				rec := tr.record(origin, m, true, false, nil)
				if err := write(&rec); err != nil {
					b.Error(err)
					return
				}
			}
		}(&traces[s])
	}
	wg.Wait()
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
}

// TestStoreDistribution: a distribution's statistics land under the names
// of the rule, the table's fields included; without samples only the count
// (0) is stored, so a percentile of nothing reads as absent, not 0.
func TestStoreDistribution(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want map[string]float64
		p90  float64
	}{
		{name: "samples", xs: []float64{10, 20, 30, 40, 50},
			want: map[string]float64{"ttft_ms_count": 5, "ttft_ms_mean": 30, "ttft_ms_p95": 48, "ttft_ms_p99_9": 50}, p90: 46},
		{name: "no samples", xs: nil, want: map[string]float64{"ttft_ms_count": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c result.DecodeCell
			storeDistribution(vocab.PhaseDecode, distribution{"ttft_ms", tt.xs, 1}, []float64{50, 90, 95, 99.9},
				func(m metric.Metric, v float64) { c.SetValue(m, v) })
			if d := cmp.Diff(tt.want, c.Stats); d != "" {
				t.Errorf("stats (-want +got):\n%s", d)
			}
			if c.TTFTMsP90 != tt.p90 {
				t.Errorf("ttft_ms_p90 field = %v, want %v", c.TTFTMsP90, tt.p90)
			}
		})
	}
}
