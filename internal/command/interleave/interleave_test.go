package interleave

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// specWith writes a spec of one launched server whose build is the
// variable build, with measure and cells as given.
func specWith(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ab.hcl")
	src := `variable "build" {
  type    = string
  default = "a"
}
server "s" {
  model = "m"
  port  = 18999
  args  = ["--build", var.build]
}
` + body
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// fakeBoot is a Measure whose prefill tps is value(side, block, context),
// recording each boot it was asked for.
type fakeBoot struct {
	value func(side string, block, ctx int) float64
	// status is a cell's status in a boot; nil: valid.
	status func(side string, block, ctx int) vocab.Status
	boots  []Boot
	fail   string // a side whose boots fail
	// before is called first in each boot; its error is the boot's.
	before func(ctx context.Context, b Boot) error
	// search is a rate search's answer in a boot (its name set here).
	search func(side string, block int) result.Search
}

func (f *fakeBoot) measure(ctx context.Context, b Boot) (*result.Results, error) {
	f.boots = append(f.boots, b)
	if f.before != nil {
		if err := f.before(ctx, b); err != nil {
			return nil, err
		}
	}
	if b.Side == f.fail {
		return nil, exit.Infraf("the server did not start")
	}
	res := &result.Results{GPUTime: &result.GPUTime{ServerS: 10}}
	for _, sr := range b.Plan.Searches {
		s := f.search(b.Side, b.Block)
		s.Name, s.Traffic = sr.Name, sr.Traffic
		res.Search = append(res.Search, s)
	}
	for _, ref := range b.Plan.Cells() {
		if ref.Phase == vocab.PhaseTraffic {
			c := result.TrafficCell{Traffic: ref.Matrix, Context: ref.Context, Rate: ref.Rate, Concurrency: ref.Concurrency, Status: vocab.StatusValid, Launched: 20, Completed: 20}
			v := f.value(b.Side, b.Block, ref.Context)
			for _, m := range gated(vocab.CellRef{Phase: vocab.PhaseTraffic}) {
				c.SetValue(m, 1e5/v) // a latency: the inverse of the speed
			}
			res.Traffic = append(res.Traffic, c)
			continue
		}
		c := result.PrefillCell{Context: ref.Context, Status: vocab.StatusValid, TPS: f.value(b.Side, b.Block, ref.Context)}
		if f.status != nil {
			if c.Status = f.status(b.Side, b.Block, ref.Context); c.Status != vocab.StatusValid {
				c.TPS, c.Reason = 0, "the server stopped answering"
			}
		}
		res.Prefill = append(res.Prefill, c)
	}
	return res, nil
}

// jitter is a fixed pseudo-noise of ±1 % for block k and a side.
func jitter(side string, k int) float64 {
	s := 0.0
	if side == "B" {
		s = 0.37
	}
	return 1 + 0.01*math.Sin(float64(k)*2.1+s)
}

// TestCommand: the design and its decisions over a fake runner.
func TestCommand(t *testing.T) {
	fixed := "measure {\n  repeat = 2\n}\nprefill {\n  contexts = [\"1K\"]\n}\n"
	auto := "measure {\n  repeat = \"auto\"\n}\nprefill {\n  contexts = [\"1K\", \"4K\"]\n}\n"
	tests := []struct {
		name   string
		body   string
		value  func(side string, block, ctx int) float64
		status func(side string, block, ctx int) vocab.Status
		fail   string
		code   int
		// want are lines of stdout; boots the boots measured; check more.
		want  []string
		boots int
		check func(t *testing.T, f *fakeBoot, rec Record)
	}{
		{
			name: "identical builds, the machine 30% slower from block 3 on: within tolerance",
			body: fixed,
			value: func(side string, block, _ int) float64 {
				v := 1000 * jitter(side, block)
				if block >= 3 {
					v *= 0.7
				}
				return v
			},
			want:  []string{"6 blocks paired), within 5%\n", "--- PASS: s/interleave/prefill/ctx=1K\n", "6 blocks, 12 boots, 120.0 s of server time", "\nPASS\n"},
			boots: 12,
			check: func(t *testing.T, f *fakeBoot, rec Record) {
				if !slices.Contains(rec.Order, "AB") || !slices.Contains(rec.Order, "BA") {
					t.Errorf("orders %v: want both drawn", rec.Order)
				}
				for i, b := range f.boots {
					if want := rec.Order[i/2][i%2 : i%2+1]; b.Side != want || b.Block != i/2+1 {
						t.Errorf("boot %d: %s of block %d, want %s of block %d", i, b.Side, b.Block, want, i/2+1)
					}
					if b.Spec.Measure.Repeat != 2 || b.Spec.Measure.Boots != 1 {
						t.Errorf("boot %d: repeat %d, boots %d; want 2, 1", i, b.Spec.Measure.Repeat, b.Spec.Measure.Boots)
					}
				}
			},
		},
		{
			name: "B 10% slower: regressed",
			body: fixed,
			value: func(side string, block, _ int) float64 {
				return map[string]float64{"A": 1000, "B": 900}[side] * jitter(side, block)
			},
			code:  exit.Fail,
			want:  []string{"tps: A 1", ", regressed beyond 5% (higher is better)\n", "--- FAIL: s/interleave/prefill/ctx=1K\n", "1 of 1 cells failed: prefill/ctx=1K (fail)\n", "\nFAIL\n"},
			boots: 12,
		},
		{
			name: "repeat auto: only the undecided cell gets more blocks",
			body: auto,
			value: func(side string, block, ctx int) float64 {
				v := 1000 * jitter(side, block)
				if ctx == 4096 && block == 2 && side == "B" {
					v *= 0.8 // a wild block: undecided after 6, decided at 16
				}
				return v
			},
			want:  []string{"6 to 16 blocks (repeat = \"auto\")", "1 cell not yet decided: more blocks, up to 16", "--- PASS: s/interleave/prefill/ctx=1K\n"},
			boots: 32,
			check: func(t *testing.T, f *fakeBoot, rec Record) {
				for _, b := range f.boots {
					if n := len(b.Plan.Cells()); b.Block > 6 && n != 1 || b.Block <= 6 && n != 2 {
						t.Errorf("block %d measured %d cells", b.Block, n)
					}
					if b.Spec.Measure.Repeat != AutoRepeats || b.Spec.Measure.RepeatAuto {
						t.Errorf("block %d: repeat %d (auto %v), want %d a boot", b.Block, b.Spec.Measure.Repeat, b.Spec.Measure.RepeatAuto, AutoRepeats)
					}
				}
				if len(rec.Rows) != 2 || len(rec.Rows[0].A) != 6 || len(rec.Rows[1].A) != 16 {
					t.Errorf("rows %+v: want 6 blocks of 1K, 16 of 4K", rec.Rows)
				}
			},
		},
		{
			name: "a block measured without numbers is left out of the pairs",
			body: fixed,
			value: func(side string, block, _ int) float64 {
				return map[string]float64{"A": 1000, "B": 900}[side] * jitter(side, block)
			},
			status: func(side string, block, _ int) vocab.Status {
				if side == "B" && block == 3 {
					return vocab.StatusUnmeasurable
				}
				return vocab.StatusValid
			},
			code:  exit.Fail,
			want:  []string{"    left out of the pairs: block 3: B unmeasurable", "5 blocks paired), regressed beyond 5%"},
			boots: 12,
			check: func(t *testing.T, _ *fakeBoot, rec Record) {
				if r := rec.Rows[0]; len(r.A) != 5 || len(r.Left) != 1 {
					t.Errorf("row %+v: want 5 pairs, 1 block left out", r)
				}
			},
		},
		{
			name: "B over capacity where A measured: lost, a regression, as -baseline says",
			body: fixed,
			value: func(side string, block, _ int) float64 {
				return 1000 * jitter(side, block)
			},
			status: func(side string, block, _ int) vocab.Status {
				if side == "B" {
					return vocab.StatusOverCapacity
				}
				return vocab.StatusValid
			},
			code:  exit.Fail,
			want:  []string{"    lost: B cannot hold the cell A measured (block 1: B over capacity", "--- FAIL: s/interleave/prefill/ctx=1K"},
			boots: 12,
			check: func(t *testing.T, _ *fakeBoot, rec Record) {
				if r := rec.Rows[0]; r.Decision != "lost" || r.Outcome != vocab.Fail {
					t.Errorf("row %+v: want lost, a fail", r)
				}
			},
		},
		{
			name:  "a boot that errored on the cell: an error, never a slow build",
			body:  fixed,
			value: func(string, int, int) float64 { return 1000 },
			status: func(side string, block, _ int) vocab.Status {
				if side == "A" && block == 4 {
					return vocab.StatusError
				}
				return vocab.StatusValid
			},
			code: exit.Infra,
			want: []string{"    cell not measured: block 4, A: error: the server stopped answering\n", "--- FAIL: s/interleave/prefill/ctx=1K\n", "prefill/ctx=1K (error)"},
		},
		{
			name: "a traffic cell: its window's latencies decided per block",
			body: fixed + "traffic \"replay\" {\n  context  = \"1K\"\n  rate     = [4]\n  duration = \"5s\"\n  seed     = 7\n}\n",
			value: func(side string, block, _ int) float64 {
				return map[string]float64{"A": 1000, "B": 900}[side] * jitter(side, block)
			},
			code: exit.Fail,
			want: []string{"=== RUN   s/interleave/traffic/replay/ctx=1K/rate=4\n", "    ttft_ms_p99: A 99.97, B 110.7 (+11.0%, bounds +10.7…+11.4% at 95.3% confidence each, 6 blocks paired), regressed beyond 5% (lower is better)\n",
				"--- FAIL: s/interleave/traffic/replay/ctx=1K/rate=4\n"},
			boots: 12,
			check: func(t *testing.T, f *fakeBoot, rec Record) {
				if n := len(f.boots[0].Plan.Cells()); n != 2 {
					t.Errorf("a boot measured %d cells, want the prefill and the traffic cell", n)
				}
				var metrics []string
				for _, r := range rec.Rows {
					if strings.HasPrefix(r.Cell, "traffic/") {
						metrics = append(metrics, r.Metric)
					}
				}
				if !slices.Equal(metrics, trafficMetrics) {
					t.Errorf("traffic rows %v, want %v", metrics, trafficMetrics)
				}
			},
		},
		{
			name:  "a boot that does not start: exit 3 naming it",
			body:  fixed,
			value: func(string, int, int) float64 { return 1000 },
			fail:  "B",
			code:  exit.Infra,
			check: func(t *testing.T, f *fakeBoot, _ Record) {
				if len(f.boots) > 2 {
					t.Errorf("%d boots after B's failed", len(f.boots))
				}
			},
		},
		{
			name:  "a window that depends on the build: refused before any boot",
			body:  "measure {\n  duration = var.build == \"a\" ? \"1s\" : \"2s\"\n}\nprefill {\n  contexts = [\"1K\"]\n}\n",
			value: func(string, int, int) float64 { return 1000 },
			code:  exit.Usage,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeBoot{value: tc.value, status: tc.status, fail: tc.fail}
			var stdout, stderr bytes.Buffer
			out := filepath.Join(t.TempDir(), "ab")
			err := Command(context.Background(), Options{SpecPath: specWith(t, tc.body), VarName: "build", A: "a", B: "b", OutDir: out,
				Seed: 1, Blocks: DefaultBlocks, MaxBlocks: DefaultMaxBlocks, Stdout: &stdout, Stderr: &stderr, Measure: f.measure})
			if got := exit.Code(err); got != tc.code {
				t.Fatalf("exit %d (%v), want %d\n%s%s", got, err, tc.code, stdout.String(), stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
				}
			}
			if tc.boots > 0 && len(f.boots) != tc.boots {
				t.Errorf("%d boots, want %d", len(f.boots), tc.boots)
			}
			switch tc.code {
			case exit.Usage:
				if len(f.boots) > 0 || !strings.Contains(err.Error(), "differ beyond the build") || !strings.Contains(err.Error(), "window: 1s → 2s") {
					t.Errorf("%d boots; error %v: want none, naming the window", len(f.boots), err)
				}
				return
			case exit.Infra:
				if tc.fail == "" {
					return
				}
				if err == nil || !strings.Contains(err.Error(), "block 1, B (b): the server did not start") {
					t.Errorf("error %v: want the block and build named", err)
				}
				if tc.check != nil {
					tc.check(t, f, Record{})
				}
				return
			}
			var rec Record
			data, rerr := os.ReadFile(filepath.Join(out, RecordFile))
			if rerr != nil {
				t.Fatal(rerr)
			}
			if err := json.Unmarshal(data, &rec); err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, f, rec)
			}
		})
	}
}

// TestOrderSeeded: the same seed draws the same orders; another seed
// others.
func TestOrderSeeded(t *testing.T) {
	orders := func(seed uint64) []string {
		f := &fakeBoot{value: func(string, int, int) float64 { return 1000 }}
		var stdout bytes.Buffer
		err := Command(context.Background(), Options{SpecPath: specWith(t, "prefill {\n  contexts = [\"1K\"]\n}\n"), VarName: "build", A: "a", B: "b",
			OutDir: filepath.Join(t.TempDir(), "ab"), Seed: seed, Blocks: 8, MaxBlocks: 8, Stdout: &stdout, Stderr: &stdout, Measure: f.measure})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for i := 0; i+1 < len(f.boots); i += 2 {
			out = append(out, f.boots[i].Side+f.boots[i+1].Side)
		}
		return out
	}
	a, b, c := orders(1), orders(1), orders(2)
	if len(a) != 8 || !slices.Equal(a, b) {
		t.Errorf("seed 1 drew %v, then %v: want 8 blocks, the same", a, b)
	}
	if slices.Equal(a, c) {
		t.Errorf("seeds 1 and 2 drew the same orders %v", a)
	}
}

// TestTooFewBlocksRefused: each look must be able to decide, so under
// repeat = "auto" a first look of too few blocks for an interval at its
// level is refused before any boot, as a fixed design of too few is.
func TestTooFewBlocksRefused(t *testing.T) {
	tests := []struct {
		name           string
		body           string
		blocks, maxBlk int
		want           string
	}{
		{name: "auto: the first look too small", body: "measure {\n  repeat = \"auto\"\n}\nprefill {\n  contexts = [\"1K\"]\n}\n",
			blocks: 3, maxBlk: 16, want: "-blocks 3: at least "},
		{name: "fixed: too few", body: "measure {\n  repeat = 2\n}\nprefill {\n  contexts = [\"1K\"]\n}\n",
			blocks: 3, maxBlk: 3, want: "-blocks 3: at least "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeBoot{value: func(string, int, int) float64 { return 1000 }}
			var stdout bytes.Buffer
			err := Command(context.Background(), Options{SpecPath: specWith(t, tt.body), VarName: "build", A: "a", B: "b", OutDir: filepath.Join(t.TempDir(), "ab"),
				Seed: 1, Blocks: tt.blocks, MaxBlocks: tt.maxBlk, Stdout: &stdout, Stderr: &stdout, Measure: f.measure})
			if exit.Code(err) != exit.Usage || !strings.Contains(err.Error(), tt.want) || len(f.boots) > 0 {
				t.Errorf("exit %d (%v), %d boots; want 2 saying %q, no boot", exit.Code(err), err, len(f.boots), tt.want)
			}
		})
	}
}

// readRecord reads interleave.json in out.
func readRecord(t *testing.T, out string) Record {
	t.Helper()
	var rec Record
	data, err := os.ReadFile(filepath.Join(out, RecordFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestNothingMeasuredLost: interleave.json is written after every block,
// partial until the design is done, and a run interrupted or stopped by
// a boot that failed keeps what its finished blocks decided, marked
// partial, the half-measured block left out, with the interruption's
// exit code.
func TestNothingMeasuredLost(t *testing.T) {
	body := "measure {\n  repeat = 2\n}\nprefill {\n  contexts = [\"1K\"]\n}\n"
	slower := func(side string, block, _ int) float64 {
		return map[string]float64{"A": 1000, "B": 800}[side] * jitter(side, block)
	}
	tests := []struct {
		name string
		// stopAt stops the run in the second boot of that block: by an
		// interruption (cancel) or by a boot that fails.
		stopAt int
		cancel bool
		code   int
		blocks int
		want   []string // in stdout and the error
	}{
		{name: "interrupted in block 6 of 6: the 5 finished decide", stopAt: 6, cancel: true, code: exit.SIGINT, blocks: 5,
			want: []string{"5 blocks paired), regressed beyond 5%", "interleave: stopped before the design was done (interleave: block 6, ", "interrupted by SIGINT): the cells above are decided on the 5 blocks finished\n", "\nFAIL\n",
				"what 5 finished blocks decided is in "}},
		{name: "interrupted in block 2: too few blocks, inconclusive", stopAt: 2, cancel: true, code: exit.SIGINT, blocks: 1,
			want: []string{"1 blocks paired: too few for an interval", "decided on the 1 block finished\n", "what 1 finished block decided is in "}},
		{name: "a boot that fails in block 4: exit 3, 3 blocks kept", stopAt: 4, code: exit.Infra, blocks: 3,
			want: []string{"the server did not start): the cells above are decided on the 3 blocks finished\n", "what 3 finished blocks decided is in "}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "ab")
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			var seen []Record
			f := &fakeBoot{value: slower}
			f.before = func(ctx context.Context, b Boot) error {
				first := len(f.boots)%2 == 1
				if first && b.Block > 1 {
					// The record as the block before left it.
					seen = append(seen, readRecord(t, out))
				}
				if first || b.Block != tc.stopAt {
					return nil
				}
				if !tc.cancel {
					return exit.Infraf("the server did not start")
				}
				cancel(exit.With(exit.SIGINT, errors.New("interrupted by SIGINT")))
				return context.Cause(ctx)
			}
			var stdout bytes.Buffer
			err := Command(ctx, Options{SpecPath: specWith(t, body), VarName: "build", A: "a", B: "b", OutDir: out,
				Seed: 1, Blocks: DefaultBlocks, MaxBlocks: DefaultMaxBlocks, Stdout: &stdout, Stderr: &stdout, Measure: f.measure})
			if got := exit.Code(err); got != tc.code {
				t.Fatalf("exit %d (%v), want %d\n%s", got, err, tc.code, stdout.String())
			}
			all := stdout.String() + err.Error()
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("output lacks %q:\n%s", w, all)
				}
			}
			for i, rec := range seen {
				if rec.Blocks != i+1 || !rec.Partial || len(rec.Rows) != 1 || len(rec.Rows[0].A) != i+1 {
					t.Errorf("record before block %d: %d blocks, partial %v, rows %+v; want %d blocks, partial", i+2, rec.Blocks, rec.Partial, rec.Rows, i+1)
				}
			}
			rec := readRecord(t, out)
			if !rec.Partial || rec.Stopped == "" || rec.Blocks != tc.blocks || rec.Boots != 2*tc.blocks || len(rec.Order) != tc.blocks {
				t.Errorf("record: partial %v, stopped %q, %d blocks, %d boots, order %v; want partial, stopped, %d blocks", rec.Partial, rec.Stopped, rec.Blocks, rec.Boots, rec.Order, tc.blocks)
			}
			if r := rec.Rows[0]; len(r.A) != tc.blocks || len(r.B) != tc.blocks {
				t.Errorf("row %+v: want the %d finished blocks paired, the stopped one left out", r, tc.blocks)
			}
		})
	}
	t.Run("done: the last record is not partial", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "ab")
		f := &fakeBoot{value: slower}
		var stdout bytes.Buffer
		err := Command(context.Background(), Options{SpecPath: specWith(t, body), VarName: "build", A: "a", B: "b", OutDir: out,
			Seed: 1, Blocks: DefaultBlocks, MaxBlocks: DefaultMaxBlocks, Stdout: &stdout, Stderr: &stdout, Measure: f.measure})
		if exit.Code(err) != exit.Fail {
			t.Fatalf("exit %d (%v), want 1", exit.Code(err), err)
		}
		if rec := readRecord(t, out); rec.Partial || rec.Stopped != "" || rec.Blocks != 6 {
			t.Errorf("record: partial %v, stopped %q, %d blocks; want complete, 6 blocks", rec.Partial, rec.Stopped, rec.Blocks)
		}
		if m, _ := filepath.Glob(filepath.Join(out, "."+RecordFile+".*")); len(m) > 0 {
			t.Errorf("temporary files left: %v", m)
		}
	})
}

// TestAssertsAndPolicy: the spec's asserts are checked on each side's
// boots pooled, B's gating beside the comparison (the outcome the worst
// of both), A's reported; -inconclusive pass accepts an undecided cell
// unless its estimate is beyond the tolerance.
func TestAssertsAndPolicy(t *testing.T) {
	asserted := "measure {\n  repeat = 2\n}\nprefill {\n  contexts = [\"1K\"]\n}\nassert \"fast\" {\n  condition = prefill[\"1K\"].tps >= 950\n}\n"
	plain := "measure {\n  repeat = 2\n}\nprefill {\n  contexts = [\"1K\"]\n}\n"
	flat := func(a, b float64) func(string, int, int) float64 {
		return func(side string, block, _ int) float64 {
			return map[string]float64{"A": a, "B": b}[side] * jitter(side, block)
		}
	}
	// wild is B against A block by block: undecided at 6 blocks, the
	// estimate near shift.
	wild := func(shift float64) func(string, int, int) float64 {
		d := []float64{0.10, -0.12, 0.02, -0.02, 0.15, -0.09}
		return func(side string, block, _ int) float64 {
			if side == "A" {
				return 1000
			}
			return 1000 * (1 + shift + d[block-1])
		}
	}
	tests := []struct {
		name   string
		body   string
		value  func(string, int, int) float64
		policy compare.InconclusivePolicy
		code   int
		want   []string
		check  func(t *testing.T, rec Record)
	}{
		{name: "both builds alike, B's assert fails: exit 1 though the comparison is within", body: asserted, value: flat(940, 940), code: exit.Fail,
			want: []string{"within 5%\n", "--- PASS: s/interleave/prefill/ctx=1K\n", "=== RUN   s/interleave/B/assert/fast\n", "prefill[\"1K\"].tps = 9", "want >= 950", "--- FAIL: s/interleave/B/assert/fast (",
				"A (a), its boots pooled, reported (A's asserts do not gate): assert/fast fail (", "1 of 1 of B's asserts failed: s/assert/fast (fail)\n", "\nFAIL\n"},
			check: func(t *testing.T, rec Record) {
				if len(rec.VerdictsA) != 1 || len(rec.VerdictsB) != 1 || rec.VerdictsB[0].Outcome != vocab.Fail || rec.Outcome != vocab.Fail {
					t.Errorf("verdicts A %+v, B %+v, outcome %s: want B's assert failed, the run failed", rec.VerdictsA, rec.VerdictsB, rec.Outcome)
				}
			}},
		{name: "A's assert fails, B's passes: reported, not gated", body: asserted, value: flat(940, 960), code: exit.OK,
			want: []string{"--- PASS: s/interleave/B/assert/fast (", "assert/fast fail (", "\nPASS\n"}},
		{name: "undecided, -inconclusive fail: exit 4", body: plain, value: wild(0), code: exit.Inconclusive,
			want: []string{": inconclusive", "--- FAIL: s/interleave/prefill/ctx=1K\n"}},
		{name: "undecided, -inconclusive pass: accepted", body: plain, value: wild(0), policy: compare.InconclusivePass, code: exit.OK,
			want: []string{"; accepted (-inconclusive pass)\n", "--- PASS: s/interleave/prefill/ctx=1K\n", "\nPASS\n"}},
		{name: "undecided beyond the tolerance, -inconclusive pass: fails", body: plain, value: wild(-0.08), policy: compare.InconclusivePass, code: exit.Fail,
			want: []string{": inconclusive", "; the estimate is beyond 5%: fails even with -inconclusive pass\n", "--- FAIL: s/interleave/prefill/ctx=1K\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeBoot{value: tc.value}
			var stdout, stderr bytes.Buffer
			out := filepath.Join(t.TempDir(), "ab")
			err := Command(context.Background(), Options{SpecPath: specWith(t, tc.body), VarName: "build", A: "a", B: "b", OutDir: out,
				Seed: 1, Blocks: DefaultBlocks, MaxBlocks: DefaultMaxBlocks, Policy: compare.Policy{Inconclusive: tc.policy},
				Stdout: &stdout, Stderr: &stderr, Measure: f.measure})
			if got := exit.Code(err); got != tc.code {
				t.Fatalf("exit %d (%v), want %d\n%s%s", got, err, tc.code, stdout.String(), stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
				}
			}
			rec := readRecord(t, out)
			for _, side := range []string{"a", "b"} {
				res, err := result.Read(filepath.Join(out, side, "results.json"))
				if err != nil || len(res.Prefill) != 1 {
					t.Fatalf("%s's pooled results: %v", side, err)
				}
				if tc.body == asserted && len(res.Verdicts) != 1 {
					t.Errorf("%s's pooled results hold %d verdicts, want 1", side, len(res.Verdicts))
				}
			}
			if tc.check != nil {
				tc.check(t, rec)
			}
		})
	}
}

// TestSameServerRefused: a build variable that changes no server (used
// only in the workload or the measure settings) is refused before any
// boot, exit 2, naming where the spec reads it; the same build on both
// sides (an A/A run) is not.
func TestSameServerRefused(t *testing.T) {
	spec := func(t *testing.T, body string) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "ab.hcl")
		src := "variable \"build\" {\n  type    = string\n  default = \"a\"\n}\nserver \"s\" {\n  model = \"m\"\n  port  = 18999\n}\n" + body
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cells := "prefill {\n  contexts = [\"1K\"]\n}\n"
	tests := []struct {
		name string
		body string
		a, b string
		code int
		want []string
	}{
		{name: "used only in the workload", body: "workload {\n  prompt = var.build == \"a\" ? \"article\" : \"random\"\n}\n" + cells, a: "a", b: "b", code: exit.Usage,
			want: []string{"interleave: -var-name build: A (a) and B (b) launch the same server: the variable changes only what is measured", "; it is used in:\n  ", "ab.hcl:10: workload.prompt\n", "make the variable change the server"}},
		{name: "used only in measure", body: "measure {\n  duration = var.build == \"a\" ? \"1s\" : \"2s\"\n}\n" + cells, a: "a", b: "b", code: exit.Usage,
			want: []string{"launch the same server", "ab.hcl:10: measure.duration\n"}},
		{name: "not used at all", body: cells, a: "a", b: "b", code: exit.Usage,
			want: []string{"launch the same server", "; the spec does not read it\n"}},
		{name: "the same build on both sides: an A/A run", body: cells, a: "a", b: "a", code: exit.OK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeBoot{value: func(side string, block, _ int) float64 { return 1000 * jitter(side, block) }}
			var stdout bytes.Buffer
			err := Command(context.Background(), Options{SpecPath: spec(t, tc.body), VarName: "build", A: tc.a, B: tc.b, OutDir: filepath.Join(t.TempDir(), "ab"),
				Seed: 1, Blocks: DefaultBlocks, MaxBlocks: DefaultMaxBlocks, Stdout: &stdout, Stderr: &stdout, Measure: f.measure})
			if got := exit.Code(err); got != tc.code {
				t.Fatalf("exit %d (%v), want %d\n%s", got, err, tc.code, stdout.String())
			}
			if tc.code == exit.OK {
				return
			}
			if len(f.boots) > 0 {
				t.Errorf("%d boots before the refusal", len(f.boots))
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestReport: report.md in the -out folder says the outcome and the
// design, a row per cell and metric, B's verdicts and A's, and both
// sides' pooled results; one of a run stopped half-way says it is
// partial and why.
func TestReport(t *testing.T) {
	body := "measure {\n  repeat = 2\n}\nprefill {\n  contexts = [\"1K\"]\n}\nassert \"fast\" {\n  condition = prefill[\"1K\"].tps >= 950\n}\n"
	slower := func(side string, block, _ int) float64 {
		return map[string]float64{"A": 1000, "B": 900}[side] * jitter(side, block)
	}
	tests := []struct {
		name   string
		stopAt int // interrupt in block stopAt's second boot; 0: never
		want   []string
	}{
		{name: "done", want: []string{"# slogate interleave: FAIL\n", "B (`b`) against A (`a`), builds named by `-var-name build`, measured in one run: 6 blocks of one boot of each in the order `",
			"| Cell | Metric | A | B | Change | Bounds (95% confidence) | Blocks paired | Outcome |\n", "| prefill/ctx=1K | tps | 1000.3 | 903.5 | -9.9% | ", "| 6 | FAIL: regressed |\n",
			"## B's verdicts\n", "| s/assert/fast | FAIL | `prefill[\"1K\"].tps >= 950` | prefill[\"1K\"].tps = 903.5, want >= 950",
			"## A's verdicts\n", "| s/assert/fast | pass |", "## A's results, its boots pooled\n", "## B's results, its boots pooled\n"}},
		{name: "interrupted in block 3", stopAt: 3, want: []string{"# slogate interleave: ",
			"**Partial**: the run stopped before its design was done (interleave: block 3, ", "interrupted by SIGINT); the cells are decided on the 2 finished blocks.\n",
			"| 2 | INCONCLUSIVE |\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "ab")
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			f := &fakeBoot{value: slower}
			f.before = func(ctx context.Context, b Boot) error {
				if len(f.boots)%2 == 0 && b.Block == tc.stopAt {
					cancel(exit.With(exit.SIGINT, errors.New("interrupted by SIGINT")))
					return context.Cause(ctx)
				}
				return nil
			}
			var stdout bytes.Buffer
			Command(ctx, Options{SpecPath: specWith(t, body), VarName: "build", A: "a", B: "b", OutDir: out,
				Seed: 1, Blocks: DefaultBlocks, MaxBlocks: DefaultMaxBlocks, Stdout: &stdout, Stderr: &stdout, Measure: f.measure})
			data, err := os.ReadFile(filepath.Join(out, ReportFile))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(data), w) {
					t.Errorf("report.md lacks %q:\n%s", w, data)
				}
			}
		})
	}
}

// TestRateSearches: each boot runs the spec's rate searches and each
// block's pair is the two boots' capacity answers, decided on paired
// blocks, higher is better; a block whose answer is undecided or
// unmeasurable on a side is left out, saying so; B meeting the objective
// at no rate where A had a capacity is lost; a search that errored is an
// error.
func TestRateSearches(t *testing.T) {
	body := "measure {\n  repeat = 2\n}\nprefill {\n  contexts = [\"1K\"]\n}\n" +
		"traffic \"steady\" {\n  context  = \"1K\"\n  rate     = [2]\n  duration = \"5s\"\n  slo      = { ttft_ms = 1000 }\n}\n" +
		"search \"capacity\" {\n  traffic   = \"steady\"\n  rate      = [2, 16]\n  precision = \"5%\"\n  objective = cell.goodput_share >= 0.9\n}\n" +
		// Skipped (it reads a search), so it gates nothing: the record, the
		// last line and the exit agree (a passing run passes).
		"assert \"cap\" {\n  condition = search[\"capacity\"].rate_lower >= 2\n}\n"
	answer := func(rate float64) result.Search {
		return result.Search{Found: true, Rate: rate, RateLower: rate * 0.98, RateUpper: rate * 1.05, RateRange: [2]float64{2, 16}}
	}
	jittered := func(a, b float64) func(string, int) result.Search {
		return func(side string, block int) result.Search {
			return answer(map[string]float64{"A": a, "B": b}[side] * jitter(side, block))
		}
	}
	tests := []struct {
		name   string
		search func(side string, block int) result.Search
		code   int
		want   []string
		check  func(t *testing.T, f *fakeBoot, rec Record)
	}{
		{name: "the same capacity: within tolerance", search: jittered(10, 10), code: exit.OK,
			want: []string{"=== RUN   s/interleave/search/capacity\n", "    rate: A 10", "6 blocks paired), within 5%\n", "--- PASS: s/interleave/search/capacity\n", "\nPASS\n"},
			check: func(t *testing.T, f *fakeBoot, rec Record) {
				if rec.Outcome != vocab.Pass {
					t.Errorf("outcome %s; want pass: the skipped assert gates nothing (B's verdicts %+v)", rec.Outcome, rec.VerdictsB)
				}
				for _, b := range f.boots {
					if len(b.Plan.Searches) != 1 || b.Plan.Searches[0].Name != "capacity" {
						t.Errorf("block %d %s: searches %v, want capacity", b.Block, b.Side, b.Plan.Searches)
					}
				}
				if r := rec.Rows[len(rec.Rows)-1]; r.Cell != "search/capacity" || r.Metric != "rate" || len(r.A) != 6 {
					t.Errorf("last row %+v: want search/capacity's rate over 6 blocks", r)
				}
			}},
		{name: "B 20% less capacity: regressed", search: jittered(10, 8), code: exit.Fail,
			want: []string{"6 blocks paired), regressed beyond 5% (higher is better)\n", "--- FAIL: s/interleave/search/capacity\n"}},
		{name: "an undecided answer leaves its block out", code: exit.Fail,
			search: func(side string, block int) result.Search {
				if side == "A" && block == 2 {
					return result.Search{Found: true, Rate: 10}
				}
				return jittered(10, 8)(side, block)
			},
			want: []string{"    left out of the pairs: block 2: A undecided: no probe was decided to meet the objective with confidence\n", "5 blocks paired), regressed beyond 5%"}},
		{name: "a client that could not drive the answer's rates: left out", code: exit.OK,
			search: func(side string, block int) result.Search {
				s := jittered(10, 10)(side, block)
				if side == "B" && block == 4 {
					s.ClientLimit = 10.5
				}
				return s
			},
			want: []string{"    left out of the pairs: block 4: B unmeasurable: the client could not drive 10.5 req/s, within the answer's bounds\n", "5 blocks paired), within 5%"}},
		// Paired like every decision: a block whose load made both sides
		// fail at the range's bottom is left out, not a lost capacity.
		{name: "both sides meet the objective at no rate in one block: left out", code: exit.OK,
			search: func(side string, block int) result.Search {
				if block == 3 {
					return result.Search{Found: false, RateUpper: 2, RateRange: [2]float64{2, 16}}
				}
				return jittered(10, 10)(side, block)
			},
			want: []string{"    left out of the pairs: block 3: B met the objective at no rate (2 req/s decided failed)\n", "5 blocks paired), within 5%", "--- PASS: s/interleave/search/capacity\n"}},
		{name: "B meets the objective at no rate: lost", code: exit.Fail,
			search: func(side string, block int) result.Search {
				if side == "B" && block == 3 {
					return result.Search{Found: false, RateUpper: 2, RateRange: [2]float64{2, 16}}
				}
				return jittered(10, 10)(side, block)
			},
			want: []string{"    lost: B met the objective at no rate where A had a capacity (block 3: B met the objective at no rate (2 req/s decided failed)): lost capacity is a regression\n", "--- FAIL: s/interleave/search/capacity\n"},
			check: func(t *testing.T, _ *fakeBoot, rec Record) {
				if r := rec.Rows[len(rec.Rows)-1]; r.Decision != "lost" {
					t.Errorf("row %+v: want lost", r)
				}
			}},
		{name: "a search that errored: an error", code: exit.Infra,
			search: func(side string, block int) result.Search {
				if side == "A" && block == 5 {
					return result.Search{Error: "probe at 4 req/s: the server stopped answering"}
				}
				return jittered(10, 10)(side, block)
			},
			want: []string{"    cell not measured: block 5, A: probe at 4 req/s: the server stopped answering\n", "--- FAIL: s/interleave/search/capacity\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeBoot{value: func(side string, block, _ int) float64 { return 1000 * jitter(side, block) }, search: tc.search}
			var stdout bytes.Buffer
			out := filepath.Join(t.TempDir(), "ab")
			err := Command(context.Background(), Options{SpecPath: specWith(t, body), VarName: "build", A: "a", B: "b", OutDir: out,
				Seed: 1, Blocks: DefaultBlocks, MaxBlocks: DefaultMaxBlocks, Stdout: &stdout, Stderr: &stdout, Measure: f.measure})
			if got := exit.Code(err); got != tc.code {
				t.Fatalf("exit %d (%v), want %d\n%s", got, err, tc.code, stdout.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
				}
			}
			if tc.check != nil {
				tc.check(t, f, readRecord(t, out))
			}
		})
	}
}

// TestServerAndWorkloadRefused: a variable that changes the server and
// also what is measured (a workload, a correctness block) is refused
// before any boot, naming what it changes beyond the server: the speed
// comparison would read the prompts as the build, and the correctness
// comparison refuse the two sides.
func TestServerAndWorkloadRefused(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{name: "the workload", body: "workload {\n  prompt = var.build == \"a\" ? \"article\" : \"random\"\n}\n", want: "  workload: as A's spec reads it → changed by the build\n"},
		{name: "a correctness block", body: "correctness \"g\" {\n  dataset    = \"x.jsonl\"\n  max_output = var.build == \"a\" ? 16 : 32\n}\n", want: "  correctness blocks: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "x.jsonl"), []byte("{\"prompt\": \"p\"}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "ab.hcl")
			src := "variable \"build\" {\n  type    = string\n  default = \"a\"\n}\nserver \"s\" {\n  model = \"m\"\n  port  = 18999\n  args  = [\"--tag\", var.build]\n}\nprefill {\n  contexts = [\"1K\"]\n}\n" + tc.body
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			f := &fakeBoot{value: func(side string, block, _ int) float64 { return 1000 * jitter(side, block) }}
			var stdout bytes.Buffer
			err := Command(context.Background(), Options{SpecPath: path, VarName: "build", A: "a", B: "b", OutDir: filepath.Join(dir, "ab"),
				Seed: 1, Blocks: DefaultBlocks, MaxBlocks: DefaultMaxBlocks, Stdout: &stdout, Stderr: &stdout, Measure: f.measure})
			if exit.Code(err) != exit.Usage || len(f.boots) > 0 || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "differ beyond the build") {
				t.Errorf("exit %d after %d boots (%v); want 2 before any boot, saying %q", exit.Code(err), len(f.boots), err, tc.want)
			}
		})
	}
}
