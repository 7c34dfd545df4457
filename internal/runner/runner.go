// Package runner executes a plan against one server: it boots the server
// (or uses an already running endpoint) through package lifecycle, measures
// each cell of the plan through package measure, exactly as docs/method.md
// describes, and writes results.json, cells.jsonl, requests.jsonl and
// server.log into the output folder as it goes, so an interrupted or
// crashed run keeps every measured cell (and can be resumed: LoadResume,
// Config.Resume). Events go to an Observer; the runner never prints.
//
// One file per job: runner.go orchestrates a run (the plan's steps, one
// context each); boots.go boots the server, learns its facts (discover)
// and restarts it for measure.boots, counting GPU time; decode.go measures
// a decode or traffic cell through package measure (a search's probe with
// its repeats back to back) or records why it cannot be run; repeats.go
// takes a context's repeats in rounds (repeat = "auto" included) and
// combines them over the metric table; levels.go sizes the boot and repeat
// levels (Kalibera and Jones); search.go runs the SLO searches
// (docs/method.md#search), each probe a decode cell; persist.go writes
// results.json and cells.jsonl, requests.go requests.jsonl; resume.go
// continues an interrupted run; observer.go is what the run tells.
package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/measure"
	"github.com/slogate/slogate/internal/plan"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// Defaults for Config's zero values.
const (
	DefaultStopGrace         = 30 * time.Second
	DefaultStreamIdleTimeout = 60 * time.Second
)

// endpointReadyTimeout bounds the checks of an already running -endpoint
// (a variable so tests can shorten it).
var endpointReadyTimeout = 5 * time.Second

// Config is one server's run.
type Config struct {
	Spec   *spec.Spec
	Server *spec.Server
	Plan   *plan.Plan
	// OutDir receives results.json, cells.jsonl and server.log.
	OutDir string
	// Endpoint, when set, is the base URL of an already running server to
	// measure: no boot, no stop.
	Endpoint string
	// Sim launches the server's argv with this program's `sim` subcommand
	// in place of the command (SimExecutable, default os.Executable()).
	Sim           bool
	SimExecutable string
	// Tool is slogate's version, recorded in results.json.
	Tool string
	// Flags are the run's selecting flags, recorded in results.json
	// (result.RunFlags); nil records none.
	Flags *result.RunFlags
	// Observer receives events; nil discards them.
	Observer event.Observer
	// StopGrace is how long the server gets to exit after SIGTERM.
	StopGrace time.Duration
	// ForceStop, when closed, cuts StopGrace short: the server's process
	// group gets SIGKILL at once (a second Ctrl-C). nil never fires.
	ForceStop <-chan struct{}
	// StreamIdleTimeout ends a stream that sends nothing for this long (the
	// cell becomes an error; the run goes on).
	StreamIdleTimeout time.Duration
	// SteadyHold overrides plan.SteadyHold (tests only).
	SteadyHold time.Duration
	// Resume continues an interrupted run in OutDir: its cells.jsonl records
	// (this server's) are kept as measured, appended to rather than
	// replaced, and only the plan's missing cells are measured. Previous is
	// that run's results.json, when readable (server facts, start time).
	Resume   []result.CellRecord
	Previous *result.Results
	// Objective judges each probe of the plan's searches, ObjectiveText is
	// a search's objective as the spec writes it (results.json); the run command
	// builds both from package assert. A plan with searches needs them.
	Objective     Objective
	ObjectiveText func(s *spec.Search) string
	// ReasonText words a cell's reasons into the sentence its Reason keeps
	// (report.CellReasonText: the run command gives it, the runner and the
	// meter decide, the report words; called with no sentence); nil
	// writes their codes.
	ReasonText func(reasons []result.CellReason, sentence string) string
	// WarningText gives a warning the runner or the meter creates wordless
	// the words of its code and figures (report.WarningText, given as
	// ReasonText is); nil gives it its code as its summary.
	WarningText func(warning.Warning) warning.Warning
	// TrafficObjective judges each probe of the plan's rate searches
	// (docs/method.md#rate-search); the run command builds it from package assert.
	TrafficObjective TrafficObjective
	// Baseline is the -baseline run: repeat = "auto" repeats a cell until
	// its comparison with the baseline's cell is decided; nil decides each
	// cell on its own precision. Policy is the comparison's (its Tolerance
	// and Alpha; 0: compare's defaults).
	Baseline *result.Results
	Policy   compare.Policy
}

// run is the state of one Run.
type run struct {
	cfg      Config
	observer event.Observer
	results  *result.Results
	// server is the server being measured (package lifecycle): launched
	// (a process group or a container) or an -endpoint; nil once stopped.
	server      *lifecycle.Server
	client      *lifecycle.Client
	maxModelLen int
	// kvPool is the KV capacity and the data-parallel engines it is split
	// over (docs/method.md#over-capacity); Tokens 0 when unknown.
	kvPool plan.KVPool
	kvRead engine.KVRead // how the engine read the capacity
	// kvChecked are the contexts whose KV cross-check is done
	// (docs/method.md#kv-capacity; measure/kvcheck.go).
	kvChecked map[int]bool
	runID     string
	cellsFile *os.File
	// requests is requests.jsonl: a record of every generation request.
	requests   *requestLog
	cellsDone  int
	cellsTotal int
	// measuredRefs are the cells already measured (by a resumed run).
	measuredRefs map[vocab.CellRef]bool
	started      time.Time
	// prompts builds every prompt of the workload (docs/method.md#workload)
	// through the server's /tokenize and encodes the requests.
	prompts *measure.Prompts
	// The repeat design (repeats.go): bootNo is the current boot (1, 2,
	// …); pending the cells whose repeats are being taken; stop
	// repeat = "auto"'s rule (nil with a fixed repeat).
	bootNo  int
	pending map[vocab.CellRef]*pendingCell
	stop    stopRule
	// GPU time (docs/method.md#gpu-time): upSince is when the current
	// boot's server was launched (zero while none is up), upBefore the up
	// time of the boots before it, startups each boot's time to ready.
	upSince  time.Time
	upBefore time.Duration
	startups []time.Duration
}

// Run measures cfg.Plan. It always returns the Results (with whatever was
// measured, Error set when the run ended early) and writes them to
// OUT/results.json; the error carries its exit code (exit.Infra for
// server trouble; a context cause such as a signal's exit code as is).
func Run(ctx context.Context, cfg Config) (*result.Results, error) {
	if cfg.Observer == nil {
		cfg.Observer = nopObserver{}
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = DefaultStopGrace
	}
	if cfg.StreamIdleTimeout <= 0 {
		cfg.StreamIdleTimeout = DefaultStreamIdleTimeout
	}
	if cfg.SteadyHold <= 0 {
		cfg.SteadyHold = plan.SteadyHold
	}
	r := &run{cfg: cfg, observer: cfg.Observer, started: time.Now(), kvChecked: map[int]bool{},
		bootNo: 1, pending: map[vocab.CellRef]*pendingCell{}}
	var b [6]byte
	rand.Read(b[:])
	r.runID = "slogate-" + hex.EncodeToString(b[:])
	r.results = r.initialResults()
	r.cellsTotal = len(cfg.Plan.Cells())

	if m := r.measure(); m.RepeatAuto {
		r.stop = newStopRule(m, cfg.Policy.Tolerance, cfg.Policy.Alpha)
	}
	err := r.run(ctx)
	if err != nil {
		if perr := r.recordPartials(firstLine(err.Error())); perr != nil {
			err = errors.Join(err, perr)
		}
	}
	if r.server.Launched() {
		why := lifecycle.StopNormal
		if err != nil {
			why = "the run ended early (" + firstLine(err.Error()) + ")"
		}
		serr := r.stopServer(why)
		switch {
		case serr != nil && err == nil:
			err = serr
		case serr != nil:
			// The run already failed (a signal, -timeout, a crash): its exit
			// code stands, but a server that would not stop (a container
			// still holding GPU memory, a process group surviving SIGKILL)
			// is said too, on stderr and in results.json's error.
			err = exit.With(exit.Code(err), errors.Join(err, serr))
		default:
			if addr, busy := lifecycle.PortInUse(r.client.Base()); busy {
				r.warn(r.worded(warning.New(warning.PortInUse, "", "", nil).About(addr)))
			}
		}
	}
	if r.client != nil {
		r.client.Close()
	}
	if r.cellsFile != nil {
		r.cellsFile.Close()
	}
	if cerr := r.requests.close(); cerr != nil {
		r.warn(warning.New(warning.RequestsLog, "writing requests.jsonl", cerr.Error(), nil))
	}
	r.results.Finished = time.Now().UTC()
	r.results.GPUTime = r.gpuTime()
	r.sortCells()
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Cause(ctx)) {
			r.results.Interrupted = true
		}
		r.results.Error = err.Error()
	}
	if werr := r.writeResults(); werr != nil && err == nil {
		err = werr
	}
	return r.results, err
}

func (r *run) measure() result.Measure { return r.results.Measure }

func (r *run) window() time.Duration {
	return time.Duration(r.results.Measure.DurationS * float64(time.Second))
}

func (r *run) note(n event.Note) { r.observer.Note(n) }

func (r *run) warn(w warning.Warning) {
	if warning.Holds(r.results.Warnings, w) { // a resumed run repeats the first one's
		return
	}
	r.results.Warnings = append(r.results.Warnings, w)
	r.observer.Note(w)
}

func (r *run) run(ctx context.Context) error {
	if err := os.MkdirAll(r.cfg.OutDir, 0o755); err != nil {
		return exit.Infraf("creating the output folder: %v", err)
	}
	remaining, err := r.resume() // rewrites cells.jsonl when resuming
	if err != nil {
		return err
	}
	mode := os.O_CREATE | os.O_WRONLY | os.O_APPEND | os.O_TRUNC
	if r.cfg.Resume != nil {
		mode &^= os.O_TRUNC
	}
	f, err := os.OpenFile(filepath.Join(r.cfg.OutDir, "cells.jsonl"), mode, 0o644)
	if err != nil {
		return exit.Infraf("creating cells.jsonl: %v", err)
	}
	r.cellsFile = f
	// requests.jsonl is appended to on -resume as cells.jsonl is; records
	// of a cell that did not finish stay, with no cell of their name in
	// cells.jsonl (docs/method.md#per-request-records).
	rf, err := os.OpenFile(filepath.Join(r.cfg.OutDir, "requests.jsonl"), mode, 0o644)
	if err != nil {
		return exit.Infraf("creating requests.jsonl: %v", err)
	}
	r.requests = newRequestLog(rf)
	if err := r.writeResults(); err != nil {
		return err
	}
	if remaining == 0 && !r.correctnessPending() {
		if r.cfg.Resume != nil {
			r.note(event.NothingLeft{Server: r.cfg.Server.Name, CellsFile: filepath.Join(r.cfg.OutDir, "cells.jsonl")})
		}
		return nil
	}
	if r.cfg.Resume != nil && r.cfg.Endpoint == "" {
		if err := r.keepAttemptLog(); err != nil {
			return err
		}
	}
	if err := r.boot(ctx); err != nil {
		return err
	}
	if err := r.discover(ctx); err != nil {
		return err
	}
	for b := 1; b <= r.boots(); b++ {
		if b > 1 {
			if err := r.reboot(ctx, b); err != nil {
				return err
			}
		}
		for _, step := range r.cfg.Plan.Steps {
			if err := r.measureStep(ctx, step); err != nil {
				return err
			}
		}
	}
	return r.correctness(ctx)
}

// lastBoot says whether the current boot is the run's last: the cells
// are recorded at its end.
func (r *run) lastBoot() bool { return r.bootNo >= r.boots() }

// measureStep measures one plan step, that is one context: it builds the
// context's prompts, sends the cold prefill request (recorded when the plan
// says so; it warms the prompt cache either way) and, for a distinct
// workload, warms every other stream's prompt, then measures its decode
// cells.
func (r *run) measureStep(ctx context.Context, st plan.Step) error {
	salt := fmt.Sprintf("%s-%d", r.runID, st.Context)
	w := r.stepTodo(st)
	if r.bootNo > 1 {
		// Traffic cells and searches are not repeated: the first boot
		// measures them.
		w.traffic, w.workload, w.searches = nil, nil, nil
		if len(w.decode) == 0 && !w.record {
			return nil
		}
	}
	var cp *measure.ContextPrompts
	if streams := r.stepStreams(w); w.record || streams > 0 {
		var err error
		if cp, err = r.stepPrompts(ctx, st.Context, streams, salt, w.record); err != nil {
			return err
		}
	}
	bodies := func() [][]byte {
		if cp == nil {
			return nil
		}
		return r.meter().DecodeBodies(cp, salt)
	}
	var warnings []warning.Warning
	if cp != nil {
		warnings = cp.Warnings
	}
	if err := r.measureDecodeCells(ctx, w.decode, bodies, warnings); err != nil {
		return err
	}
	if err := r.stepTraffic(ctx, w, cp, salt); err != nil {
		return err
	}
	return r.stepSearches(ctx, w.searches, cp, salt)
}

// stepWork is what a plan step still has to measure: the cells not
// measured yet (resume) and its searches.
type stepWork struct {
	record   bool            // the cold prefill request is recorded as a cell
	decode   []vocab.CellRef // decode cells
	traffic  []vocab.CellRef // traffic cells sending the context's prompts
	workload []vocab.CellRef // traffic cells sending a named workload's requests
	searches []*spec.Search
}

// stepTodo sorts out what step st still has to measure.
func (r *run) stepTodo(st plan.Step) stepWork {
	w := stepWork{record: st.Prefill && !r.measuredRefs[vocab.CellRef{Phase: vocab.PhasePrefill, Context: st.Context}], searches: st.Searches}
	for _, ref := range st.Decode {
		if !r.measuredRefs[ref] {
			w.decode = append(w.decode, ref)
		}
	}
	// Traffic cells of a named workload send its plan's requests
	// (measure.WorkloadTraffic); the others the context's prompts.
	for _, ref := range st.Traffic {
		if r.measuredRefs[ref] {
			continue
		}
		if t := r.cfg.Spec.TrafficBlock(ref.Matrix); t != nil && t.Workload != "" {
			w.workload = append(w.workload, ref)
			continue
		}
		w.traffic = append(w.traffic, ref)
	}
	return w
}

// stepStreams is the number of prompts the step's runnable cells use: one
// per stream of the largest when the workload is distinct
// (docs/method.md#workload); traffic cells cycle through
// measure.TrafficPrompts of them.
func (r *run) stepStreams(w stepWork) int {
	streams := 0
	if len(w.traffic) > 0 {
		streams = measure.TrafficPrompts
	}
	for _, sr := range w.searches {
		if sr.IsRate() && !r.namedWorkload(sr) {
			streams = max(streams, measure.TrafficPrompts)
		}
	}
	for _, ref := range w.decode {
		if !r.kvPool.OverCapacity(ref.Concurrency, ref.Context, r.measure().MaxOutput) {
			streams = max(streams, ref.Concurrency)
		}
	}
	for _, sr := range w.searches {
		if !sr.IsRate() {
			streams = max(streams, r.largestProbe(sr))
		}
	}
	return streams
}

// stepPrompts builds the context's prompts for streams (at least one),
// sends the cold prefill request (recorded when record says so) and warms
// every other stream's prompt.
func (r *run) stepPrompts(ctx context.Context, ctxLen, streams int, salt string, record bool) (*measure.ContextPrompts, error) {
	cp, err := r.meter().BuildPrompts(ctx, ctxLen, max(streams, 1))
	if err != nil {
		return nil, err
	}
	if err := r.prefillStep(ctx, ctxLen, cp.Prompts[0], salt, record); err != nil {
		return nil, err
	}
	if err := r.meter().WarmStreams(ctx, cp, salt); err != nil {
		return nil, err
	}
	return cp, nil
}

// stepTraffic measures and records the step's traffic cells: those
// sending the context's prompts cp, then those of a named workload.
func (r *run) stepTraffic(ctx context.Context, w stepWork, cp *measure.ContextPrompts, salt string) error {
	for _, ref := range w.traffic {
		cell, err := r.trafficCell(ctx, ref, r.meter().DecodeBodies(cp, salt))
		if err != nil {
			return err
		}
		if err := r.recordTraffic(cell); err != nil {
			return err
		}
	}
	for _, ref := range w.workload {
		r.observer.CellStart(ref)
		t := r.cfg.Spec.TrafficBlock(ref.Matrix)
		var cell result.TrafficCell
		var err error
		starved := r.starvedDuring(func() { cell, err = r.meter().WorkloadTraffic(ctx, ref, t, r.cfg.Spec.NamedWorkload(t.Workload)) })
		r.unlessStarved(&cell, starved)
		if err != nil {
			return err
		}
		if err := r.recordTraffic(cell); err != nil {
			return err
		}
	}
	return nil
}

// stepSearches runs the step's searches, rate searches and concurrency
// searches, over the context's prompts cp when there are any.
func (r *run) stepSearches(ctx context.Context, searches []*spec.Search, cp *measure.ContextPrompts, salt string) error {
	for _, sr := range searches {
		var bodies [][]byte
		if cp != nil {
			bodies = r.meter().DecodeBodies(cp, salt)
		}
		var err error
		if sr.IsRate() {
			err = r.rateSearch(ctx, sr, bodies)
		} else {
			err = r.search(ctx, sr, bodies, cp)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// namedWorkload says whether rate search s's traffic block sends a named
// workload (which builds its own requests, not the context's prompts).
func (r *run) namedWorkload(s *spec.Search) bool {
	t := r.cfg.Spec.TrafficBlock(s.Traffic)
	return t != nil && t.Workload != ""
}

// eta estimates the time left from the plan's estimate and the cells done.
func (r *run) eta() time.Duration {
	if r.cellsTotal == 0 {
		return 0
	}
	left := r.cfg.Plan.Estimated * time.Duration(r.cellsTotal-r.cellsDone) / time.Duration(r.cellsTotal)
	return left
}
