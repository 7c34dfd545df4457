// Package event holds what a run tells as it goes, as values: the notes
// of the runner (a boot, the server's facts, a resumed run's settings),
// of the meter (prompts built and warmed, a warning found) and of the
// launch (the command started, a readiness wait still going), and the
// Observer that hears them beside each cell's progress and result.
// runner, measure and lifecycle emit them; the run view (package views)
// words them. No package here formats a line.
package event

import (
	"time"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// The runner's notes.

// Note is what a server's run tells that belongs to no cell, as a value:
// one of the runner's note types below, a LaunchNote, a MeterNote or a
// warning.Warning of the run. The observer hears each as it happens
// (Observer.Note); the run view writes its line (views.NoteLine).
type Note any

// Rebooting: boot Boot of Boots (measure.boots) restarts the server.
type Rebooting struct{ Boot, Boots int }

// AttemptLogKept: before a resumed run starts its server, the server log
// of the run it resumes is kept at Path.
type AttemptLogKept struct{ Path string }

// MeasuringEndpoint: the run measures the server already running at Base
// (-endpoint): no boot, no stop.
type MeasuringEndpoint struct{ Base string }

// ServerReady: the server launched answered in Startup; its log is at
// LogPath.
type ServerReady struct {
	Startup time.Duration
	LogPath string
}

// ServerFact is a fact the spec asked of server Server (Fact:
// kv_cache_dtype, speculative) that the server did not state: results.json
// keeps the spec's value, Asked (docs/method.md#server-facts).
type ServerFact struct{ Server, Fact, Asked string }

// ServerFacts are what the run read of the server before it measures:
// version ("" when unknown), max_model_len, and the KV cache (plan.KVPool's
// figures: its tokens, ≤ 0 when unknown; the data-parallel engines they
// are split over; llama-server's slots, 0 when requests share the pool),
// with where its size came from and how the engine read it.
type ServerFacts struct {
	Server, Version    string
	MaxModelLen        int
	KVTokens           int64
	KVEngines, KVSlots int
	KVSource           string
	KVRead             engine.KVRead
}

// CorrectnessStarting: correctness block Block sends Prompts prompts,
// greedy, Concurrency at a time.
type CorrectnessStarting struct {
	Server, Block        string
	Prompts, Concurrency int
}

// CorrectnessDone: block Block recorded Outputs outputs in ElapsedS
// seconds, which cost Spent GPU-seconds (server-seconds on a CPU server).
type CorrectnessDone struct {
	Server, Block   string
	Outputs         int
	ElapsedS, Spent float64
	CPU             bool
}

// CorrectnessRemeasured: a resumed run measures block Block again, for
// Why; Outputs and Prompts are the outputs the run it continues kept of the
// block's prompts (RemeasureOutputsMissing), Line the first dataset line
// that changed (RemeasureDatasetChanged).
type CorrectnessRemeasured struct {
	Server, Block    string
	Why              RemeasureReason
	Outputs, Prompts int
	Line             int
}

// RemeasureReason names why a resumed run measures a correctness block
// again.
type RemeasureReason string

// The reasons of CorrectnessRemeasured.
const (
	// RemeasureUnfinished: the run it continues was stopped while
	// measuring the block.
	RemeasureUnfinished RemeasureReason = "unfinished"
	// RemeasureSettingsChanged: the block's settings changed since.
	RemeasureSettingsChanged RemeasureReason = "settings_changed"
	// RemeasureOutputsMissing: correctness.jsonl holds fewer outputs than
	// the block has prompts.
	RemeasureOutputsMissing RemeasureReason = "outputs_missing"
	// RemeasureDatasetChanged: the block's dataset changed since, at Line.
	RemeasureDatasetChanged RemeasureReason = "dataset_changed"
)

// CorrectnessKept: a resumed run keeps block Block's Outputs outputs, in
// File.
type CorrectnessKept struct {
	Server, Block string
	Outputs       int
	File          string
}

// RepeatMeasured: repeat Repeat of a matrix cell measured more than once
// was measured, as Cell (that repeat alone, not yet combined); Of is the
// repeats planned, Max the most it may get (above Of with repeat =
// "auto"). The cell's test follows once its repeats are all taken
// (docs/method.md#repeats).
type RepeatMeasured struct {
	Server          string
	Cell            result.DecodeCell
	Repeat, Of, Max int
	// Excluded says why the run is left out of the cell's figures
	// (docs/method.md#unmeasurable); "" when it counts.
	Excluded string
}

// NothingLeft: a resumed run finds every cell of its plan in CellsFile.
type NothingLeft struct{ Server, CellsFile string }

// The notes of a resumed run taking what the interrupted one was given
// (Resumed.MatchFlags, Resumed.MatchPrevious).

// FlagCarried: -Flag Value, as the interrupted run was given.
type FlagCarried struct{ Flag, Value string }

// VarsCarried: the -var settings the interrupted run was given, in name
// order.
type VarsCarried struct{ Vars []Var }

// Var is one -var NAME=VALUE.
type Var struct{ Name, Value string }

// WindowCarried: the resumed run measures with the interrupted run's
// window.
type WindowCarried struct{ Window time.Duration }

// EndpointCarried: the resumed run measures the running server at
// Endpoint (-endpoint), as the interrupted run did.
type EndpointCarried struct{ Endpoint string }

// SimCarried: the resumed run launches the simulator (-sim), as the
// interrupted run did.
type SimCarried struct{}

// CheckWindowDone: window Window of Windows of rate search Search's paired
// check (at its answer; with Replay, at the baseline's answer less the
// tolerance, docs/method.md#paired-capacity-check) was measured at Rate,
// with the objective's metrics Values, Elapsed into the check; or, with
// Stop, could not be, which ends the check.
type CheckWindowDone struct {
	Search          string
	Replay          bool
	Rate            float64
	Window, Windows int
	Values          map[string]float64
	Elapsed         time.Duration
	Stop            *result.CheckStop
}

// The meter's notes (package measure).

// MeterNote is what the meter tells of a run that belongs to no cell's
// result, as a value: PromptsBuilt, PromptsWarmed or Warned. The run view
// writes its line (package views); measure formats none.
type MeterNote interface{ meterNote() }

// PromptsBuilt is what building a context's prompts cost: Prompts
// prompts of Tokens tokens each at context Context, in Took, with
// TokenizeCalls calls of POST /tokenize exchanging Exchanged bytes.
type PromptsBuilt struct {
	Context, Prompts, Tokens int
	Took                     time.Duration
	TokenizeCalls            int
	Exchanged                int64
}

// PromptsWarmed: the prompts of streams 2 to Streams at context Context
// were sent once (max_tokens = 1) in Took, so that every stream starts
// warm (WarmStreams).
type PromptsWarmed struct {
	Context, Streams int
	Took             time.Duration
}

// Warned is a warning the meter attached to the cell being measured,
// told as it is found.
type Warned struct{ Warning warning.Warning }

func (PromptsBuilt) meterNote()  {}
func (PromptsWarmed) meterNote() {}
func (Warned) meterNote()        {}

// The launch's notes (package lifecycle).

// LaunchNote is what a launch tells as it goes, as a value: Starting,
// SimNoContainer or StillWaiting. The run view writes its line (package
// views); lifecycle formats none.
type LaunchNote interface{ launchNote() }

// Starting is the command a launch starts, its secrets redacted: the
// environment slogate sets and the argv (a container runtime's, with
// the container's).
type Starting struct {
	Env  map[string]string
	Argv []string
}

// SimNoContainer: under -sim the simulator runs as a process, and the
// server's container block is not used.
type SimNoContainer struct{}

// StillWaiting is a readiness wait still going after Waited: at Stage
// ("waiting for GET /health to answer 200").
type StillWaiting struct {
	Stage  string
	Waited time.Duration
}

func (Starting) launchNote()       {}
func (SimNoContainer) launchNote() {}
func (StillWaiting) launchNote()   {}

// The observer.

// Observer receives the run's events as they happen. the run view
// (views) adapts them to a report.TestStream; runner itself never prints.
type Observer interface {
	// Note is what the run tells that belongs to no cell (server start,
	// facts, warnings), as a value (Note).
	Note(n Note)
	// CellStart announces a cell about to be measured.
	CellStart(ref vocab.CellRef)
	// Progress is the live state of the cell being measured (about twice a second).
	Progress(p Progress)
	// PrefillDone reports a finished prefill cell (any status).
	PrefillDone(c result.PrefillCell, elapsed time.Duration)
	// DecodeDone reports a finished decode cell (any status, over_capacity included).
	DecodeDone(c result.DecodeCell, elapsed time.Duration)
}

// CellProgress is the live state of the cell being measured, as the meter
// tells it (measure.Meter.Progress, about twice a second).
type CellProgress struct {
	Cell    vocab.CellRef
	Stage   result.Stage  // prefill, warm-up or measuring
	Elapsed time.Duration // time into the window (or into the stage)
	Window  time.Duration // the window's length
	TPS     float64       // output tokens/s inside the window so far
	Active  int           // streams past their first token (requests in flight)
}

// Progress is the live state of a cell with where the server's run is:
// its cells done of all, and the time it estimates is left.
type Progress struct {
	CellProgress
	CellsDone int
	Cells     int
	ETA       time.Duration // estimated time left for this server
}

// TrafficObserver is implemented by an Observer that also wants finished
// traffic cells (an optional interface, so that observers written before
// traffic cells keep working).
type TrafficObserver interface {
	// TrafficDone reports a finished traffic cell (any status).
	TrafficDone(c result.TrafficCell, elapsed time.Duration)
}

// SearchObserver is an Observer that also hears about searches
// (docs/method.md#search). An Observer that is not one hears each probe as
// a DecodeDone.
type SearchObserver interface {
	// ProbeDone reports a finished probe: its cell and whether it met the
	// objective.
	ProbeDone(p result.SearchProbe, elapsed time.Duration)
	// SearchDone reports a finished search (any outcome).
	SearchDone(s result.Search)
}
