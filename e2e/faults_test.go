package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	res "github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// Hardening tests (issue 6, item 1): every fault the simulator can produce
// ends with a message that says what happened and what to do, the exit
// code of README.md#exit-codes (an infrastructure fault is 3, never 1), every cell
// measured before it kept in cells.jsonl and results.json, no hang, and no
// process left behind.

// faultSpec writes a spec whose server runs on port with the given extra
// server attributes and args, plus body (measure/prefill/matrix blocks), and
// returns its path.
func faultSpec(t *testing.T, port int, attrs, args, body string) string {
	t.Helper()
	src := fmt.Sprintf(`server "sim" {
  model             = "Qwen/Qwen3.5-4B"
  served_model_name = "qwen"
  host              = "127.0.0.1"
  port              = %d
  max_model_len     = 16384
  ready_timeout     = "20s"
  args              = [%s]
%s
}
%s
`, port, args, attrs, body)
	return specFile(t, "spec.hcl", src)
}

// fastSim are simulator flags that make a 1K context cell quick and exact.
const fastSim = `"--sim-tbt", "5ms", "--sim-ttft", "20ms", "--sim-prefill-tps", "1000000", "--sim-kv-tokens", "1000000"`

// oneCell measures the 1K prefill and 1K × {1, 2} decode in 1 s windows.
const oneCell = `
measure {
  duration   = "1s"
  max_output = 256
}
prefill { contexts = ["1K"] }
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1, 2]
}
`

// outcome is what a run left behind.
type outcome struct {
	r       result
	out     string
	results *res.Results // nil when results.json is missing
	cells   []res.CellRecord
	elapsed time.Duration
}

// runFault runs slogate with args (the spec last) into a fresh -out folder
// and collects what it left there.
func runFault(t *testing.T, mark string, timeout time.Duration, args ...string) outcome {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	args = append([]string{"run", "-out", out}, args...)
	start := time.Now()
	o := outcome{r: slogate(t, mark, timeout, "", nil, args...), out: out}
	o.elapsed = time.Since(start)
	if r, err := res.Read(filepath.Join(out, "results.json")); err == nil {
		o.results = r
	}
	if f, err := os.Open(filepath.Join(out, "cells.jsonl")); err == nil {
		o.cells, err = res.ReadCells(f)
		f.Close()
		if err != nil {
			t.Errorf("cells.jsonl: %v", err)
		}
	}
	return o
}

func (o outcome) dump() string {
	return fmt.Sprintf("exit %d after %.1fs\nstdout:\n%s\nstderr:\n%s", o.r.Code, o.elapsed.Seconds(), o.r.Stdout, o.r.Stderr)
}

// wantSaid fails unless the console (stdout or stderr) says every phrase.
func (o outcome) wantSaid(t *testing.T, phrases ...string) {
	t.Helper()
	all := o.r.Stdout + o.r.Stderr
	for _, p := range phrases {
		if !strings.Contains(all, p) {
			t.Errorf("the output does not say %q\n%s", p, o.dump())
		}
	}
}

// wantKept checks that results.json exists, records the run's error (when
// wantErr), and holds exactly the cells of cells.jsonl, in the same order.
func (o outcome) wantKept(t *testing.T, wantErr bool) {
	t.Helper()
	if o.results == nil {
		t.Fatalf("no results.json in %s\n%s", o.out, o.dump())
	}
	if wantErr && o.results.Error == "" {
		t.Errorf("results.json has no error recorded")
	}
	var pre, dec int
	for _, rec := range o.cells {
		switch {
		case rec.Prefill != nil:
			if pre >= len(o.results.Prefill) || o.results.Prefill[pre].Context != rec.Prefill.Context || o.results.Prefill[pre].Status != rec.Prefill.Status {
				t.Errorf("cells.jsonl prefill %+v is not results.json's prefill #%d", rec.Prefill, pre)
			}
			pre++
		case rec.Decode != nil:
			if dec >= len(o.results.Decode) || o.results.Decode[dec].Ref() != rec.Decode.Ref() || o.results.Decode[dec].Status != rec.Decode.Status {
				t.Errorf("cells.jsonl decode %+v is not results.json's decode #%d", rec.Decode, dec)
			}
			dec++
		}
	}
	if pre != len(o.results.Prefill) || dec != len(o.results.Decode) {
		t.Errorf("cells.jsonl has %d prefill and %d decode cells, results.json %d and %d", pre, dec, len(o.results.Prefill), len(o.results.Decode))
	}
}

// TestFaultServerExitsDuringStartup: a server that exits before it is ready
// fails the run at once with exit 3 and the end of its log. (A command
// that is not installed is refused before the run creates anything:
// TestUsageErrorsBeforeAnything.)
func TestFaultServerExitsDuringStartup(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		attrs string // server attributes
		args  string // server args
		sim   bool
		said  []string
	}{
		{name: "command exits", attrs: `command = "false"`,
			said: []string{"exited before it was ready", "last lines of"}},
		{name: "simulator rejects its flags", sim: true, args: `"--sim-kv-tokens", "1"`,
			said: []string{"exited before it was ready", "--sim-kv-tokens"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mark := newMark(t)
			defer noLeftovers(t, mark)
			spec := faultSpec(t, freePort(t), tc.attrs, tc.args, oneCell)
			args := []string{spec}
			if tc.sim {
				args = []string{"-sim", spec}
			}
			o := runFault(t, mark, time.Minute, args...)
			if o.r.Code != 3 {
				t.Fatalf("want exit 3\n%s", o.dump())
			}
			if o.elapsed > 15*time.Second {
				t.Errorf("took %v: a server that exits should fail the run at once", o.elapsed)
			}
			o.wantSaid(t, tc.said...)
			o.wantKept(t, true)
		})
	}
}

// TestFaultServerExitsDuringWarmUp: the server crashes while the first
// decode cell waits for its steady state (held 3 s); the prefill cell
// measured before is kept.
func TestFaultServerExitsDuringWarmUp(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := faultSpec(t, freePort(t), "", fastSim+`, "--sim-exit-after", "2s"`, oneCell)
	o := runFault(t, mark, time.Minute, "-sim", spec)
	if o.r.Code != 3 {
		t.Fatalf("want exit 3\n%s", o.dump())
	}
	o.wantSaid(t, "exited during the run", "simulated by --sim-exit-after")
	o.wantKept(t, true)
	if len(o.results.Prefill) != 1 || o.results.Prefill[0].Status != vocab.StatusValid || len(o.results.Decode) != 0 {
		t.Errorf("want the valid prefill cell and no decode cell, got %+v %+v", o.results.Prefill, o.results.Decode)
	}
}

// TestFaultServerExitsMidWindow: the crash falls inside a 6 s window.
func TestFaultServerExitsMidWindow(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := faultSpec(t, freePort(t), "", fastSim+`, "--sim-exit-after", "7s"`, strings.Replace(oneCell, `"1s"`, `"6s"`, 1))
	o := runFault(t, mark, time.Minute, "-sim", spec)
	if o.r.Code != 3 {
		t.Fatalf("want exit 3\n%s", o.dump())
	}
	o.wantSaid(t, "exited during the run", "--- FAIL: sim/decode/ctx=1K/conc=1")
	o.wantKept(t, true)
	if len(o.results.Prefill) != 1 || len(o.results.Decode) != 0 {
		t.Errorf("want the prefill cell only, got %+v %+v", o.results.Prefill, o.results.Decode)
	}
}

// TestFaultCellErrors: faults of single streams make the cell an error with
// the reason, the run goes on to the next cell, every cell is recorded, and
// the run exits 3 saying cells could not be measured.
func TestFaultCellErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		args   string
		flags  []string
		reason string // in every errored decode cell's reason
		said   []string
	}{
		{name: "stream stalls", args: `"--sim-stall-after", "20"`, flags: []string{"-stream-timeout", "2s"},
			reason: "stream stalled: no data for 2s"},
		{name: "HTTP 500", args: `"--sim-error-rate", "1"`,
			reason: "HTTP 500"},
		{name: "mid-stream error", args: `"--sim-midstream-error-after", "5"`,
			reason: "simulated mid-stream error"},
		{name: "truncated stream", args: `"--sim-truncate-after", "5"`,
			reason: "without [DONE]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mark := newMark(t)
			defer noLeftovers(t, mark)
			spec := faultSpec(t, freePort(t), "", fastSim+", "+tc.args, oneCell)
			o := runFault(t, mark, 2*time.Minute, append(append([]string{"-sim"}, tc.flags...), spec)...)
			if o.r.Code != 3 {
				t.Errorf("want exit 3 (cells could not be measured)\n%s", o.dump())
			}
			o.wantKept(t, false)
			if o.results == nil {
				return
			}
			if len(o.results.Decode) != 2 {
				t.Fatalf("want both decode cells recorded (the run goes on), got %+v\n%s", o.results.Decode, o.dump())
			}
			for _, c := range o.results.Decode {
				if c.Status != vocab.StatusError || !strings.Contains(c.Reason, tc.reason) {
					t.Errorf("%s: status %s reason %q, want error with %q", c.Ref().Name(), c.Status, c.Reason, tc.reason)
				}
				o.wantSaid(t, "--- FAIL: "+c.Ref().TestName("sim"))
			}
			o.wantSaid(t, tc.reason, "could not be measured")
		})
	}
}

// TestFaultNoContinuousUsage: without per-chunk usage the runner falls back
// to the final usage, records token_source, and still counts the tokens of
// multi-token (speculative) chunks: total_tps agrees with the server's own
// generation counter.
func TestFaultNoContinuousUsage(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := faultSpec(t, freePort(t), `speculative {
    method                 = "dflash"
    model                  = "z-lab/Qwen3.5-4B-DFlash"
    num_speculative_tokens = 3
  }`, fastSim+`, "--sim-ttft", "1ms", "--sim-accept-len", "2.5", "--sim-no-continuous-usage"`, `
measure {
  duration   = "2s"
  max_output = 128
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [4]
}
`)
	o := runFault(t, mark, 2*time.Minute, "-sim", spec)
	if o.r.Code != 0 {
		t.Fatalf("want exit 0\n%s", o.dump())
	}
	o.wantKept(t, false)
	if len(o.results.Decode) != 1 {
		t.Fatalf("decode cells: %+v", o.results.Decode)
	}
	c := o.results.Decode[0]
	if c.Status != vocab.StatusValid || c.TokenSource != "final_usage" {
		t.Errorf("status %s token_source %q, want valid and final_usage", c.Status, c.TokenSource)
	}
	if c.ServerTotalTPS == nil || !within(c.TotalTPS, *c.ServerTotalTPS, 0.10) {
		t.Errorf("total_tps %.1f vs the server's %v: the fallback miscounts tokens", c.TotalTPS, deref(c.ServerTotalTPS))
	}
}

// TestFaultWrongServedModel: -endpoint at a server serving another name is
// exit 3 naming both names and the fix, before anything is created.
func TestFaultWrongServedModel(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	t.Cleanup(func() { noLeftovers(t, mark) }) // after startSim's cleanup
	base := startSim(t, mark, "Qwen/Qwen3.5-4B", "--served-model-name", "other", "--sim-tbt", "5ms")
	spec := faultSpec(t, freePort(t), "", "", oneCell)
	o := runFault(t, mark, time.Minute, "-endpoint", base, spec)
	if o.r.Code != 3 {
		t.Fatalf("want exit 3\n%s", o.dump())
	}
	o.wantSaid(t, `serves "other", not "qwen"`, "set served_model_name")
	wantNothingCreated(t, o.r, "", o.out) // found before the run printed or created anything
}

// TestFaultPortInUse: something already listens on the spec's port: exit 3
// before anything is started or created (no folder, no process).
func TestFaultPortInUse(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() { // accept and drop, like a stale server that still answers
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	spec := faultSpec(t, l.Addr().(*net.TCPAddr).Port, "", fastSim, oneCell)
	o := runFault(t, mark, time.Minute, "-sim", spec)
	if o.r.Code != 3 {
		t.Fatalf("want exit 3\n%s", o.dump())
	}
	o.wantSaid(t, "already accepts connections", "choose another port")
	wantNothingCreated(t, o.r, "", o.out)
}

// TestFaultUnreachableEndpoint: nothing listens at -endpoint: exit 3 within
// seconds, saying so, and nothing created.
func TestFaultUnreachableEndpoint(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := faultSpec(t, freePort(t), "", "", oneCell)
	o := runFault(t, mark, time.Minute, "-endpoint", fmt.Sprintf("http://127.0.0.1:%d", freePort(t)), spec)
	if o.r.Code != 3 {
		t.Fatalf("want exit 3\n%s", o.dump())
	}
	o.wantSaid(t, "unreachable", "is the server running?")
	if o.elapsed > 20*time.Second {
		t.Errorf("took %v to give up on an unreachable endpoint", o.elapsed)
	}
	wantNothingCreated(t, o.r, "", o.out)
}

// TestFaultTimeoutBoundsRun: streams that stall under the default (long)
// inactivity timeout cannot hang the run past -timeout: exit 3 soon after
// it, the prefill cell kept, the server stopped.
func TestFaultTimeoutBoundsRun(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := faultSpec(t, freePort(t), "", fastSim+`, "--sim-stall-after", "20"`, oneCell)
	o := runFault(t, mark, time.Minute, "-sim", "-timeout", "6s", spec)
	if o.r.Code != 3 {
		t.Fatalf("want exit 3\n%s", o.dump())
	}
	if o.elapsed > 20*time.Second {
		t.Errorf("took %v with -timeout 6s", o.elapsed)
	}
	o.wantSaid(t, "longer than -timeout 6s")
	o.wantKept(t, true)
	if len(o.results.Prefill) != 1 {
		t.Errorf("the prefill cell measured before the timeout is missing: %+v", o.results.Prefill)
	}
	for _, name := range []string{"report.md", "report.html", "junit.xml"} {
		if b, err := os.ReadFile(filepath.Join(o.out, name)); err != nil || len(bytes.TrimSpace(b)) == 0 {
			t.Errorf("%s not written after -timeout: %v", name, err)
		}
	}
}

// TestFaultTimeoutDuringBoot: -timeout also bounds the wait for a server
// that takes too long to start; the server is stopped.
func TestFaultTimeoutDuringBoot(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := faultSpec(t, freePort(t), "", fastSim+`, "--sim-startup", "5m"`, oneCell)
	o := runFault(t, mark, time.Minute, "-sim", "-timeout", "3s", spec)
	if o.r.Code != 3 {
		t.Fatalf("want exit 3\n%s", o.dump())
	}
	if o.elapsed > 20*time.Second {
		t.Errorf("took %v with -timeout 3s", o.elapsed)
	}
	o.wantSaid(t, "longer than -timeout 3s")
	o.wantKept(t, true)
}

// sleepingMessage is how a cell measured against a sleeping vLLM engine
// is an Error, not an idle server (docs/vllm.md#metrics).
const sleepingMessage = `the server is asleep, not idle (its engine at sleep level 1): vllm:engine_sleep_state{sleep_state="awake"} is 0: vLLM's sleep mode (POST /sleep) freed the GPU`

// TestFaultSleepingServer: a vLLM server whose engine sleeps (POST /sleep
// under VLLM_SERVER_DEV_MODE=1) answers /health and shows nothing running
// or waiting; put to sleep before the run or during a decode cell, the
// cell is an Error naming vllm:engine_sleep_state, and the run exits 3.
func TestFaultSleepingServer(t *testing.T) {
	t.Parallel()
	sleep := func(t *testing.T, base string) {
		t.Helper()
		resp, err := http.Post(base+"/sleep?level=1", "application/json", nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("POST /sleep: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	t.Run("before the run", func(t *testing.T) {
		t.Parallel()
		mark := newMark(t)
		t.Cleanup(func() { noLeftovers(t, mark) }) // after startSim's cleanup
		base := startSimEnv(t, mark, []string{"VLLM_SERVER_DEV_MODE=1"}, "Qwen/Qwen3.5-4B", "--served-model-name", "qwen", "--sim-tbt", "5ms")
		sleep(t, base)
		o := runFault(t, mark, time.Minute, "-endpoint", base, faultSpec(t, freePort(t), "", "", oneCell))
		if o.r.Code != 3 || o.results == nil {
			t.Fatalf("want exit 3 (no cell could be measured)\n%s", o.dump())
		}
		for name, c := range decodeCells(t, o, 2) {
			if c.Status != vocab.StatusError || !strings.Contains(c.Reason, sleepingMessage) {
				t.Errorf("%s: status %s reason %q, want error with %q", name, c.Status, c.Reason, sleepingMessage)
			}
		}
		for _, c := range o.results.Prefill {
			if c.Status != vocab.StatusError || !strings.Contains(c.Reason, sleepingMessage) {
				t.Errorf("prefill %d: status %s reason %q, want error with %q", c.Context, c.Status, c.Reason, sleepingMessage)
			}
		}
		o.wantSaid(t, sleepingMessage)
	})
	t.Run("during a decode cell", func(t *testing.T) {
		t.Parallel()
		mark := newMark(t)
		defer noLeftovers(t, mark)
		port := freePort(t)
		base := fmt.Sprintf("http://127.0.0.1:%d", port)
		spec := faultSpec(t, port, `  env = { VLLM_SERVER_DEV_MODE = "1" }`, fastSim, `
measure {
  duration   = "30s"
  max_output = 4096
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [2]
}
`)
		// Put the server to sleep once the decode cell's two streams run.
		slept := make(chan struct{})
		go func() {
			defer close(slept)
			for deadline := time.Now().Add(40 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				resp, err := http.Get(base + "/metrics")
				if err != nil {
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if strings.Contains(string(b), `vllm:num_requests_running{engine="0",model_name="qwen"} 2.0`) {
					if resp, err := http.Post(base+"/sleep?level=1", "application/json", nil); err == nil {
						resp.Body.Close()
					}
					return
				}
			}
		}()
		o := runFault(t, mark, 2*time.Minute, "-sim", spec)
		<-slept
		if o.r.Code != 3 || o.results == nil {
			t.Fatalf("want exit 3 (the cell could not be measured)\n%s", o.dump())
		}
		if c := decodeCells(t, o, 1)["ctx=1K/conc=2"]; c.Status != vocab.StatusError || !strings.Contains(c.Reason, sleepingMessage) {
			t.Errorf("1K × 2: status %s reason %q, want error with %q", c.Status, c.Reason, sleepingMessage)
		}
		// A 30 s window: the cell ended at the sleep, not at its window's end.
		if o.elapsed > 25*time.Second {
			t.Errorf("the run took %v: the sleeping server was waited on", o.elapsed)
		}
	})
}
