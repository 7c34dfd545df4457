package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/report"
	"github.com/slogate/slogate/result"
	"github.com/slogate/slogate/spec"
)

func TestRunUsageErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.hcl")
	os.WriteFile(good, []byte(`server "q" {
  model = "m"
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
`), 0o644)
	bad := filepath.Join(dir, "bad.hcl")
	os.WriteFile(bad, []byte("server \"q\" {\n  modle = \"m\"\n}\n"), 0o644)
	// A readable baseline, so that a row about one flag fails only for that
	// flag (with a missing baseline every -tolerance row would exit 2 anyway).
	base := filepath.Join(dir, "base.json")
	if err := (&result.Results{Schema: result.Schema}).Write(base); err != nil {
		t.Fatal(err)
	}
	// Each row states the one message that names its fault: the exit code
	// alone is shared by every usage error.
	tests := []struct {
		name string
		args []string
		msg  string // in the error or on stderr
	}{
		{name: "no spec", args: nil, msg: "Usage: slogate run"},
		{name: "bad -run regexp", args: []string{"-run", "(", good}, msg: "-run: error parsing regexp: missing closing )"},
		{name: "-sim with -endpoint", args: []string{"-sim", "-endpoint", "http://127.0.0.1:1", good}, msg: "-sim and -endpoint exclude each other"},
		{name: "bad -tolerance", args: []string{"-baseline", base, "-tolerance", "five", good}, msg: `-tolerance: "five" is not a percentage`},
		{name: "negative -tolerance", args: []string{"-baseline", base, "-tolerance", "-5%", good}, msg: `-tolerance: "-5%"`},
		{name: "unreadable -baseline", args: []string{"-baseline", filepath.Join(dir, "none.json"), good}, msg: "-baseline: open " + filepath.Join(dir, "none.json")},
		{name: "invalid spec prints diagnostics", args: []string{bad}, msg: `Did you mean "model"?`},
		{name: "unknown flag", args: []string{"-nope", good}, msg: "-nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := cmdRun(context.Background(), &stdout, &stderr, tc.args)
			if exit.Code(err) != exit.Usage {
				t.Fatalf("exit %d (%v), want 2", exit.Code(err), err)
			}
			got := stderr.String()
			if err != nil {
				got = err.Error() + "\n" + got
			}
			if !strings.Contains(got, tc.msg) {
				t.Errorf("the error and stderr lack %q:\n%s", tc.msg, got)
			}
		})
	}
}

func TestRunUnreachableEndpointIsInfra(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "s.hcl")
	os.WriteFile(spec, []byte(`server "q" {
  model = "m"
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
`), 0o644)
	var stdout, stderr bytes.Buffer
	out := filepath.Join(dir, "out")
	err := cmdRun(context.Background(), &stdout, &stderr, []string{"-endpoint", "http://127.0.0.1:1", "-out", out, spec})
	if exit.Code(err) != exit.Infra || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("exit %d (%v), want 3", exit.Code(err), err)
	}
	if !strings.Contains(stdout.String(), "FAIL\t"+spec) {
		t.Errorf("stdout lacks the final FAIL line:\n%s", stdout.String())
	}
	if _, err := result.Read(filepath.Join(out, "results.json")); err != nil {
		t.Errorf("results.json not written: %v", err)
	}
}

func TestParseTolerance(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want float64
		ok   bool
	}{
		{"percent", "5%", 0.05, true},
		{"fraction", "0.1", 0.1, true},
		{"zero", "0", 0, true},
		{"negative", "-1%", 0, false},
		{"words", "five", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseTolerance(tc.in)
			if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
				t.Errorf("parseTolerance(%q) = %v, %v", tc.in, got, err)
			}
		})
	}
}

// recordStream records TestStream calls as lines.
type recordStream struct{ lines []string }

func (r *recordStream) Run(test string)          { r.lines = append(r.lines, "RUN "+test) }
func (r *recordStream) Output(test, line string) { r.lines = append(r.lines, "  "+line) }
func (r *recordStream) End(test string, o result.Outcome, _ time.Duration) {
	r.lines = append(r.lines, "END "+o.String()+" "+test)
}
func (r *recordStream) Log(line string)                          { r.lines = append(r.lines, "LOG "+line) }
func (r *recordStream) Progress(report.Progress)                 {}
func (r *recordStream) Finish(o result.Outcome, _ time.Duration) {}

func TestStreamObserver(t *testing.T) {
	rs := &recordStream{}
	o := &streamObserver{s: rs, server: "q"}
	pre := result.PrefillCell{Context: 8192, Status: result.StatusValid, TPS: 46712.3, TTFTMs: 175.4}
	o.CellStart(pre.Ref())
	o.PrefillDone(pre, time.Second)
	valid := result.DecodeCell{Matrix: "decode", Context: 8192, Concurrency: 64, Status: result.StatusValid,
		TotalTPS: 6018.4, PerRequestTPS: 95.9, TTFTMs: 1027, TBTMs: 10.4, Warnings: []string{"w"}}
	o.CellStart(valid.Ref())
	o.DecodeDone(valid, time.Second)
	over := result.DecodeCell{Matrix: "decode", Context: 257024, Concurrency: 128, Status: result.StatusOverCapacity, Reason: "too big"}
	o.CellStart(over.Ref())
	o.DecodeDone(over, 0)
	errCell := result.DecodeCell{Matrix: "decode", Context: 8192, Concurrency: 1, Status: result.StatusError, Reason: "stream stalled"}
	o.CellStart(errCell.Ref())
	o.DecodeDone(errCell, 0)
	o.CellStart(result.CellRef{Phase: result.PhaseDecode, Matrix: "decode", Context: 1024, Concurrency: 2})
	o.abort(exit.Infraf("the server exited during the run\nlog lines"))
	want := []string{
		"RUN q/prefill/ctx=8K", "  46,712.3 tok/s prefill · TTFT 175 ms (cold)", "END pass q/prefill/ctx=8K",
		"RUN q/decode/ctx=8K/conc=64", "  6,018.4 tok/s total · 95.9 tok/s/request · TTFT 1,027 ms · TBT 10.40 ms · valid", "  warning: w", "END pass q/decode/ctx=8K/conc=64",
		"RUN q/decode/ctx=251K/conc=128", "  over capacity, not run: too big", "END skip q/decode/ctx=251K/conc=128",
		"RUN q/decode/ctx=8K/conc=1", "  error: stream stalled", "END error q/decode/ctx=8K/conc=1",
		"RUN q/decode/ctx=1K/conc=2", "  not measured: the server exited during the run", "END error q/decode/ctx=1K/conc=2",
	}
	if diff := cmp.Diff(want, rs.lines); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestResumeLikeBefore(t *testing.T) {
	srv := &spec.Server{Name: "q", Model: "m", Port: 8001}
	sp := &spec.Spec{Servers: []*spec.Server{srv},
		Measure: &spec.Measure{Duration: 30 * time.Second, DurationText: "30s", MaxOutput: 4096, Repeat: 1}}
	prev := func(edit func(*result.Results)) *resumeState {
		r := &result.Results{Server: result.Server{Name: "q", Argv: srv.RedactedArgv(), Simulated: true},
			Measure: result.Measure{Duration: "1s", DurationS: 1, MaxOutput: 4096, Repeat: 1}}
		if edit != nil {
			edit(r)
		}
		return &resumeState{server: "q", previous: r}
	}
	tests := []struct {
		name     string
		flags    runFlags
		rs       *resumeState
		wantCode int
		wantMsg  string // in the error when wantCode is not 0
		wantDur  time.Duration
		wantSim  bool
		wantEP   string
	}{
		{name: "window and -sim carry over", rs: prev(nil), wantDur: time.Second, wantSim: true},
		{name: "the same -duration again", flags: runFlags{duration: time.Second}, rs: prev(nil), wantDur: time.Second, wantSim: true},
		{name: "another -duration", flags: runFlags{duration: 2 * time.Second}, rs: prev(nil), wantCode: exit.Usage, wantMsg: "that run measured 1s windows, not -duration 2s"},
		{name: "max_output changed", rs: prev(func(r *result.Results) { r.Measure.MaxOutput = 256 }), wantCode: exit.Usage, wantMsg: "the spec's measure block changed since that run (max_output 256 →"},
		{name: "launch changed", rs: prev(func(r *result.Results) { r.Server.Argv = []string{"vllm", "serve", "other"} }), wantCode: exit.Usage, wantMsg: "the server's launch command changed since that run"},
		{name: "endpoint carries over", rs: prev(func(r *result.Results) {
			r.Server.Simulated, r.Server.Argv, r.Server.Endpoint = false, nil, "http://10.0.0.1:8000"
		}), wantDur: time.Second, wantEP: "http://10.0.0.1:8000"},
		{name: "only cells.jsonl survived", rs: &resumeState{server: "q"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.flags
			f.resume = "OUT"
			var stderr bytes.Buffer
			err := resumeLikeBefore(&f, sp, tc.rs, &stderr)
			if exit.Code(err) != tc.wantCode {
				t.Fatalf("exit %d (%v), want %d", exit.Code(err), err, tc.wantCode)
			}
			if err != nil && !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q lacks %q", err, tc.wantMsg)
			}
			if err == nil && (f.duration != tc.wantDur || f.sim != tc.wantSim || f.endpoint != tc.wantEP) {
				t.Errorf("duration %v sim %v endpoint %q; want %v %v %q", f.duration, f.sim, f.endpoint, tc.wantDur, tc.wantSim, tc.wantEP)
			}
		})
	}
}
