package runner

import (
	"time"

	"github.com/slogate/slogate/internal/plan"
	"github.com/slogate/slogate/internal/result"
)

// Note is what a server's run tells that belongs to no cell, as a value:
// one of the note types below, a lifecycle.Note (the launch), a
// measure.Note (the meter) or a warning.Warning of the run. The observer
// hears each as it happens (Observer.Note); the run view writes its line
// (views.NoteLine). The runner formats none.
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

// ServerFact is a fact the server's engine stated (its start-up log or
// an endpoint), as the engine words it.
type ServerFact struct{ Server, Fact string }

// ServerFacts are what the run read of the server before it measures:
// version ("" when unknown), max_model_len, and the KV cache, with where
// its size came from and the engine's detail.
type ServerFacts struct {
	Server, Version    string
	MaxModelLen        int
	KV                 plan.KVPool
	KVSource, KVDetail string
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
// Why.
type CorrectnessRemeasured struct{ Server, Block, Why string }

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
// Error, could not be, which ends the check.
type CheckWindowDone struct {
	Search          string
	Replay          bool
	Rate            float64
	Window, Windows int
	Values          map[string]float64
	Elapsed         time.Duration
	Error           string
}
