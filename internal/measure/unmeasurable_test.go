package measure

import (
	"context"
	"strings"
	"testing"
	"time"

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
			judgeMeasurable(&c)
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
