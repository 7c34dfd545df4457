package measure

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/measure/sse"
	"github.com/slogate/slogate/internal/promread"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vllmfake"
	"github.com/slogate/slogate/internal/vocab"
)

// TestUnmeasurableRules: each rule of docs/method.md#unmeasurable on made-up
// cells, at and past its bound, and a cell without numbers left as it is.
func TestUnmeasurableRules(t *testing.T) {
	rate := func(v float64) *float64 { return &v }
	tests := []struct {
		name    string
		cell    result.DecodeCell
		want    vocab.Status
		wantWhy string
	}{
		{name: "enough tokens, no server rate", cell: result.DecodeCell{Status: vocab.StatusValid, OutputTokens: 20, MeasuredS: 1},
			want: vocab.StatusValid},
		{name: "a handful of tokens", cell: result.DecodeCell{Status: vocab.StatusValid, OutputTokens: 4, MeasuredS: 1},
			want: vocab.StatusUnmeasurable, wantWhy: "the window held 4 output tokens in 1 s, fewer than the 20 its throughput needs"},
		{name: "a valid cell of 19 tokens", cell: result.DecodeCell{Status: vocab.StatusValid, OutputTokens: 19, MeasuredS: 2},
			want: vocab.StatusUnmeasurable, wantWhy: "held 19 output tokens in 2 s"},
		{name: "a handful of tokens the server counted too: a slow server, measured", cell: result.DecodeCell{Status: vocab.StatusValid, OutputTokens: 6, MeasuredS: 1, TotalTPS: 6, ServerTotalTPS: rate(6.5)},
			want: vocab.StatusValid},
		{name: "a handful of tokens the server counted many more of", cell: result.DecodeCell{Status: vocab.StatusValid, OutputTokens: 6, MeasuredS: 1, TotalTPS: 6, ServerTotalTPS: rate(180)},
			want: vocab.StatusUnmeasurable, wantWhy: "the window held 6 output tokens in 1 s"},
		{name: "a queued cell of few tokens stays queued: the server held them", cell: result.DecodeCell{Status: vocab.StatusQueued, Reason: "waited", OutputTokens: 4, MeasuredS: 2},
			want: vocab.StatusQueued, wantWhy: "waited"},
		{name: "a queued cell whose clocks disagree", cell: result.DecodeCell{Status: vocab.StatusQueued, Reason: "waited", OutputTokens: 300, MeasuredS: 3, PerRequestTPS: 50, ServerPerRequestTPS: rate(100)},
			want: vocab.StatusUnmeasurable, wantWhy: "0.50× the server's own"},
		{name: "the new user's case: server +112 %", cell: result.DecodeCell{Status: vocab.StatusValid, OutputTokens: 300, MeasuredS: 3, PerRequestTPS: 226.0, ServerPerRequestTPS: rate(479.2)},
			want: vocab.StatusUnmeasurable, wantWhy: "the client's per_request_tps 226.0 is 0.47× the server's own 479.2 tok/s (timings.predicted_per_second, median), beyond the 1.5× bound"},
		{name: "vLLM's histogram rate: the client at a third", cell: result.DecodeCell{Status: vocab.StatusValid, OutputTokens: 300, MeasuredS: 3, PerRequestTPS: 60, ServerPerRequestTPS: rate(180), ServerRateSource: result.ServerRateHistogram},
			want: vocab.StatusUnmeasurable, wantWhy: "the client's per_request_tps 60.0 is 0.33× the server's own 180.0 tok/s (its inter-token histogram: tokens over waits in the window)"},
		// A histogram's waits can hold time the stream never showed: the
		// simulator's dropped steps in a container on a loaded machine.
		{name: "a client 1.71× faster than a histogram's clock is not one that fell behind", cell: result.DecodeCell{Status: vocab.StatusValid, OutputTokens: 300, MeasuredS: 3, PerRequestTPS: 200.6, ServerPerRequestTPS: rate(117.4), ServerRateSource: result.ServerRateHistogram},
			want: vocab.StatusValid},
		{name: "client faster than the server's clock", cell: result.DecodeCell{Status: vocab.StatusValid, OutputTokens: 300, MeasuredS: 3, PerRequestTPS: 160, ServerPerRequestTPS: rate(100)},
			want: vocab.StatusUnmeasurable, wantWhy: "is 1.60× the server's own 100.0"},
		{name: "a gap inside the bound only warns", cell: result.DecodeCell{Status: vocab.StatusValid, OutputTokens: 300, MeasuredS: 3, PerRequestTPS: 100, ServerPerRequestTPS: rate(145)},
			want: vocab.StatusValid},
		{name: "an error cell stays an error", cell: result.DecodeCell{Status: vocab.StatusError, Reason: "boom"},
			want: vocab.StatusError, wantWhy: "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.cell
			if judgeMeasurable(&c) {
				c.Reason = wordsOf(c.Reasons)
			}
			if c.Status != tt.want || !strings.Contains(c.Reason, tt.wantWhy) {
				t.Errorf("status %s (%q); want %s containing %q", c.Status, c.Reason, tt.want, tt.wantWhy)
			}
			if tt.want == vocab.StatusValid && c.Reason != "" {
				t.Errorf("reason %q on a valid cell", c.Reason)
			}
		})
	}
}

// TestDecodeWindowOfFewTokensIsUnmeasurable: a server that streams a token
// every 150 ms gives a 500 ms window of about 3 tokens. When the server's
// own counter saw many more (the client missed what was sent), the cell
// keeps its figures but is unmeasurable and says how many tokens it held;
// when the counter agrees, the server was slow and the cell is measured.
func TestDecodeWindowOfFewTokensIsUnmeasurable(t *testing.T) {
	tests := []struct {
		name  string
		scale float64 // the counter against what was streamed
		want  vocab.Status
	}{
		{name: "the server counted what the client read: a slow server", want: vocab.StatusValid},
		{name: "the server counted 30 times more: the client missed them", scale: 30, want: vocab.StatusUnmeasurable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := vllmfake.Server{Tokens: 100000, PerChunk: 1, Gap: 150 * time.Millisecond, GeneratedScale: tt.scale}
			m := testMeter(f.Start(t).URL)
			c, err := m.Decode(context.Background(), decodeRef(100, 1), testBodies(m, 100), 0, false)
			if err != nil {
				t.Fatal(err)
			}
			if c.OutputTokens >= MinWindowTokens || c.Status != tt.want ||
				tt.want == vocab.StatusUnmeasurable && !strings.Contains(c.Reason, "output tokens in") {
				t.Errorf("cell %s (%q), %d tokens, server_total_tps %v; want %s", c.Status, c.Reason, c.OutputTokens, c.ServerTotalTPS, tt.want)
			}
		})
	}
}

// TestPrefillUnmeasurable: a prefill run's TTFT against the server's own
// time for its prompt (docs/method.md#unmeasurable), read from llama.cpp's
// timings or from the TTFT histogram over the one request; only a client
// both 1.5× and 10 ms slower than the server's clock is unmeasurable.
func TestPrefillUnmeasurable(t *testing.T) {
	page := func(count, sum float64) promread.Snapshot {
		return promread.Snapshot{TTFT: promread.SumCount{Sum: sum, Count: count, Has: true}}
	}
	tests := []struct {
		name          string
		ttft          float64 // the client's, ms
		context       int     // the prompt's tokens
		timings       *sse.Timings
		before, after promread.Snapshot
		scraped       bool
		wantServer    float64 // 0: none stored
		wantSource    string
		want          vocab.Status
		wantWhy       string
	}{
		{name: "llama.cpp, the client 1 ms above prompt_ms", ttft: 110.3, timings: &sse.Timings{PromptMs: 109.2},
			wantServer: 109.2, wantSource: result.ServerPrefillTimings, want: vocab.StatusValid},
		{name: "llama.cpp under a hog, the client 1.22× (35 ms) late: within the bound", ttft: 196.8, timings: &sse.Timings{PromptMs: 161.7},
			wantServer: 161.7, wantSource: result.ServerPrefillTimings, want: vocab.StatusValid},
		{name: "llama.cpp, the client read the first token 2× late", ttft: 220, timings: &sse.Timings{PromptMs: 110},
			wantServer: 110, wantSource: result.ServerPrefillTimings, want: vocab.StatusUnmeasurable,
			wantWhy: "the client's ttft_ms 220.0 is 2.00× the server's own 110.0 ms (timings.prompt_ms), beyond the 1.5× bound"},
		{name: "a short prompt: 2× but within 50 ms", ttft: 9, timings: &sse.Timings{PromptMs: 4.5},
			wantServer: 4.5, wantSource: result.ServerPrefillTimings, want: vocab.StatusValid},
		// The simulator's 251K- and 1019K-token prompts on a loaded CI
		// machine: their upload and parsing, outside the server's clock,
		// within 50 ms and 1 ms a thousand tokens.
		{name: "a 251K prompt's upload: 30× but within the slack", ttft: 78.9, context: 257024, before: page(3, 0.1), after: page(4, 0.1026), scraped: true,
			wantServer: 2.6, wantSource: result.ServerPrefillHistogram, want: vocab.StatusValid},
		{name: "a 1019K prompt's upload", ttft: 96.9, context: 1043456, before: page(3, 0.1), after: page(4, 0.1104), scraped: true,
			wantServer: 10.4, wantSource: result.ServerPrefillHistogram, want: vocab.StatusValid},
		// llama.cpp with slogate stopped 300 ms of every 800 ms.
		{name: "a 1K prefill read 1.67× late", ttft: 718.5, context: 1024, timings: &sse.Timings{PromptMs: 430.9},
			wantServer: 430.9, wantSource: result.ServerPrefillTimings, want: vocab.StatusUnmeasurable, wantWhy: "1.67× the server's own 430.9 ms (timings.prompt_ms)"},
		// A histogram's time is recorded, not judged: the simulator in a
		// container read 317 ms at the client against its own 1.0 ms,
		// the client on time.
		{name: "vLLM's histogram over the one request: recorded, not judged", ttft: 100, before: page(3, 0.1), after: page(4, 0.13), scraped: true,
			wantServer: 30, wantSource: result.ServerPrefillHistogram, want: vocab.StatusValid},
		{name: "another request observed between the scrapes: not read", ttft: 80, before: page(3, 0.1), after: page(5, 0.16), scraped: true,
			want: vocab.StatusValid},
		{name: "a scrape failed: not read", ttft: 80, before: page(3, 0.1), after: page(4, 0.13),
			want: vocab.StatusValid},
		{name: "the client faster than the server's clock is not judged", ttft: 20, timings: &sse.Timings{PromptMs: 60},
			wantServer: 60, wantSource: result.ServerPrefillTimings, want: vocab.StatusValid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := result.PrefillCell{Status: vocab.StatusValid, TTFTMs: tt.ttft, Context: tt.context}
			storeServerPrefill(&c, tt.timings, tt.before, tt.after, tt.scraped)
			if judgePrefillMeasurable(&c) {
				c.Reason = wordsOf(c.Reasons)
			}
			got := 0.0
			if c.ServerPrefillMs != nil {
				got = *c.ServerPrefillMs
			}
			if got != tt.wantServer || c.ServerPrefillSource != tt.wantSource {
				t.Errorf("server %g ms from %q; want %g from %q", got, c.ServerPrefillSource, tt.wantServer, tt.wantSource)
			}
			if c.Status != tt.want || !strings.Contains(c.Reason, tt.wantWhy) {
				t.Errorf("status %s (%q); want %s containing %q", c.Status, c.Reason, tt.want, tt.wantWhy)
			}
		})
	}
}

// TestDecodeClockFromHistogram: on a server without llama.cpp's timings,
// the server's per-request rate is its inter-token histogram's tokens over
// its waits in the window (vLLM's), and the clock rule reads it: a server
// that timed its tokens as it sent them is measured, one that timed them
// 4× faster than it sent them makes the cell unmeasurable. The fake server
// times the gaps it really slept, so a loaded machine moves both clocks.
func TestDecodeClockFromHistogram(t *testing.T) {
	tests := []struct {
		name    string
		scale   float64 // the server's clock against the stream's
		ratio   float64 // the server's rate against the client's, about
		want    vocab.Status
		wantWhy string
	}{
		{name: "the server's clock agrees", scale: 1, ratio: 1, want: vocab.StatusValid},
		{name: "the server timed its tokens 4× faster than it sent them", scale: 0.25, ratio: 4, want: vocab.StatusUnmeasurable,
			wantWhy: "tok/s (its inter-token histogram: tokens over waits in the window), beyond the 1.5× bound either way"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := vllmfake.Server{Tokens: 100000, PerChunk: 1, Gap: 4 * time.Millisecond, ITLScale: tt.scale}
			m := testMeter(f.Start(t).URL)
			c, err := m.Decode(context.Background(), decodeRef(100, 1), testBodies(m, 100), 0, false)
			if err != nil {
				t.Fatal(err)
			}
			if c.ServerPerRequestTPS == nil || c.ServerRateSource != result.ServerRateHistogram {
				t.Fatalf("server rate %v from %q; want one from the histogram", c.ServerPerRequestTPS, c.ServerRateSource)
			}
			if r := *c.ServerPerRequestTPS / c.PerRequestTPS; r < 0.8*tt.ratio || r > 1.25*tt.ratio {
				t.Errorf("server rate %.1f tok/s, %.2f× the client's %.1f; want about %g×", *c.ServerPerRequestTPS, r, c.PerRequestTPS, tt.ratio)
			}
			if c.Status != tt.want || !strings.Contains(c.Reason, tt.wantWhy) {
				t.Errorf("cell %s (%q); want %s containing %q", c.Status, c.Reason, tt.want, tt.wantWhy)
			}
		})
	}
}
