package runner

import (
	"time"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// Observer receives the run's events as they happen. cmd/slogate adapts
// them to a report.TestStream; runner itself never prints.
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

// Progress is the live state of a cell.
type Progress struct {
	Cell      vocab.CellRef
	Stage     result.Stage  // prefill, warm-up or measuring
	Elapsed   time.Duration // time into the window (or into the stage)
	Window    time.Duration // the window's length
	TPS       float64       // output tokens/s inside the window so far
	Active    int           // streams past their first token
	CellsDone int
	Cells     int
	ETA       time.Duration // estimated time left for this server
}

// nopObserver discards everything.
type nopObserver struct{}

func (nopObserver) Note(Note)                                     {}
func (nopObserver) CellStart(vocab.CellRef)                       {}
func (nopObserver) Progress(Progress)                             {}
func (nopObserver) PrefillDone(result.PrefillCell, time.Duration) {}
func (nopObserver) DecodeDone(result.DecodeCell, time.Duration)   {}

// TrafficObserver is implemented by an Observer that also wants finished
// traffic cells (an optional interface, so that observers written before
// traffic cells keep working).
type TrafficObserver interface {
	// TrafficDone reports a finished traffic cell (any status).
	TrafficDone(c result.TrafficCell, elapsed time.Duration)
}
