package requests

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/workload"
)

func traceFixture(name string) string { return filepath.Join("..", "..", "testdata", "traces", name) }

// TestReadTraces: each format's fixture is detected from its first line
// and read line by line: times, lengths, hash_ids; a BurstGPT failure (0
// response tokens) is counted and left out.
func TestReadTraces(t *testing.T) {
	tests := []struct {
		name, file, format string
		requests, zero     int
		lastAt             time.Duration // since the first request
		lastIn, lastOut    int
		lastBlocks         int
	}{
		{name: "mooncake", file: "mooncake.jsonl", format: workload.FormatMooncake, requests: 6, lastAt: 800 * time.Millisecond, lastIn: 300, lastOut: 4, lastBlocks: 1},
		{name: "bailian", file: "bailian.jsonl", format: workload.FormatBailian, requests: 4, lastAt: 700 * time.Millisecond, lastIn: 50, lastOut: 4, lastBlocks: 4},
		{name: "azure", file: "azure.csv", format: workload.FormatAzure, requests: 5, lastAt: 820 * time.Millisecond, lastIn: 1200, lastOut: 4},
		{name: "burstgpt", file: "burstgpt.csv", format: workload.FormatBurstGPT, requests: 4, zero: 1, lastAt: 900 * time.Millisecond, lastIn: 803, lastOut: 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, format := range []string{"", tc.format} {
				d, err := ReadDataset(traceFixture(tc.file), format)
				if err != nil {
					t.Fatal(err)
				}
				if d.Format != tc.format || len(d.Entries) != tc.requests || d.ZeroLength != tc.zero {
					t.Fatalf("format %q: read %s, %d requests, %d zero-length; want %s, %d, %d", format, d.Format, len(d.Entries), d.ZeroLength, tc.format, tc.requests, tc.zero)
				}
				last := d.Entries[len(d.Entries)-1].Trace
				if at := last.At - d.Entries[0].Trace.At; at != tc.lastAt || last.InputTokens != tc.lastIn || last.OutputTokens != tc.lastOut || len(last.HashIDs) != tc.lastBlocks {
					t.Errorf("last request: at %v, %d in, %d out, %d blocks; want %v, %d, %d, %d", at, last.InputTokens, last.OutputTokens, len(last.HashIDs), tc.lastAt, tc.lastIn, tc.lastOut, tc.lastBlocks)
				}
			}
		})
	}
}

// TestReadTraceErrors: a missing field or column, a time before the
// previous line's, a format that is not the file's, and a first line no
// format can be told from are errors at the file's own line.
func TestReadTraceErrors(t *testing.T) {
	tests := []struct {
		name, file, format string
		line               int
		want               string
	}{
		{name: "missing field", file: "bad/mooncake_missing_field.jsonl", line: 2, want: `no "hash_ids" field`},
		{name: "missing column", file: "bad/azure_missing_column.csv", line: 1, want: `no "GeneratedTokens" column`},
		{name: "two values on a line", file: "bad/mooncake_two_values.jsonl", line: 2, want: "more than one JSON value on the line"},
		{name: "out of order", file: "bad/burstgpt_out_of_order.csv", line: 4, want: "arrives 2s before line 3's"},
		{name: "format mismatch", file: "azure.csv", format: workload.FormatMooncake, line: 1, want: `format is "mooncake", but the first line has the fields of format azure`},
		{name: "prompt format on a trace", file: "mooncake.jsonl", format: workload.FormatJSONL, line: 1, want: "fields of format mooncake"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadDataset(traceFixture(tc.file), tc.format)
			var de *workload.DatasetError
			if !errors.As(err, &de) || de.Line != tc.line || !strings.Contains(de.Error(), tc.want) {
				t.Fatalf("got %v; want line %d saying %q", err, tc.line, tc.want)
			}
		})
	}
	t.Run("undetectable", func(t *testing.T) {
		_, err := ParseDataset("x.csv", []byte("when,in,out\n1,2,3\n"), "")
		if err == nil || !strings.Contains(err.Error(), "azure: TIMESTAMP, ContextTokens, GeneratedTokens; burstgpt: Timestamp") {
			t.Fatalf("got %v; want the CSV formats named", err)
		}
	})
}

// traceSchedule plans a trace fixture's replay with tr.
func traceSchedule(t *testing.T, file string, tr workload.Trace, seed uint64, maxModelLen int) (*Schedule, *workload.Dataset, error) {
	t.Helper()
	d, err := ReadDataset(traceFixture(file), "")
	if err != nil {
		t.Fatal(err)
	}
	p := NewScheduler(&fakeTokenizer{}, workload.Options{Prompt: workload.DatasetPrompt, Seed: seed, Trace: tr}, d)
	s, err := p.Schedule(context.Background(), ScheduleConfig{Requests: 1, MaxModelLen: maxModelLen})
	return s, d, err
}

// TestTracePrompts: every prompt is exactly its line's input tokens; two
// requests naming a block share exactly its tokens (the last block cut
// where the length ends), and no more; the arrivals are the trace's
// times; the same trace and seed give the same schedule and hash, another
// seed another.
func TestTracePrompts(t *testing.T) {
	for _, file := range []string{"mooncake.jsonl", "bailian.jsonl", "azure.csv", "burstgpt.csv"} {
		t.Run(file, func(t *testing.T) {
			s, d, err := traceSchedule(t, file, workload.Trace{}, 1, 0)
			if err != nil {
				t.Fatal(err)
			}
			f, _ := workload.TraceFormatOf(d.Format)
			for i, r := range s.Requests {
				e := d.Entries[i].Trace
				if len(r.Tokens) != e.InputTokens || r.PromptTokens != e.InputTokens || r.OutputTokens != e.OutputTokens {
					t.Errorf("request %d: %d tokens (%d planned), %d out; trace says %d, %d", i, len(r.Tokens), r.PromptTokens, r.OutputTokens, e.InputTokens, e.OutputTokens)
				}
				if want := (e.At - d.Entries[0].Trace.At).Seconds(); s.Arrivals[i] != want {
					t.Errorf("request %d arrives at %v s; want %v", i, s.Arrivals[i], want)
				}
				for j := range i {
					o := d.Entries[j].Trace
					shared := sharedBlocks(e.HashIDs, o.HashIDs, f.BlockTokens, e.InputTokens, o.InputTokens)
					if got := commonPrefix(r.Tokens, s.Requests[j].Tokens); got != shared {
						t.Errorf("requests %d and %d share %d leading tokens; their blocks share %d", j, i, got, shared)
					}
				}
			}
			again, _, _ := traceSchedule(t, file, workload.Trace{}, 1, 0)
			other, _, _ := traceSchedule(t, file, workload.Trace{}, 2, 0)
			if again.TraceSHA256 != s.TraceSHA256 || !slices.EqualFunc(again.Requests, s.Requests, func(a, b Request) bool { return slices.Equal(a.Tokens, b.Tokens) }) {
				t.Errorf("the same trace and seed planned another schedule (%s vs %s)", s.TraceSHA256, again.TraceSHA256)
			}
			if other.TraceSHA256 == s.TraceSHA256 {
				t.Errorf("seeds 1 and 2 planned schedules of one hash %s", s.TraceSHA256)
			}
		})
	}
}

// sharedBlocks is how many leading tokens two requests of block size b
// with ids x and y and lengths nx and ny share: their common leading
// blocks, each counted up to the shorter request's cut.
func sharedBlocks(x, y []int64, b, nx, ny int) int {
	n := 0
	for k := 0; k < len(x) && k < len(y) && x[k] == y[k]; k++ {
		n += min(b, nx-k*b, ny-k*b)
		if n < (k+1)*b {
			break
		}
	}
	return max(n, 0)
}

func commonPrefix(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// TestTraceReplayShape: speed divides the times, slice keeps the
// requests in [from, to) measured from the first and starts the clock at
// from, max_requests caps them, and each changes the hash; a request over
// max_model_len is an error at its line, or dropped and counted.
func TestTraceReplayShape(t *testing.T) {
	tests := []struct {
		name     string
		tr       workload.Trace
		arrivals []float64
		lines    []int
	}{
		{name: "whole", tr: workload.Trace{}, arrivals: []float64{0, 0.1, 0.25, 0.4, 0.6, 0.8}, lines: []int{1, 2, 3, 4, 5, 6}},
		{name: "speed 2", tr: workload.Trace{Speed: 2}, arrivals: []float64{0, 0.05, 0.125, 0.2, 0.3, 0.4}, lines: []int{1, 2, 3, 4, 5, 6}},
		{name: "slice", tr: workload.Trace{From: 200 * time.Millisecond, To: 600 * time.Millisecond}, arrivals: []float64{0.05, 0.2}, lines: []int{3, 4}},
		{name: "max_requests", tr: workload.Trace{MaxRequests: 2}, arrivals: []float64{0, 0.1}, lines: []int{1, 2}},
	}
	hashes := map[string]string{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _, err := traceSchedule(t, "mooncake.jsonl", tc.tr, 1, 0)
			if err != nil {
				t.Fatal(err)
			}
			var lines []int
			for _, r := range s.Requests {
				lines = append(lines, r.Line)
			}
			if !slices.EqualFunc(s.Arrivals, tc.arrivals, func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }) || !slices.Equal(lines, tc.lines) {
				t.Errorf("arrivals %v of lines %v; want %v of %v", s.Arrivals, lines, tc.arrivals, tc.lines)
			}
			if other, ok := hashes[s.TraceSHA256]; ok {
				t.Errorf("%s and %s have one hash", other, tc.name)
			}
			hashes[s.TraceSHA256] = tc.name
		})
	}
	t.Run("over max_model_len", func(t *testing.T) {
		_, _, err := traceSchedule(t, "bad/mooncake_too_long.jsonl", workload.Trace{}, 1, 8192)
		var de *workload.DatasetError
		if !errors.As(err, &de) || de.Line != 2 || !strings.Contains(de.Error(), "9000 input and 4 output tokens exceed the server's max_model_len 8192") {
			t.Fatalf("got %v; want an error at line 2", err)
		}
		s, _, err := traceSchedule(t, "bad/mooncake_too_long.jsonl", workload.Trace{DropOverLength: true}, 1, 8192)
		if err != nil || len(s.Requests) != 2 || s.Dropped.OverLength != 1 || s.Examined != 3 {
			t.Fatalf("drop_over_length: %v, %+v; want 2 requests, 1 dropped of 3", err, s)
		}
	})
}

// TestAzureDatetimes: both Azure traces' TIMESTAMP forms are read to the
// same clock, the 2024 one with its offset; anything else is refused.
func TestAzureDatetimes(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want time.Time
		bad  bool
	}{
		{name: "2023, seven digits", raw: "2023-11-16 18:15:46.6805900", want: time.Date(2023, 11, 16, 18, 15, 46, 680590000, time.UTC)},
		{name: "2023, no fraction", raw: "2023-11-16 18:15:46", want: time.Date(2023, 11, 16, 18, 15, 46, 0, time.UTC)},
		{name: "2024, with its offset", raw: "2024-05-10 00:00:00.009930+00:00", want: time.Date(2024, 5, 10, 0, 0, 0, 9930000, time.UTC)},
		{name: "2024, another offset", raw: "2024-05-10 02:00:00.5+02:00", want: time.Date(2024, 5, 10, 0, 0, 0, 500000000, time.UTC)},
		{name: "RFC 3339", raw: "2024-05-10T00:00:01Z", want: time.Date(2024, 5, 10, 0, 0, 1, 0, time.UTC)},
		{name: "a date alone", raw: "2024-05-10", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r workload.TraceRequest
			err := readDatetime(&r, tt.raw)
			switch {
			case tt.bad && err == nil:
				t.Errorf("%q read as %v, want refused", tt.raw, r.At)
			case !tt.bad && err != nil:
				t.Errorf("%q: %v", tt.raw, err)
			case !tt.bad && r.At != time.Duration(tt.want.UnixNano()):
				t.Errorf("%q read as %v, want %v", tt.raw, time.Unix(0, int64(r.At)).UTC(), tt.want)
			}
		})
	}
}
