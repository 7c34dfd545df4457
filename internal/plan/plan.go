// Package plan decides what `slogate run` measures for one server, and in
// which order: the contexts ascending, at each context the cold prefill
// request (which also warms the prompt cache) and then its decode cells. It
// applies `-run REGEX` filtering and estimates how long the run will take.
// `slogate plan` prints a Plan; the runner executes one.
package plan

import (
	"cmp"
	"regexp"
	"slices"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
)

// Assumptions behind Estimated. They are deliberately round: the estimate
// tells a person whether a run takes minutes or hours, nothing finer.
const (
	// estimatePrefillRate is the prefill speed assumed for the cold request
	// of each context (tokens per second).
	estimatePrefillRate = 20000
	// estimateFirstToken is the time assumed for a decode cell's streams
	// to start and their first token to come, before their prompts'
	// prefill (estimateWarmUp).
	estimateFirstToken = 250 * time.Millisecond
	// estimateWarmRate is the rate assumed for C streams sharing a cached
	// prompt to reach their first token, C × ctx tokens a second: the seed
	// reports' warm TTFT is 1.8 s at 8K × 128 and 6.4 s at 251K × 32
	// (testdata/seeds), 1.3 s and 8.5 s at this rate. Streams with
	// distinct prompts prefill each at estimatePrefillRate.
	estimateWarmRate = 1_000_000
	// SteadyHold is how long the steady-state condition must hold before a
	// decode window opens (docs/method.md#steady-state-gate). The runner uses it too.
	SteadyHold = 3 * time.Second
	// estimateTokenTime is the time assumed per output token of a traffic
	// request, for the window's last requests to finish (estimateDrain):
	// 10 ms, the seed reports' time between tokens at 8K × 64. A flat 10 s
	// drain made a short traffic cell's estimate five times its wall.
	estimateTokenTime = 10 * time.Millisecond
)

// Plan is the ordered work for one server.
type Plan struct {
	Server *spec.Server
	// Steps in measurement order: contexts ascending.
	Steps []Step
	// Asserts are the kept assert blocks, in spec order.
	Asserts []*spec.Assert
	// Searches are the kept search blocks (docs/method.md#search), in spec
	// order; each is also on the Step of its context.
	Searches []*spec.Search
	// Correctness are the kept correctness blocks (-run keeps
	// "<server>/correctness/<name>", and a kept assert the blocks it
	// reads), in spec order; the runner measures them after every step
	// (docs/method.md#correctness).
	Correctness []*spec.Correctness
	// Expects are the kept expect blocks, in spec order. When -run keeps only
	// some cells of an expect block, the copy here has the other values set
	// to null ("no expectation").
	Expects []*spec.Expect
	// Estimated is the expected wall time of the measurements, server
	// start-up excluded; with repeat = "auto" at the minimum repeats.
	Estimated time.Duration
	// EstimatedMax is Estimated with every cell repeated max_repeat times
	// (repeat = "auto"); Estimated otherwise.
	EstimatedMax time.Duration
	// GPUs is the GPUs the server occupies (GPUs): estimates and measured
	// busy time times GPUs are GPU time.
	GPUs int
}

// GPUTime is d of the server's busy time as GPU time (× p.GPUs).
func (p *Plan) GPUTime(d time.Duration) time.Duration { return d * time.Duration(max(p.GPUs, 1)) }

// Step is everything measured at one context length.
type Step struct {
	Context int
	// Prefill is true when the cold prefill request is recorded as a cell
	// (the context is in prefill.contexts or a kept test reads it). The cold
	// request is sent either way: it warms the prompt cache for Decode.
	Prefill bool
	// Decode holds the kept decode cells at this context: matrices in spec
	// order, concurrency ascending within a matrix.
	Decode []vocab.CellRef
	// Traffic holds the kept traffic cells at this context, measured after
	// Decode: traffic blocks in spec order, rates ascending within a block.
	Traffic []vocab.CellRef
	// Searches are the kept search blocks at this context, run after the
	// decode cells.
	Searches []*spec.Search
}

// Cells returns every recorded cell in measurement order.
func (p *Plan) Cells() []vocab.CellRef {
	var out []vocab.CellRef
	for _, s := range p.Steps {
		if s.Prefill {
			out = append(out, vocab.CellRef{Phase: vocab.PhasePrefill, Context: s.Context})
		}
		out = append(out, s.Decode...)
		out = append(out, s.Traffic...)
	}
	return out
}

// New builds the plan of server srv of sp. keep is the -run filter (nil keeps
// everything): a cell, assert or expect cell is kept when its full test name
// matches, unanchored and not split at slashes. A kept assertion or expect
// cell adds the cells it reads; a kept decode cell always gets its context's
// cold prefill request (recorded only when the context is in
// prefill.contexts).
func New(sp *spec.Spec, srv *spec.Server, keep *regexp.Regexp) *Plan {
	p := &Plan{Server: srv}
	match := func(name string) bool { return keep == nil || keep.MatchString(name) }
	cells := keptCells(sp, srv.Name, match)
	p.keepTests(sp, srv.Name, match, cells)
	p.Steps = cells.steps(sp)
	p.addSearchSteps(keptSearches(sp, srv.Name, p.Asserts, match))
	p.GPUs = GPUs(srv)
	once, repeat, maxRepeat := estimate(p, sp), 1, 1
	if m := sp.Measure; m != nil {
		repeat, maxRepeat = max(m.Repeat, 1), max(m.Repeat, m.MaxRepeat, 1)
	}
	p.Estimated = once*time.Duration(repeat) + estimateTraffic(p, sp)
	p.EstimatedMax = once*time.Duration(maxRepeat) + estimateTraffic(p, sp)
	return p
}

// cellSet is the cells a plan keeps while New builds it.
type cellSet struct {
	prefillCtx map[int]bool // recorded prefill cells
	decode     map[vocab.CellRef]bool
	order      []vocab.CellRef // decode cells in spec order of appearance
	traffic    map[vocab.CellRef]bool
}

// addDecode keeps decode cell r (of the default matrix when it names
// none), once.
func (k *cellSet) addDecode(r vocab.CellRef) {
	r.Phase = vocab.PhaseDecode
	if r.Matrix == "" {
		r.Matrix = "decode"
	}
	if !k.decode[r] {
		k.decode[r] = true
		k.order = append(k.order, r)
	}
}

// addCell keeps cell r, a test reads it: a prefill, traffic or decode
// cell.
func (k *cellSet) addCell(r vocab.CellRef) {
	switch r.Phase {
	case vocab.PhasePrefill:
		k.prefillCtx[r.Context] = true
		return
	case vocab.PhaseTraffic:
		k.traffic[r] = true
		return
	}
	k.addDecode(r)
}

// keptCells is the prefill, decode and traffic cells of sp whose test
// names (of server srvName) match keeps.
func keptCells(sp *spec.Spec, srvName string, match func(string) bool) *cellSet {
	k := &cellSet{prefillCtx: map[int]bool{}, decode: map[vocab.CellRef]bool{}, traffic: map[vocab.CellRef]bool{}}
	if sp.Prefill != nil {
		for _, ctx := range sp.Prefill.Contexts {
			r := vocab.CellRef{Phase: vocab.PhasePrefill, Context: ctx}
			if match(r.TestName(srvName)) {
				k.prefillCtx[ctx] = true
			}
		}
	}
	for _, m := range sp.Matrices {
		for _, ctx := range m.Contexts {
			for _, c := range m.Concurrency {
				r := vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: m.Label, Context: ctx, Concurrency: c}
				if match(r.TestName(srvName)) {
					k.addDecode(r)
				}
			}
		}
	}
	for _, t := range sp.Traffic {
		for _, r := range t.Cells() {
			if match(r.TestName(srvName)) {
				k.traffic[r] = true
			}
		}
	}
	return k
}

// keepTests keeps in p the correctness blocks, asserts and expects of sp
// whose test names (of server srvName) match keeps, and in cells the
// cells they read; a kept assert keeps the correctness blocks it reads.
func (p *Plan) keepTests(sp *spec.Spec, srvName string, match func(string) bool, cells *cellSet) {
	keptCorrectness := map[string]bool{}
	for _, c := range sp.Correctness {
		if match(vocab.TestID{Server: srvName, Kind: vocab.KindCorrectness, Block: c.Name}.Name()) {
			keptCorrectness[c.Name] = true
		}
	}
	for _, a := range sp.Asserts {
		if !match(vocab.TestID{Server: srvName, Kind: vocab.KindAssert, Block: a.Name}.Name()) {
			continue
		}
		p.Asserts = append(p.Asserts, a)
		for _, r := range a.Cells {
			cells.addCell(r)
		}
		for _, name := range CorrectnessRead(a) {
			keptCorrectness[name] = true
		}
	}
	for _, c := range sp.Correctness { // spec order
		if keptCorrectness[c.Name] {
			p.Correctness = append(p.Correctness, c)
		}
	}
	for _, e := range sp.Expects {
		if kept := keepExpect(sp, srvName, e, match); kept != nil {
			p.Expects = append(p.Expects, kept)
			for _, r := range ExpectCells(sp, kept) {
				cells.addCell(r)
			}
		}
	}
}

// steps groups the kept cells by context into the plan's steps, in
// context order. A prefill cell is recorded only for contexts in
// prefill.contexts or read by a kept test; a decode cell's context gets
// its cold request regardless.
func (k *cellSet) steps(sp *spec.Spec) []Step {
	inPrefillBlock := map[int]bool{}
	if sp.Prefill != nil {
		for _, ctx := range sp.Prefill.Contexts {
			inPrefillBlock[ctx] = true
		}
	}
	steps := map[int]*Step{}
	step := func(ctx int) *Step {
		s, ok := steps[ctx]
		if !ok {
			s = &Step{Context: ctx}
			steps[ctx] = s
		}
		return s
	}
	for ctx := range k.prefillCtx {
		step(ctx).Prefill = true
	}
	for _, r := range k.order {
		s := step(r.Context)
		s.Decode = append(s.Decode, r)
		if inPrefillBlock[r.Context] {
			s.Prefill = true
		}
	}
	// A traffic block whose workload sets its lengths (context 0) has a
	// step of its own, context 0, with no prefill or decode.
	for _, t := range sp.Traffic { // spec order; rates (concurrencies) ascending below
		for _, r := range t.Cells() {
			if k.traffic[r] {
				s := step(r.Context)
				s.Traffic = append(s.Traffic, r)
			}
		}
	}
	return sortedSteps(sp, steps)
}

// sortedSteps is steps in context order, each step's traffic cells by
// rate (concurrency) within a block and its decode cells by matrix in
// spec order, then concurrency.
func sortedSteps(sp *spec.Spec, steps map[int]*Step) []Step {
	for _, s := range steps {
		slices.SortStableFunc(s.Traffic, func(a, b vocab.CellRef) int {
			if a.Matrix != b.Matrix {
				return 0
			}
			return cmp.Or(cmp.Compare(a.Rate, b.Rate), cmp.Compare(a.Concurrency, b.Concurrency))
		})
	}
	matrixIndex := map[string]int{}
	for i, m := range sp.Matrices {
		matrixIndex[m.Label] = i
	}
	var out []Step
	for _, s := range steps {
		slices.SortStableFunc(s.Decode, func(a, b vocab.CellRef) int {
			ia, oka := matrixIndex[a.Matrix]
			ib, okb := matrixIndex[b.Matrix]
			if !oka {
				ia = len(sp.Matrices)
			}
			if !okb {
				ib = len(sp.Matrices)
			}
			if ia != ib {
				return ia - ib
			}
			return a.Concurrency - b.Concurrency
		})
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b Step) int { return a.Context - b.Context })
	return out
}

// CorrectnessRead is the names of the correctness blocks assert a's
// condition reads (correctness["NAME"]…), in order of first appearance: a
// kept assert keeps them, as it keeps the cells it reads.
func CorrectnessRead(a *spec.Assert) []string {
	if a == nil || a.Condition == nil {
		return nil
	}
	var names []string
	for _, tr := range a.Condition.Variables() {
		if tr.RootName() != "correctness" || len(tr) < 2 {
			continue
		}
		idx, ok := tr[1].(hcl.TraverseIndex)
		if !ok || idx.Key.IsNull() || !idx.Key.IsKnown() || idx.Key.Type() != cty.String {
			continue
		}
		if n := idx.Key.AsString(); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// keepExpect returns e when all of its cells are kept, a copy with the
// unkept values nulled when some are, and nil when none are.
func keepExpect(sp *spec.Spec, server string, e *spec.Expect, match func(string) bool) *spec.Expect {
	conc := expectConcurrency(sp, e)
	cp := *e
	cp.Rows = nil
	kept, all := 0, true
	for _, row := range e.Rows {
		nr := row
		nr.Values = slices.Clone(row.Values)
		for i, v := range row.Values {
			if v == nil {
				continue
			}
			ref, ok := expectRef(e, row.Context, i, conc)
			if !ok {
				continue
			}
			if match(vocab.TestID{Server: server, Kind: vocab.KindExpect, Block: e.Name, Cell: &ref}.Name()) {
				kept++
			} else {
				nr.Values[i] = nil
				all = false
			}
		}
		cp.Rows = append(cp.Rows, nr)
	}
	switch {
	case kept == 0:
		return nil
	case all:
		return e
	}
	return &cp
}

// ExpectCells lists the cells an expect block reads: one per non-null value.
func ExpectCells(sp *spec.Spec, e *spec.Expect) []vocab.CellRef {
	conc := expectConcurrency(sp, e)
	var out []vocab.CellRef
	for _, row := range e.Rows {
		for i, v := range row.Values {
			if v == nil {
				continue
			}
			if ref, ok := expectRef(e, row.Context, i, conc); ok {
				out = append(out, ref)
			}
		}
	}
	return out
}

func expectRef(e *spec.Expect, ctx, i int, conc []int) (vocab.CellRef, bool) {
	if e.Matrix == "prefill" {
		return vocab.CellRef{Phase: vocab.PhasePrefill, Context: ctx}, i == 0
	}
	if i >= len(conc) {
		return vocab.CellRef{}, false
	}
	m := e.Matrix
	if m == "" {
		m = "decode"
	}
	return vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: m, Context: ctx, Concurrency: conc[i]}, true
}

// expectConcurrency is the concurrency list of the matrix an expect block
// describes (nil for prefill or an unknown matrix).
func expectConcurrency(sp *spec.Spec, e *spec.Expect) []int {
	label := e.Matrix
	if label == "" {
		label = "decode"
	}
	for _, m := range sp.Matrices {
		if m.Label == label {
			return m.Concurrency
		}
	}
	return nil
}

// estimateWarmUp is the time assumed for conc streams of ctx tokens to
// reach their first token: estimateFirstToken, then their prompts' prefill
// (C × ctx at estimateWarmRate over a shared, cached prompt; at
// estimatePrefillRate when each stream has its own). It was 2 s flat, which
// made a small run's estimate a third too long (the demo: 1m2s estimated,
// 42 s measured).
func estimateWarmUp(conc, ctx int, distinct bool) time.Duration {
	rate := float64(estimateWarmRate)
	if distinct {
		rate = estimatePrefillRate
	}
	return estimateFirstToken + time.Duration(float64(conc)*float64(ctx)/rate*float64(time.Second))
}

// estimate returns the expected wall time of one repeat of p under the
// spec's measure settings: per context the cold prefill (ctx ÷
// estimatePrefillRate), per decode cell warm-up (estimateWarmUp) +
// SteadyHold + duration. Cells that the spec's kv_cache_tokens already
// marks over capacity count as zero.
func estimate(p *Plan, sp *spec.Spec) time.Duration {
	m := sp.Measure
	distinct := sp.Workload != nil && sp.Workload.Distinct
	dur, maxOut := 30*time.Second, 4096
	if m != nil {
		if m.Duration > 0 {
			dur = m.Duration
		}
		if m.MaxOutput > 0 {
			maxOut = m.MaxOutput
		}
	}
	var total time.Duration
	for _, s := range p.Steps {
		total += time.Duration(float64(s.Context) / estimatePrefillRate * float64(time.Second))
		for _, r := range s.Decode {
			if SpecPool(p.Server).OverCapacity(r.Concurrency, r.Context, maxOut) {
				continue
			}
			total += estimateWarmUp(r.Concurrency, r.Context, distinct) + SteadyHold + dur
		}
		for _, sr := range s.Searches {
			if sr.IsRate() {
				continue // estimateTraffic counts its windows
			}
			// A probe's concurrency is not known before the search runs:
			// the range's middle stands for each.
			total += time.Duration(MaxProbes(sr.Lo, sr.Hi)) * (estimateWarmUp((sr.Lo+sr.Hi)/2, s.Context, distinct) + SteadyHold + dur)
		}
	}
	return total
}

// SpecPool is the KV pool the spec states for srv: its kv_cache_tokens
// (the total over engines, as the runner records it) split over its
// data_parallel_size engines; Tokens is 0 when the spec sets no capacity.
func SpecPool(srv *spec.Server) KVPool {
	var k KVPool
	if srv == nil {
		return k
	}
	if srv.KVCacheTokens != nil {
		k.Tokens = *srv.KVCacheTokens
	}
	if srv.DataParallelSize != nil {
		k.Engines = *srv.DataParallelSize
	}
	k.Knob = srv.SyntaxOf().MaxNumSeqsName
	return k
}

// estimateTraffic is the expected wall time of p's traffic cells and rate
// searches: warm-up and window each, plus estimateDrain for the window's
// last requests to finish; a rate search its expected time
// (EstimateSearch), check windows included.
func estimateTraffic(p *Plan, sp *spec.Spec) time.Duration {
	var total time.Duration
	for _, s := range p.Steps {
		for _, r := range s.Traffic {
			if t := sp.TrafficBlock(r.Matrix); t != nil {
				total += t.WarmUp + t.Duration + estimateDrain(sp, t)
			}
		}
		for _, sr := range s.Searches {
			// A rate search's windows, past-capacity drains and settle
			// waits, at their expected count (EstimateSearch); its
			// check_windows at the answer too
			// (docs/method.md#paired-capacity-check). A run with
			// -baseline may measure the baseline's check windows as well;
			// the plan does not read the baseline, so those are not
			// counted.
			if sr.IsRate() {
				total += EstimateSearch(sp, p.Server, sr).Expected
			}
		}
	}
	return total
}

// minProbeWindows is the fewest windows that decide a rate search's probe
// (docs/method.md#rate-search-statistics): the low end of a search's
// estimate counts each probe at it (EstimateSearch).
const minProbeWindows = 2

// estimateDrain is the time assumed for traffic block t's last window
// requests to finish: a first token, then its output at estimateTokenTime
// a token (the named workload's output_tokens at most, else max_output).
func estimateDrain(sp *spec.Spec, t *spec.Traffic) time.Duration {
	out := 4096
	if m := sp.Measure; m != nil && m.MaxOutput > 0 {
		out = m.MaxOutput
	}
	if w := sp.NamedWorkload(t.Workload); w != nil && w.OutputTokens.IsSet() && w.OutputTokens.Max > 0 {
		out = w.OutputTokens.Max
	}
	return estimateFirstToken + time.Duration(out)*estimateTokenTime
}

// Remaining is what is left of the plan when the cells in done are already
// measured (a resumed run): how many cells, and the estimate of measuring
// them (each context's cold prefill request is sent again when a decode
// cell of it is left, as the runner does; a search is always run again).
func (p *Plan) Remaining(sp *spec.Spec, done map[vocab.CellRef]bool) (int, time.Duration) {
	left := &Plan{Server: p.Server}
	for _, s := range p.Steps {
		keep := func(refs []vocab.CellRef) []vocab.CellRef {
			var out []vocab.CellRef
			for _, r := range refs {
				if !done[r] {
					out = append(out, r)
				}
			}
			return out
		}
		st := Step{Context: s.Context, Decode: keep(s.Decode), Traffic: keep(s.Traffic), Searches: s.Searches}
		st.Prefill = s.Prefill && !done[vocab.CellRef{Phase: vocab.PhasePrefill, Context: s.Context}]
		if st.Prefill || len(st.Decode)+len(st.Traffic)+len(st.Searches) > 0 {
			left.Steps = append(left.Steps, st)
		}
	}
	return len(left.Cells()), estimate(left, sp) + estimateTraffic(left, sp)
}
