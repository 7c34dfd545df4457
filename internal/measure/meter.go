// Package measure measures one cell against a ready server, exactly as
// docs/method.md describes, and returns what it measured: it knows nothing
// of plans, of the cells around it, or of files (the runner decides what to
// measure and writes the results).
//
// One file per job: meter.go is what measuring needs (Meter); prompt.go
// builds every prompt and request body over the server's /tokenize;
// prefill.go sends the cold prefill requests and warms the prompt cache;
// decode.go measures a decode cell (the steady-state gate, the window, its
// metrics), load.go drives its streams and accounts their chunks to the
// window, status.go decides its status from what the gate and the window
// saw, kvcheck.go cross-checks the KV capacity against the server's KV
// usage with one stream resident; traffic.go measures open-loop traffic
// cells; requests.go makes the records of requests.jsonl; stats.go the
// percentiles and distributions; trouble.go tells a failed request from a
// server that is gone; sse/ reads the event streams.
package measure

import (
	"strings"
	"time"

	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/warning"
)

// Meter is what measuring cells against one server needs. The runner
// builds one for each cell from its run's state; nil funcs do nothing.
type Meter struct {
	// Server is the server measured: its client, and whether it is gone.
	Server *lifecycle.Server
	// Spec is the server's block (its speculative block), Workload the
	// spec's workload (what a refused request says of the sampling).
	Spec     *spec.Server
	Workload *spec.Workload
	// Prompts builds the prompts and encodes the requests (NewPrompts).
	Prompts *Prompts
	// Window is a decode cell's window (measure.duration), MaxOutput its
	// requests' max_output, Percentiles the statistics its distributions
	// keep beyond the median (result.Measure.PercentilesOf).
	Window      time.Duration
	MaxOutput   int
	Percentiles []float64
	// MaxModelLen is the server's max_model_len; 0 when unknown.
	MaxModelLen int
	// KVTokens and KVSource are the KV capacity in use and where it came
	// from, for the KV cross-check (docs/method.md#kv-capacity).
	KVTokens int64
	KVSource string
	// KVBlock is the KV block size in tokens the server states (vLLM's
	// cache_config_info block_size); 0 when it states none.
	KVBlock int64
	// SteadyHold is how long the steady-state gate's conditions must hold;
	// StreamIdleTimeout ends a stream that sends nothing for this long.
	SteadyHold        time.Duration
	StreamIdleTimeout time.Duration
	// Record receives each request's record of requests.jsonl when the
	// request ends; it is called by the cell's goroutines concurrently.
	Record func(*result.RequestRecord)
	// Progress hears the live state of the cell (about twice a second).
	Progress func(event.CellProgress)
	// Warn is a warning of the run (results.json's warnings), Note what
	// the meter tells that belongs to no cell's result.
	Warn func(warning.Warning)
	Note func(event.MeterNote)
	// ReasonText words a cell's reasons (result.CellReason) into the
	// sentence its Reason keeps: report.CellReasonText, given by the run's
	// command (the meter decides, the report words), called with no
	// sentence. nil writes the codes.
	ReasonText func(reasons []result.CellReason, sentence string) string
	// WarningText gives a warning the meter creates wordless (no Summary)
	// the words of its code and figures: report.WarningText, given as
	// ReasonText is. nil gives it its code as its summary.
	WarningText func(warning.Warning) warning.Warning
	// clock, when set (tests), replaces a decode cell's clock: it is given
	// the load and returns its now (ns since origin).
	clock func(l *load) func() int64
}

func (m *Meter) progress(p event.CellProgress) {
	if m.Progress != nil {
		m.Progress(p)
	}
}

// reasonText is the sentence of reasons (ReasonText; their codes
// without it).
func (m *Meter) reasonText(reasons []result.CellReason) string {
	if m.ReasonText != nil {
		return m.ReasonText(reasons, "")
	}
	codes := make([]string, len(reasons))
	for i, r := range reasons {
		codes[i] = string(r.Code)
	}
	return strings.Join(codes, "; ")
}

// worded is ws with each warning created wordless (no Summary) given its
// words (WarningText).
func (m *Meter) worded(ws []warning.Warning) []warning.Warning {
	for i, w := range ws {
		if w.Summary != "" {
			continue
		}
		if m.WarningText != nil {
			ws[i] = m.WarningText(w)
		} else {
			ws[i].Summary = string(w.Code)
		}
	}
	return ws
}

// warn hands w to Warn, worded first when it was created wordless
// (worded).
func (m *Meter) warn(w warning.Warning) {
	if m.Warn != nil {
		m.Warn(m.worded([]warning.Warning{w})[0])
	}
}

func (m *Meter) note(n event.MeterNote) {
	if m.Note != nil {
		m.Note(n)
	}
}

func (m *Meter) record(rec *result.RequestRecord) {
	if m.Record != nil {
		m.Record(rec)
	}
}
