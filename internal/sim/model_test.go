package sim

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// cellResult is what one simulated decode cell measured, in virtual time.
type cellResult struct {
	totalTPS float64
	ttft     time.Duration // median over requests started
	running  int           // running at the end
	waiting  int           // waiting at the end
}

// simulateCell runs the engine in virtual time the way the seeds measured
// a cell: the prompt is warm in the prefix cache, conc streams of maxOut
// tokens each restart as soon as they finish; tokens are counted over
// window, which starts hold after every stream that can run has its first
// token (docs/method.md#steady-state-gate). No wall-clock time passes, so the result
// is exact and immune to a busy machine.
func simulateCell(t *testing.T, s *settings, ctx, conc, maxOut int, hold, window time.Duration) cellResult {
	t.Helper()
	e := newEngine(s.params)
	e.virtual = true
	const hash = 42
	e.cache.warm(ctx, hash)
	type client struct {
		r     *request
		start time.Duration
		got   int
	}
	clients := make([]*client, conc)
	for i := range clients {
		clients[i] = &client{r: newRequest(ctx, maxOut, hash)}
		e.submit(clients[i].r)
	}
	var ttfts []time.Duration
	tokens := 0
	target := min(conc, s.params.runCap)
	warmup, end := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	bg := context.Background()
	for e.now < end {
		before := e.now
		busy, _ := e.iterate(bg)
		if !busy {
			t.Fatalf("engine idle at %v with %d streams", e.now, conc)
		}
		for _, c := range clients {
			n := int(c.r.pending.Swap(0))
			if n == 0 {
				continue
			}
			if c.got == 0 {
				ttfts = append(ttfts, c.r.firstTok-c.start)
			}
			c.got += n
			if e.now > warmup {
				// Count only the share of the step inside the window.
				frac := 1.0
				if before < warmup {
					frac = float64(e.now-warmup) / float64(e.now-before)
				}
				tokens += int(math.Round(float64(n) * frac))
			}
			if warmup == math.MaxInt64 && len(ttfts) >= target {
				warmup = e.now + hold
				end = warmup + window
			}
			if c.got == maxOut {
				c.r, c.start, c.got = newRequest(ctx, maxOut, hash), e.now, 0
				e.submit(c.r)
			}
		}
	}
	slices.Sort(ttfts)
	res := cellResult{totalTPS: float64(tokens) / window.Seconds(), running: len(e.running), waiting: len(e.waiting)}
	if len(ttfts) > 0 {
		res.ttft = ttfts[len(ttfts)/2]
	}
	return res
}

// seedArgv is each seed's launch command (from the reports), as the
// simulator receives it.
var seedArgv = map[string][]string{
	"qwen": {"Qwen/Qwen3.5-4B", "--served-model-name", "qwen", "--trust-remote-code", "--tensor-parallel-size", "1",
		"--reasoning-parser", "qwen3", "--enable-auto-tool-choice", "--tool-call-parser", "qwen3_coder", "--max-model-len", "262144",
		"--gpu-memory-utilization", "0.872563", "--host", "0.0.0.0", "--port", "8000", "--api-key", "k", "--max-num-batched-tokens", "32768",
		"--attention-backend", "flash_attn", "--speculative-config", `{"method":"dflash","model":"z-lab/Qwen3.5-4B-DFlash","num_speculative_tokens":7}`},
	"glm": {"nvidia/GLM-5.3-Flash-NVFP4", "--served-model-name", "nvidia/GLM-5.3-Flash-NVFP4", "--tensor-parallel-size", "2",
		"--reasoning-parser", "glm45", "--enable-auto-tool-choice", "--tool-call-parser", "glm47", "--max-model-len", "1048576",
		"--gpu-memory-utilization", "0.94", "--host", "0.0.0.0", "--port", "8000", "--api-key", "k", "--data-parallel-size", "1",
		"--enable-expert-parallel", "--enable-ep-weight-filter", "--kv-cache-dtype", "fp8", "--model-loader-extra-config",
		`{"enable_multithread_load":true,"num_threads":128}`, "--max-num-batched-tokens", "8192", "--enable-chunked-prefill",
		"--max-num-seqs", "32", "--attention-backend", "FLASHINFER_MLA_SPARSE_SM90", "--linear-backend", "humming", "--moe-backend", "humming",
		"--speculative-config", `{"method":"dflash","model":"incoai/GLM-5.3-Flash-DFlash2","num_speculative_tokens":7,"kv_cache_dtype":"auto"}`},
	"ling": {"inclusionAI/Ling-3.0-flash-int4", "--served-model-name", "ling", "--trust-remote-code", "--tensor-parallel-size", "2",
		"--reasoning-parser", "ling3", "--enable-auto-tool-choice", "--tool-call-parser", "ling3", "--max-model-len", "262144",
		"--gpu-memory-utilization", "0.872072", "--host", "0.0.0.0", "--port", "8000", "--api-key", "k", "--mamba-cache-mode", "align"},
}

func seedSettings(t *testing.T, name string) *settings {
	t.Helper()
	cfg, err := parseServe(seedArgv[name])
	if err != nil {
		t.Fatal(err)
	}
	s, err := settle(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.prof.Name != name {
		t.Fatalf("model %s chose profile %s, want %s", cfg.Model, s.prof.Name, name)
	}
	return s
}

// TestProfilesReproduceSeeds runs every measured cell of every seed through
// the engine in virtual time with the seed's own launch flags and compares
// total tok/s with the report. Run with -v to see the table.
func TestProfilesReproduceSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates ~150 cells")
	}
	for _, name := range []string{"qwen", "glm", "ling"} {
		t.Run(name, func(t *testing.T) {
			s := seedSettings(t, name)
			worst := 0.0
			for _, d := range s.prof.Decode {
				if d.Status == "over_capacity" {
					continue
				}
				got := simulateCell(t, s, d.Context, d.Concurrency, 4096, 3*time.Second, 30*time.Second)
				dev := got.totalTPS/d.TotalTPS - 1
				worst = math.Max(worst, math.Abs(dev))
				t.Logf("%4dK x %3d  seed %7.1f  sim %7.1f  %+5.1f%%   ttft seed %6.0f ms sim %6.0f ms   running %d waiting %d",
					d.Context>>10, d.Concurrency, d.TotalTPS, got.totalTPS, dev*100, d.TTFTms, float64(got.ttft.Milliseconds()), got.running, got.waiting)
				// 6 %: restarts inside a 30 s window move a few cells; 8 % for
				// queued cells, where the seed itself spreads 823–866 tok/s
				// over identical conditions (GLM 8K x 32/64/128).
				tol := 0.06
				if d.Status == "queued" {
					tol = 0.08
				}
				if math.Abs(dev) > tol {
					t.Errorf("%s %dK x %d: sim %.1f tok/s, seed %.1f (%+.1f%%)", name, d.Context>>10, d.Concurrency, got.totalTPS, d.TotalTPS, dev*100)
				}
				// Warm TTFT: the seed's value (the model smooths one outlier,
				// Qwen 251K x 2), within 5 % + one decode step.
				wantTTFT := time.Duration(s.params.model.warmTTFT.at(float64(d.Context), float64(d.Concurrency)) * float64(time.Second))
				if seed := time.Duration(d.TTFTms * float64(time.Millisecond)); wantTTFT < seed*95/100 && !(name == "qwen" && d.Context == 251<<10 && d.Concurrency == 2) {
					t.Errorf("%s %dK x %d: model warm TTFT %v below the seed's %v", name, d.Context>>10, d.Concurrency, wantTTFT, seed)
				}
				if diff := got.ttft - wantTTFT; diff < -wantTTFT/20 || diff > wantTTFT/20+250*time.Millisecond {
					t.Errorf("%s %dK x %d: sim TTFT %v, model %v", name, d.Context>>10, d.Concurrency, got.ttft, wantTTFT)
				}
				if want := d.Status == "queued"; want != (got.waiting > 0) {
					t.Errorf("%s %dK x %d: seed status %s, sim waiting %d", name, d.Context>>10, d.Concurrency, d.Status, got.waiting)
				}
			}
			t.Logf("worst deviation %.1f%%", worst*100)
		})
	}
}

// TestCapacityMatchesOverCapacityCells checks each profile's KV capacity
// against the seed: every measured cell fits, every Over capacity cell does not.
func TestCapacityMatchesOverCapacityCells(t *testing.T) {
	for _, name := range []string{"qwen", "glm", "ling"} {
		s := seedSettings(t, name)
		for _, d := range s.prof.Decode {
			need := d.Concurrency * (d.Context + 4096)
			if fits := need <= s.kvTokens; fits == (d.Status == "over_capacity") {
				t.Errorf("%s %dK x %d: needs %d tokens of %d, seed says %s", name, d.Context>>10, d.Concurrency, need, s.kvTokens, d.Status)
			}
		}
	}
}

// TestProfilesMatchGenerator regenerates the profiles from the seed reports
// and requires the embedded files to be identical (run `go generate ./sim`
// after changing a seed or the generator).
func TestProfilesMatchGenerator(t *testing.T) {
	dir := t.TempDir()
	if out, err := runGo(t, "run", "./internal/genprofiles", "-seeds", "../../testdata/seeds", "-out", dir); err != nil {
		t.Fatalf("genprofiles: %v\n%s", err, out)
	}
	files, _ := filepath.Glob("profiles/*.json")
	sort.Strings(files)
	if len(files) != 4 {
		t.Fatalf("want 4 profiles, have %v", files)
	}
	for _, f := range files {
		want, _ := os.ReadFile(filepath.Join(dir, filepath.Base(f)))
		got, _ := os.ReadFile(f)
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s is stale; run go generate ./sim (-generated +embedded):\n%s", f, diff)
		}
	}
}

func TestInterpolation(t *testing.T) {
	s := surface{
		{ctx: 1000, pts: []point{{1, 100}, {10, 10}}},
		{ctx: 4000, pts: []point{{1, 50}, {10, 5}}},
	}
	tests := []struct {
		name   string
		ctx, x float64
		want   float64
	}{
		{"log-log between batches", 1000, math.Sqrt(10), math.Sqrt(1000)},
		{"log-log between contexts", 2000, 1, 100 / math.Sqrt(2)},
		{"clamped below", 10, 0.1, 100},
		{"clamped above", 1e6, 1000, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.at(tt.ctx, tt.x); math.Abs(got-tt.want) > 1e-9*tt.want {
				t.Errorf("at(%g, %g) = %g, want %g", tt.ctx, tt.x, got, tt.want)
			}
		})
	}
}

func TestQueueBeyondMaxNumSeqsVirtual(t *testing.T) {
	cfg, err := parseServe([]string{"m", "--max-num-seqs", "4", "--sim-tbt", "1ms"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := settle(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := simulateCell(t, s, 1024, 6, 100000, 0, time.Second)
	if got.running != 4 || got.waiting != 2 {
		t.Errorf("running %d waiting %d, want 4 and 2", got.running, got.waiting)
	}
	if want := 4 * 1000.0; math.Abs(got.totalTPS/want-1) > 0.03 {
		t.Errorf("total %.1f tok/s, want %.0f (4 running at 1 ms per token)", got.totalTPS, want)
	}
}

// TestSpeedModelBetweenSamples evaluates every seed profile's fitted
// curves (decode rate per sequence, warm TTFT, cold prefill) between and
// beyond the seed points they were fitted to, never at them: between two
// samples a curve stays between their values and moves one way, the
// geometric midpoint is the geometric mean (log–log interpolation), between
// two contexts it lies between the two rows, and off the sampled grid it is
// clamped to the nearest edge (finite, positive, no extrapolation).
func TestSpeedModelBetweenSamples(t *testing.T) {
	same := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Abs(b) }
	within := func(y, a, b float64) bool {
		lo, hi := math.Min(a, b), math.Max(a, b)
		return y >= lo*(1-1e-12) && y <= hi*(1+1e-12)
	}
	for _, name := range []string{"qwen", "glm", "ling"} {
		m := buildModel(profiles[name])
		for _, c := range []struct {
			curve string
			s     surface
		}{{"decode rate", m.seqRate}, {"warm TTFT", m.warmTTFT}, {"prefill", m.prefill}} {
			t.Run(name+"/"+c.curve, func(t *testing.T) {
				s := c.s
				if len(s) < 2 {
					t.Fatalf("%d rows", len(s))
				}
				for _, r := range s {
					for i := 1; i < len(r.pts); i++ {
						p0, p1 := r.pts[i-1], r.pts[i]
						prev := p0.y
						for k := 1; k < 10; k++ {
							x := p0.x * math.Pow(p1.x/p0.x, float64(k)/10)
							y := s.at(r.ctx, x)
							if !within(y, p0.y, p1.y) {
								t.Errorf("ctx %g x %.3g: %g outside its neighbours %g (x %g) and %g (x %g)", r.ctx, x, y, p0.y, p0.x, p1.y, p1.x)
							}
							if (p1.y-p0.y)*(y-prev) < -1e-12*y {
								t.Errorf("ctx %g x %.3g: %g turns back (previous %g) between %g and %g", r.ctx, x, y, prev, p0.y, p1.y)
							}
							prev = y
						}
						if mid, want := s.at(r.ctx, math.Sqrt(p0.x*p1.x)), math.Sqrt(p0.y*p1.y); math.Abs(mid/want-1) > 1e-9 {
							t.Errorf("ctx %g: geometric midpoint %g, want %g (log–log)", r.ctx, mid, want)
						}
					}
					first, last := r.pts[0], r.pts[len(r.pts)-1]
					if y := s.at(r.ctx, last.x*4); !same(y, last.y) {
						t.Errorf("ctx %g beyond the largest x %g: %g, want clamped to %g", r.ctx, last.x, y, last.y)
					}
					if y := s.at(r.ctx, first.x/4); !same(y, first.y) {
						t.Errorf("ctx %g below the smallest x %g: %g, want clamped to %g", r.ctx, first.x, y, first.y)
					}
				}
				for i := 1; i < len(s); i++ {
					r0, r1 := s[i-1], s[i]
					for _, p := range r0.pts {
						x := p.x * 1.3 // off the sample
						y0, y1 := s.at(r0.ctx, x), s.at(r1.ctx, x)
						ctx := math.Sqrt(r0.ctx * r1.ctx)
						if y := s.at(ctx, x); !within(y, y0, y1) || math.IsNaN(y) {
							t.Errorf("ctx %g between %g and %g at x %.3g: %g outside %g..%g", ctx, r0.ctx, r1.ctx, x, y, y0, y1)
						}
					}
				}
				top := s[len(s)-1]
				for _, p := range top.pts {
					if y := s.at(top.ctx*3, p.x*1.1); !same(y, s.at(top.ctx, p.x*1.1)) || y <= 0 || math.IsInf(y, 0) {
						t.Errorf("beyond the largest context %g: %g, want the last row's value", top.ctx, y)
					}
				}
			})
		}
	}
}

// TestCellsBetweenSeedCells runs the engine at a concurrency between two
// measured seed cells of the same context (one per context, where both are
// valid and below the running cap) and requires the total tok/s to lie
// between theirs: the model is checked where it was not fitted.
func TestCellsBetweenSeedCells(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates a cell per context")
	}
	for _, name := range []string{"qwen", "glm", "ling"} {
		s := seedSettings(t, name)
		byCtx := map[int][]DecodePoint{}
		for _, d := range s.prof.Decode {
			if d.Status == "valid" && d.Concurrency < s.params.runCap {
				byCtx[d.Context] = append(byCtx[d.Context], d)
			}
		}
		tested := 0
		for ctx, ds := range byCtx {
			sort.Slice(ds, func(i, j int) bool { return ds[i].Concurrency < ds[j].Concurrency })
			for i := 1; i < len(ds); i++ {
				a, b := ds[i-1], ds[i]
				mid := int(math.Round(math.Sqrt(float64(a.Concurrency * b.Concurrency))))
				if mid <= a.Concurrency || mid >= b.Concurrency || mid*(ctx+4096) > s.kvTokens {
					continue
				}
				got := simulateCell(t, s, ctx, mid, 4096, 3*time.Second, 10*time.Second).totalTPS
				lo, hi := math.Min(a.TotalTPS, b.TotalTPS), math.Max(a.TotalTPS, b.TotalTPS)
				t.Logf("%s %dK x %d: %.1f tok/s between x %d (%.1f) and x %d (%.1f)", name, ctx>>10, mid, got, a.Concurrency, a.TotalTPS, b.Concurrency, b.TotalTPS)
				// 6 %: restarts inside the window, as in TestProfilesReproduceSeeds.
				if got < lo*0.94 || got > hi*1.06 {
					t.Errorf("%s %dK x %d: %.1f tok/s outside its neighbours x %d (%.1f) and x %d (%.1f)",
						name, ctx>>10, mid, got, a.Concurrency, a.TotalTPS, b.Concurrency, b.TotalTPS)
				}
				tested++
				break
			}
		}
		if tested == 0 {
			t.Errorf("%s: no pair of valid seed cells to test between", name)
		}
	}
}

func runGo(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command("go", args...).CombinedOutput()
	return string(out), err
}

// TestSpeculativeSampling: per step a sequence gets 1..k+1 tokens, their
// mean is the acceptance length, and the spec-decode counters agree.
func TestSpeculativeSampling(t *testing.T) {
	tests := []struct {
		name   string
		accept float64
		k      int
	}{
		{"qwen-like", 3.0, 7},
		{"low acceptance", 1.2, 3},
		{"full acceptance", 5, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(engineParams{numSpeculative: tt.k, acceptLen: tt.accept, seed: 3, numBlocks: 1})
			r := newRequest(1, 1<<30, 0)
			const steps = 10000
			total, seen := 0, map[int]bool{}
			for range steps {
				n := e.sampleTokens(r)
				if n < 1 || n > tt.k+1 {
					t.Fatalf("step emitted %d tokens, want 1..%d", n, tt.k+1)
				}
				seen[n] = true
				total += n
			}
			if mean := float64(total) / steps; math.Abs(mean-tt.accept) > 0.01 {
				t.Errorf("mean %.3f tokens per step, want %.2f", mean, tt.accept)
			}
			if tt.accept < float64(tt.k+1) && len(seen) < 2 {
				t.Errorf("no randomness: only %v", seen)
			}
			if got := 1 + float64(e.st.acceptedTokens)/float64(e.st.drafts); math.Abs(got-tt.accept) > 0.01 {
				t.Errorf("counters give acceptance length %.3f, want %.2f", got, tt.accept)
			}
		})
	}
}

// ttftOf runs a virtual engine until r has its first token and returns
// its time to first token in virtual time.
func ttftOf(t *testing.T, e *engine, r *request) time.Duration {
	t.Helper()
	for range 100000 {
		if r.pending.Load() > 0 {
			return r.firstTok - r.arrived
		}
		if busy, _ := e.iterate(context.Background()); !busy {
			t.Fatal("engine idle before the first token")
		}
	}
	t.Fatal("no first token")
	return 0
}

func TestPrefillAndPrefixCache(t *testing.T) {
	params := func(cache bool) engineParams {
		return engineParams{numBlocks: 1 << 20, runCap: 16, prefixCache: cache, acceptLen: 1, stepScale: 1, profAccept: 1,
			tbt: time.Millisecond, ttft: 5 * time.Millisecond, prefillTPS: 100_000, seed: 1}
	}
	near := func(got, want time.Duration) bool { return got == want }
	t.Run("miss costs prompt / prefill rate, hit the warm TTFT", func(t *testing.T) {
		e := newEngine(params(true))
		e.virtual = true
		cold := newRequest(10_000, 1000, 7)
		e.submit(cold)
		if got := ttftOf(t, e, cold); !near(got, 100*time.Millisecond) {
			t.Errorf("cold TTFT %v, want 100ms (10,000 tokens at 100,000 tok/s)", got)
		}
		warm := newRequest(10_000, 1000, 7)
		e.submit(warm)
		if got := ttftOf(t, e, warm); !near(got, 5*time.Millisecond) {
			t.Errorf("warm TTFT %v, want 5ms", got)
		}
		other := newRequest(10_000, 1000, 8)
		e.submit(other)
		if got := ttftOf(t, e, other); !near(got, 100*time.Millisecond) {
			t.Errorf("different prompt TTFT %v, want 100ms", got)
		}
	})
	t.Run("prefix caching off: every request is cold", func(t *testing.T) {
		e := newEngine(params(false))
		e.virtual = true
		for i := range 2 {
			r := newRequest(10_000, 1000, 7)
			e.submit(r)
			if got := ttftOf(t, e, r); !near(got, 100*time.Millisecond) {
				t.Errorf("request %d TTFT %v, want 100ms", i, got)
			}
		}
	})
	t.Run("cold prefills queue behind each other", func(t *testing.T) {
		e := newEngine(params(true))
		e.virtual = true
		a, b := newRequest(10_000, 1000, 1), newRequest(10_000, 1000, 2)
		e.submit(a)
		e.submit(b)
		ttftOf(t, e, a)
		if got := ttftOf(t, e, b); !near(got, 200*time.Millisecond) {
			t.Errorf("second cold TTFT %v, want 200ms", got)
		}
	})
}

func TestPrefixCacheEviction(t *testing.T) {
	c := newPrefixCache()
	a, b, d := []uint64{1, 2, 3}, []uint64{4, 5}, []uint64{6, 7}
	c.release(c.hold(a, nil))
	c.release(c.hold(b, nil))
	c.release(c.acquire(a, nil)) // a is now the most recent
	c.release(c.hold(d, nil))
	c.trim(5)
	if got := len(c.acquire(a, nil)); got != 3 {
		t.Errorf("a: %d blocks cached, want 3 (recently used)", got)
	}
	if got := len(c.acquire(b, nil)); got != 0 {
		t.Errorf("b: %d blocks cached, want 0 (least recently used, evicted when 7 > 5 blocks)", got)
	}
	c = newPrefixCache()
	held := c.hold([]uint64{1, 2}, nil)
	c.release(c.hold([]uint64{3}, nil))
	c.trim(0)
	if got := len(c.acquire([]uint64{1, 2}, nil)); got != 2 {
		t.Errorf("held blocks: %d cached after trim(0), want 2 (a running request's blocks are never evicted)", got)
	}
	if _, ok := c.index[3]; ok {
		t.Errorf("a free block survived trim(0)")
	}
	c.release(held)
	c = newPrefixCache()
	keys := make([]uint64, maxCacheBlocks+10)
	for i := range keys {
		keys[i] = uint64(i)
	}
	c.release(c.hold(keys, nil))
	c.trim(1 << 40)
	if len(c.index) != maxCacheBlocks || c.nFree != maxCacheBlocks {
		t.Errorf("%d blocks (%d free), want at most %d", len(c.index), c.nFree, maxCacheBlocks)
	}
}

// TestTokensCountedBeforeDelivery: a handler never holds a token that
// /metrics' vllm:generation_tokens_total does not count yet, as vLLM's
// output handler records a step's stats before any request handler runs
// (docs/vllm.md#metrics, "Counted before the client sees it"). It is
// checked at every point the engine shows: its step hook, which runs
// between a step's tokens and their publication, and after each step.
func TestTokensCountedBeforeDelivery(t *testing.T) {
	var e *engine
	var reqs []*request
	consumed := int64(0)
	check := func(where string) {
		held := consumed
		for _, r := range reqs {
			held += r.pending.Load()
		}
		if counted := e.snapshot().generationTokens; held > counted {
			t.Fatalf("%s at %v: handlers hold %d tokens, /metrics counts %d", where, e.now, held, counted)
		}
	}
	e = newEngine(engineParams{numBlocks: 1 << 20, runCap: 16, acceptLen: 1, stepScale: 1, profAccept: 1,
		tbt: time.Millisecond, ttft: 5 * time.Millisecond, prefillTPS: 100_000, seed: 1,
		observe: func(stepEvent) { check("in the step") }})
	e.virtual = true
	for i := range 4 {
		r := newRequest(100, 20+i, uint64(i))
		reqs = append(reqs, r)
		e.submit(r)
	}
	for range 1000 {
		busy, _ := e.iterate(context.Background())
		check("after the step")
		for _, r := range reqs {
			consumed += r.pending.Swap(0)
		}
		if !busy {
			break
		}
	}
	if want := int64(20 + 21 + 22 + 23); consumed != want {
		t.Errorf("handlers got %d tokens, want %d", consumed, want)
	}
}
