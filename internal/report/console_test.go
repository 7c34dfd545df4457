package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

func TestConsole(t *testing.T) {
	var b bytes.Buffer
	c := NewConsole(&b, "specs/qwen.hcl", ConsoleOptions{})
	c.Log("starting server: vllm serve Qwen/Qwen3.5-4B")
	c.Run("qwen/decode/ctx=8K/conc=64")
	c.Progress(Progress{Test: "qwen/decode/ctx=8K/conc=64", Stage: result.StageMeasuring, Elapsed: time.Second, Window: 30 * time.Second})
	c.Output("qwen/decode/ctx=8K/conc=64", "6,018.4 tok/s total · valid")
	c.End("qwen/decode/ctx=8K/conc=64", vocab.Pass, 32100*time.Millisecond)
	c.Run("qwen/decode/ctx=251K/conc=128")
	c.End("qwen/decode/ctx=251K/conc=128", vocab.Skip, 0)
	c.Run("qwen/assert/a")
	c.Output("qwen/assert/a", "a.hcl:3: decode[\"8K\"][64].total_tps: no such cell")
	c.Output("qwen/assert/a", "    decode throughput at 8K x 64 fell below 6,000 tok/s")
	c.End("qwen/assert/a", vocab.Error, 0)
	c.Finish(vocab.Error, 12345*time.Millisecond)
	want := `starting server: vllm serve Qwen/Qwen3.5-4B
=== RUN   qwen/decode/ctx=8K/conc=64
    6,018.4 tok/s total · valid
--- PASS: qwen/decode/ctx=8K/conc=64 (32.10s)
=== RUN   qwen/decode/ctx=251K/conc=128
--- SKIP: qwen/decode/ctx=251K/conc=128 (0.00s)
=== RUN   qwen/assert/a
    a.hcl:3: decode["8K"][64].total_tps: no such cell
        decode throughput at 8K x 64 fell below 6,000 tok/s
--- FAIL: qwen/assert/a (0.00s)
1 of 3 tests errored:
    qwen/assert/a (error): decode throughput at 8K x 64 fell below 6,000 tok/s
FAIL
FAIL	specs/qwen.hcl	12.345s
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestConsoleOkLine(t *testing.T) {
	var b bytes.Buffer
	NewConsole(&b, "specs/demo.hcl", ConsoleOptions{}).Finish(vocab.Skip, 1500*time.Millisecond)
	if got, want := b.String(), "PASS\nok  \tspecs/demo.hcl\t1.500s\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestConsoleProgressLine(t *testing.T) {
	var b bytes.Buffer
	c := NewConsole(&b, "s.hcl", ConsoleOptions{Progress: true})
	c.Run("q/decode/ctx=8K/conc=1")
	c.Progress(Progress{Test: "q/decode/ctx=8K/conc=1", Stage: result.StageMeasuring, Elapsed: 12300 * time.Millisecond,
		Window: 30 * time.Second, TPS: 5432.1, CellsDone: 5, Cells: 48, ETA: 750 * time.Second})
	c.Output("q/decode/ctx=8K/conc=1", "detail")
	c.End("q/decode/ctx=8K/conc=1", vocab.Pass, time.Second)
	progress := "q/decode/ctx=8K/conc=1  measuring 12.3s/30s  5,432.1 tok/s  cells 5/48  ETA 12m30s"
	want := "=== RUN   q/decode/ctx=8K/conc=1\n" +
		progress + // drawn
		"\r\033[K" + "    detail\n" + progress + // erased, the detail line, redrawn
		"\r\033[K" + "--- PASS: q/decode/ctx=8K/conc=1 (1.00s)\n" // erased for good
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestConsoleColor(t *testing.T) {
	var b bytes.Buffer
	c := NewConsole(&b, "s.hcl", ConsoleOptions{Color: true})
	c.End("t", vocab.Pass, 0)
	c.End("t", vocab.Fail, 0)
	if !strings.Contains(b.String(), "\033[32mPASS\033[0m") || !strings.Contains(b.String(), "\033[31;1mFAIL") {
		t.Errorf("no colour codes in %q", b.String())
	}
}

func TestConsoleOptionsFor(t *testing.T) {
	noEnv := func(string) string { return "" }
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tests := []struct {
		name string
		w    io.Writer
		want ConsoleOptions
	}{
		{name: "a buffer is not a terminal", w: &bytes.Buffer{}, want: ConsoleOptions{}},
		{name: "a regular file is not a terminal", w: f, want: ConsoleOptions{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ConsoleOptionsFor(tc.w, noEnv); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestConsoleOptionsOnATerminal: on a terminal, colour unless NO_COLOR or
// TERM=dumb, and the live progress line unless CI is set.
func TestConsoleOptionsOnATerminal(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want ConsoleOptions
	}{
		{name: "plain terminal", want: ConsoleOptions{Color: true, Progress: true}},
		{name: "NO_COLOR", env: map[string]string{"NO_COLOR": "1"}, want: ConsoleOptions{Progress: true}},
		{name: "dumb terminal", env: map[string]string{"TERM": "dumb"}, want: ConsoleOptions{Progress: true}},
		{name: "CI", env: map[string]string{"CI": "true"}, want: ConsoleOptions{Color: true}},
		{name: "CI and NO_COLOR", env: map[string]string{"CI": "true", "NO_COLOR": "1"}, want: ConsoleOptions{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := consoleOptions(true, func(k string) string { return tc.env[k] }); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDecodeMetricsLine(t *testing.T) {
	v, rate, length := 6001.5, 0.75, 3.25
	base := result.DecodeCell{TotalTPS: 6018.4, PerRequestTPS: 95.9, TTFTMs: 1027, TTFTMsP90: 1100, TTFTMsP99: 1200,
		TBTMs: 10.4, TBTMsP90: 12, TBTMsP99: 15, ActiveAvg: 64, OutputTokens: 180506, MeasuredS: 30, TokenSource: "usage"}
	const common = "total_tps=6018.4 per_request_tps=95.9 ttft_ms=1027/1100/1200 tbt_ms=10.4/12/15 active_avg=64 completed=0 output_tokens=180506 measured_s=30 token_source=usage"
	tests := []struct {
		name string
		edit func(c *result.DecodeCell)
		want string
	}{
		{name: "no optional metrics", edit: func(*result.DecodeCell) {}, want: common},
		{name: "server counter after the token source", edit: func(c *result.DecodeCell) { c.ServerTotalTPS = &v },
			want: common + " server_total_tps=6001.5"},
		{name: "speculative metrics", edit: func(c *result.DecodeCell) { c.SpeculativeAcceptRate, c.SpeculativeAcceptLen = &rate, &length },
			want: common + " spec_accept_rate=0.75 spec_accept_len=3.25"},
		{name: "large count without exponent", edit: func(c *result.DecodeCell) { c.OutputTokens = 12000000 },
			want: strings.Replace(common, "output_tokens=180506", "output_tokens=12000000", 1)},
		{name: "statistics of the naming rule, one group per distribution",
			edit: func(c *result.DecodeCell) {
				c.Stats = map[string]float64{"ttft_ms_p99_9": 1300, "ttft_ms_p95": 1150, "ttft_ms_count": 64, "ttft_ms_mean": 1030.5,
					"itl_ms": 10.1, "itl_ms_p90": 11, "itl_ms_count": 5000}
			},
			want: strings.Replace(common, "tbt_ms=10.4/12/15 ", "tbt_ms=10.4/12/15 itl_ms=10.1 ", 1) +
				" ttft_ms[p95=1150 p99.9=1300 mean=1030.5 n=64] itl_ms[p90=11 n=5000]"},
		{name: "repeats", edit: func(c *result.DecodeCell) { c.Repeats = 3 },
			want: common + " repeats=3 (median; spread in results.json)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base
			tt.edit(&c)
			if got := DecodeMetrics(&c); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestPrefillMetricsLine(t *testing.T) {
	c := &result.PrefillCell{TPS: 46700.5, TTFTMs: 175.4}
	if got, want := PrefillMetrics(c), "tps=46700.5 ttft_ms=175.4"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestConsoleCellLines: the console's one-line summaries of a prefill and a
// decode cell show each number at the metric table's precision (TBT to one
// decimal, TTFT to whole milliseconds), then a decode cell's status, with a
// queued cell's reason after it.
func TestConsoleCellLines(t *testing.T) {
	decode := func(st vocab.Status, reason string) string {
		return DecodeLine(&result.DecodeCell{Status: st, Reason: reason,
			TotalTPS: 6018.44, PerRequestTPS: 95.94, TTFTMs: 1026.6, TBTMs: 10.44})
	}
	tests := []struct {
		name, got, want string
	}{
		{name: "prefill", got: PrefillLine(&result.PrefillCell{TPS: 46712.34, TTFTMs: 175.4}),
			want: "46,712.3 tok/s prefill · TTFT 175 ms (cold)"},
		{name: "decode valid", got: decode(vocab.StatusValid, ""),
			want: "6,018.4 tok/s total · 95.9 tok/s/request · TTFT 1,027 ms · TBT 10.4 ms · valid"},
		{name: "decode queued with its reason", got: decode(vocab.StatusQueued, "3 preemptions"),
			want: "6,018.4 tok/s total · 95.9 tok/s/request · TTFT 1,027 ms · TBT 10.4 ms · queued (3 preemptions)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got  %q\nwant %q", tt.got, tt.want)
			}
		})
	}
}

// TestConsoleRecap: a failed run's closing lines say how many tests failed
// and, for each, the last line it printed (its message), worst outcome
// counted first; a passing run ends as go test's does; the recap is
// bounded.
func TestConsoleRecap(t *testing.T) {
	type test struct {
		name    string
		outcome vocab.Outcome
		lines   []string
	}
	var many []test
	for i := range 12 {
		many = append(many, test{fmt.Sprintf("q/assert/a%d", i), vocab.Fail, []string{"    too slow"}})
	}
	tests := []struct {
		name  string
		tests []test
		want  string
	}{
		{"a baseline regression and a breach",
			[]test{
				{"qwen/decode/ctx=8K/conc=1", vocab.Pass, []string{"339.9 tok/s"}},
				{"qwen/assert/decode_8k_1", vocab.Fail, []string{"specs/demo.hcl:66: decode[\"8K\"][1].per_request_tps = 290, want >= 304", "    one 8K stream fell below 304 tok/s (seed 405.9)"}},
				{"qwen/baseline/decode/ctx=8K/conc=16", vocab.Inconclusive, []string{"total_tps: …", "    total_tps is inconclusive against the baseline"}},
			},
			"1 of 3 tests failed, 1 inconclusive:\n" +
				"    qwen/assert/decode_8k_1: one 8K stream fell below 304 tok/s (seed 405.9)\n" +
				"    qwen/baseline/decode/ctx=8K/conc=16 (inconclusive): total_tps is inconclusive against the baseline\n" +
				"FAIL\nFAIL\tspecs/demo.hcl\t1.000s\n"},
		{"all passed: go test's lines alone", []test{{"qwen/assert/ok", vocab.Pass, []string{"ok"}}}, "PASS\nok  \tspecs/demo.hcl\t1.000s\n"},
		{"twelve failed: ten named", many, ""}, // checked below
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			c := NewConsole(&b, "specs/demo.hcl", ConsoleOptions{})
			worst := vocab.Pass
			for _, x := range tc.tests {
				c.Run(x.name)
				for _, l := range x.lines {
					c.Output(x.name, l)
				}
				c.End(x.name, x.outcome, 0)
				worst = vocab.Worst(worst, x.outcome)
			}
			b.Reset()
			c.Finish(worst, time.Second)
			got := b.String()
			if len(tc.tests) == 12 {
				if !strings.HasPrefix(got, "12 of 12 tests failed:\n") || strings.Count(got, "    q/assert/a") != 10 || !strings.Contains(got, "    … and 2 more above\n") {
					t.Errorf("recap of 12 failures:\n%s", got)
				}
				return
			}
			if got != tc.want {
				t.Errorf("closing lines:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
