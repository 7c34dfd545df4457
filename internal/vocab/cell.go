package vocab

import (
	"fmt"
	"strconv"
	"strings"
)

// Cell references, statuses and the parameters a cell is named by.

// CellRef names one cell: a prefill context, a decode context ×
// concurrency of a matrix, or a traffic block's rate or concurrency (at its
// context, when it has one).
type CellRef struct {
	Phase  Phase  `json:"phase"`
	Matrix string `json:"matrix,omitempty"` // decode only; "" means "decode"
	// Search names the search block of a probe cell (ProbeRef); "" otherwise.
	Search string `json:"search,omitempty"`
	// Context is the cell's prompt length; 0 for a traffic cell whose
	// workload sets its own lengths (a dataset, input_tokens).
	Context int `json:"context"`
	// Concurrency is a decode cell's streams, or a closed-loop traffic
	// cell's requests in flight (Rate is then 0).
	Concurrency int `json:"concurrency,omitempty"`
	// Rate is an open-loop traffic cell's request rate (requests per
	// second); Matrix then holds the traffic block's label.
	Rate float64 `json:"rate,omitempty"`
}

// MatrixLabel returns the matrix label of a decode reference ("decode" when
// unset), the block label of a traffic reference.
func (r CellRef) MatrixLabel() string {
	if r.Matrix == "" {
		return "decode"
	}
	return r.Matrix
}

// ProbeRef is the reference of search name's probe at concurrency conc and
// context ctx: a decode cell whose test is "<server>/search/<name>/conc=N".
func ProbeRef(name string, ctx, conc int) CellRef {
	return CellRef{Phase: PhaseDecode, Search: name, Context: ctx, Concurrency: conc}
}

// RateProbeRef is the reference of rate search name's probe at rate
// (requests per second) over traffic block label at context ctx (0 when
// the block's workload sets the lengths): a traffic cell whose test is
// "<server>/search/<name>/rate=R".
func RateProbeRef(name, label string, ctx int, rate float64) CellRef {
	return CellRef{Phase: PhaseTraffic, Matrix: label, Search: name, Context: ctx, Rate: rate}
}

// searchNameParts are the name elements of a probe below the server:
// "search/<name>/conc=N", or "search/<name>/rate=R" for a rate probe.
func (r CellRef) searchNameParts() []string {
	if r.Phase == PhaseTraffic {
		return []string{KindSearch, r.Search, "rate=" + FormatRate(r.Rate)}
	}
	return []string{KindSearch, r.Search, "conc=" + strconv.Itoa(r.Concurrency)}
}

// Status is the state of one measured cell.
type Status string

// Cell statuses (docs/method.md#statuses).
const (
	// StatusValid: measured in steady state.
	StatusValid Status = "valid"
	// StatusQueued: measured, but the server made requests wait: requests
	// waiting for capacity, preemptions during the window, or fewer than C
	// running beyond the requests in transit for a sustained part of the
	// window (docs/method.md#statuses).
	StatusQueued Status = "queued"
	// StatusOverCapacity: not run, C × (ctx + max_output) exceeds the KV cache.
	StatusOverCapacity Status = "over_capacity"
	// StatusError: the cell could not be measured; Reason says why.
	StatusError Status = "error"
	// StatusUnmeasurable: the cell ran, but the client could not measure
	// it (docs/method.md#unmeasurable): its client fell behind, its own
	// figures disagree with the server's beyond the bound, or its window
	// held too few tokens; Reason says which. Its figures are kept for
	// the record but never gated.
	StatusUnmeasurable Status = "unmeasurable"
	// StatusSaturated: an open-loop traffic cell stopped early, its queue
	// growing without bound for the traffic block's saturation_after
	// (docs/method.md#saturation): the server is past its capacity at
	// the cell's rate. Reason gives the evidence; its figures, of the
	// part of the window it ran, are kept for the record but never gated.
	StatusSaturated Status = "saturated"
)

// Measured reports whether a cell with this status carries numbers.
func (s Status) Measured() bool { return s == StatusValid || s == StatusQueued }

// Arrival processes of a traffic block (docs/method.md#arrival-schedules).
const (
	ArrivalsPoisson  = "poisson"
	ArrivalsConstant = "constant"
	ArrivalsGamma    = "gamma"
	// ArrivalsTrace sends each request at its trace's time (a trace
	// workload's; docs/spec.md#traces).
	ArrivalsTrace = "trace"
)

// DefaultMaxOutstanding is the safety cap on a traffic cell's requests in
// flight when the spec sets none (docs/method.md#traffic).
const DefaultMaxOutstanding = 4096

// FormatRate spells a request rate as specs index it and test names show
// it: "4", "0.5" (the shortest decimal that reads back as the same number).
func FormatRate(rate float64) string { return strconv.FormatFloat(rate, 'f', -1, 64) }

// Expr is how a spec reads a cell: decode["8K"][64], prefill["8K"],
// steady["8K"][4], replay[8] (a traffic block without context).
func (r CellRef) Expr() string {
	switch r.Phase {
	case PhasePrefill:
		return fmt.Sprintf("prefill[%q]", FormatTokens(r.Context))
	case PhaseTraffic:
		key := strconv.Itoa(r.Concurrency)
		if r.Concurrency == 0 {
			key = FormatRate(r.Rate)
			if strings.Contains(key, ".") {
				key = strconv.Quote(key)
			}
		}
		if r.Context == 0 {
			return fmt.Sprintf("%s[%s]", r.Matrix, key)
		}
		return fmt.Sprintf("%s[%q][%s]", r.Matrix, FormatTokens(r.Context), key)
	}
	return fmt.Sprintf("%s[%q][%d]", r.MatrixLabel(), FormatTokens(r.Context), r.Concurrency)
}

// Unmeasured is why a cell of status s has no numbers, with the runner's
// reason why: "over capacity", "error: stream stalled", "not measured".
func (s Status) Unmeasured(why string) string {
	switch s {
	case StatusOverCapacity:
		return "over capacity"
	case StatusError:
		if why == "" {
			return "error"
		}
		return "error: " + why
	case StatusUnmeasurable:
		if why == "" {
			return "unmeasurable"
		}
		return "unmeasurable: " + why
	case StatusSaturated:
		if why == "" {
			return "saturated"
		}
		return "saturated: " + why
	}
	return "not measured"
}
