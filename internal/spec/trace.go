package spec

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/workload"
)

// traceAttributes are the attributes of a named workload that only a trace
// dataset reads (docs/spec.md#traces).
var traceAttributes = []string{"speed", "slice", "max_requests", "drop_over_length"}

// isTrace reports whether w replays a trace dataset.
func (w *Workload) isTrace() bool {
	return w.Dataset != nil && workload.IsTrace(w.Dataset.Format)
}

// IsTrace reports whether w replays a trace dataset (its format is one of
// workload.TraceFormats).
func (w *Workload) IsTrace() bool { return w.isTrace() }

// decodeTrace reads how a trace dataset is replayed: speed, slice,
// max_requests and drop_over_length; a workload that replays no trace
// takes none of them.
func (l *loader) decodeTrace(w *Workload, at hcl.Attributes) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, name := range traceAttributes {
		if a, ok := at[name]; ok && !w.isTrace() && w.Dataset != nil {
			diags = append(diags, invalidCtx("Not used without a trace", a.NameRange, a.Range,
				fmt.Sprintf("%s replays a trace dataset (format %s); this workload %s. Remove %s.", name, quotedList(workload.TraceFormatNames()), datasetKind(w), name)))
			delete(at, name)
		} else if ok && w.Prompt != workload.DatasetPrompt {
			diags = append(diags, datasetOnly(name, a, w))
			delete(at, name)
		}
	}
	tr := &w.Trace
	if s, d := l.float(at, "speed"); s != nil || d != nil {
		w.SpeedRange = at["speed"].NameRange
		diags = append(diags, d...)
		if s != nil && (!(*s > 0) || math.IsInf(*s, 0)) {
			diags = append(diags, invalid("Invalid speed", at["speed"].Expr.Range(),
				"speed divides the trace's gaps (2 replays it twice as fast, 0.5 half as fast): a number above 0; got %v.", *s))
		} else if s != nil {
			tr.Speed = *s
		}
	}
	if a, ok := at["slice"]; ok {
		diags = append(diags, l.decodeSlice(tr, a)...)
	}
	if n, d := l.positiveInt(at, "max_requests", 0); n != nil || d != nil {
		diags = append(diags, d...)
		if n != nil {
			tr.MaxRequests = *n
		}
	}
	diags = append(diags, l.setBool(at, "drop_over_length", &tr.DropOverLength)...)
	if w.isTrace() && !diags.HasErrors() && len(tr.Select(w.Dataset.Entries)) == 0 {
		rng := w.DatasetRange
		if a, ok := at["slice"]; ok {
			rng = a.Expr.Range()
		}
		last := w.Dataset.Entries[len(w.Dataset.Entries)-1].Trace.At - w.Dataset.Entries[0].Trace.At
		diags = append(diags, invalid("Empty trace slice", rng,
			"The slice [%s, %s) holds no request of %s, whose requests span %s from its first.", tr.From, tr.To, w.DatasetText, last))
	}
	return diags
}

// decodeSlice reads slice = ["10m", "20m"]: the part of the trace
// replayed, from its first request's time.
func (l *loader) decodeSlice(tr *workload.Trace, a *hcl.Attribute) hcl.Diagnostics {
	const example = `slice = ["10m", "20m"]`
	v, ok, diags := l.value("slice", a.Expr, cty.List(cty.String))
	if !ok {
		return diags
	}
	if v.LengthInt() != 2 {
		return append(diags, invalid("Invalid slice", a.Expr.Range(), "slice is the part of the trace replayed, from and to, since its first request, as in %s; got %d values.", example, v.LengthInt()))
	}
	var ends [2]time.Duration
	for i, e := range v.AsValueSlice() {
		d, err := time.ParseDuration(e.AsString())
		if err != nil || d < 0 {
			return append(diags, invalid("Invalid slice", a.Expr.Range(), "slice's values are durations such as \"0s\" or \"10m\", as in %s; got %q.", example, e.AsString()))
		}
		ends[i] = d
	}
	if ends[1] <= ends[0] {
		return append(diags, invalid("Invalid slice", a.Expr.Range(), "slice runs from its first value to its second, a later one (%s); got %s to %s.", example, ends[0], ends[1]))
	}
	tr.From, tr.To = ends[0], ends[1]
	return diags
}

// checkTraceWorkload reports what a trace workload cannot do: its prompts
// are token IDs, which only /v1/completions takes; its prefixes are the
// trace's hash_ids, so it takes no prefix; its requests are single, so it
// takes no turns.
func (l *loader) checkTraceWorkload(w *Workload) hcl.Diagnostics {
	if !w.isTrace() {
		return nil
	}
	var diags hcl.Diagnostics
	if l.spec.Measure.Endpoint == "chat" {
		diags = append(diags, invalid("Trace on the chat endpoint", w.DatasetRange,
			"A trace's prompts are token IDs of exactly its lengths (the trace has no text), which /v1/chat/completions cannot take; measure.endpoint is \"chat\" (%s). Use endpoint = \"completions\".",
			where(l.spec.Measure.DeclRange)))
	}
	if w.Prefix.IsSet() {
		diags = append(diags, invalid("Prefix with a trace", w.PrefixRange,
			"A trace's shared prefixes are its hash_ids blocks, replayed as written. Remove prefix."))
	}
	if w.Turns > 1 {
		diags = append(diags, invalid("Turns with a trace", w.TurnsRange,
			"A trace's requests are replayed one a line, at their times. Remove turns."))
	}
	return diags
}

// checkTraceFits reports the first request of trace workload w whose
// input and output exceed a server's max_model_len, at the trace's own
// line, unless drop_over_length drops such requests.
func (l *loader) checkTraceFits(w *Workload, maxOut int) hcl.Diagnostics {
	if !w.isTrace() || w.Trace.DropOverLength {
		return nil
	}
	var diags hcl.Diagnostics
	for _, srv := range l.spec.Servers {
		if srv.MaxModelLen == nil {
			continue
		}
		for _, i := range w.Trace.Select(w.Dataset.Entries) {
			e := w.Dataset.Entries[i]
			out := e.Trace.OutputTokens
			if w.OutputTokens.IsSet() {
				out = maxOut
			}
			if e.Trace.InputTokens+out <= *srv.MaxModelLen {
				continue
			}
			detail := fmt.Sprintf("The request's %d input and %d output tokens exceed server %q's max_model_len %d (at %s). Set drop_over_length = true to drop such requests (they are counted), slice the trace, or raise max_model_len.",
				e.Trace.InputTokens, out, srv.Name, *srv.MaxModelLen, where(l.maxModelLenRange[srv]))
			if data, err := datasetText(w.Dataset.Path); err == nil {
				// At the trace's own line (docs/spec.md#traces).
				diags = append(diags, l.atFileLine(w.Dataset.Path, data, e.Line, "Trace request too long for max_model_len",
					fmt.Sprintf("%s (The dataset of workload %q, %s.)", detail, w.Name, where(w.DatasetRange))))
				break
			}
			diags = append(diags, invalid("Trace request too long for max_model_len", w.DatasetRange, "%s:%d: %s", w.Dataset.Path, e.Line, detail))
			break
		}
	}
	return diags
}

// datasetText is the text of the dataset at path, decompressed when it is
// gzip (its magic bytes), for a snippet at one of its lines.
func datasetText(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil || len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		return data, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// checkTraceArrivals reports arrivals = "trace" over a workload that
// replays no trace, and gives a trace's traffic block its one cell: the
// trace's mean rate, so that the cell reads as LABEL[RATE].
func (l *loader) checkTraceArrivals(t *Traffic, w *Workload) hcl.Diagnostics {
	if t.Arrivals != vocab.ArrivalsTrace {
		return checkAgentArrivals(t, w)
	}
	if w.Prompt == workload.DatasetPrompt && w.Dataset == nil {
		return nil // the dataset's own diagnostic says why it was not read
	}
	if !w.isTrace() {
		return hcl.Diagnostics{invalid("Trace arrivals without a trace", t.DeclRange,
			"arrivals = %q sends each request at its trace's time; traffic %q sends workload %q, which %s. Name a workload whose dataset is a trace (format %s), or use other arrivals.",
			vocab.ArrivalsTrace, t.Label, w.Name, datasetKind(w), quotedList(workload.TraceFormatNames()))}
	}
	t.Rates = []float64{w.Trace.MeanRate(w.Dataset.Entries)}
	return nil
}

// checkAgentArrivals reports a traffic block that sends an agentic trace
// at its own rate or concurrency: the trace's sessions start at their
// recorded times and each call waits for its session's previous one, so
// the block's loop would change nothing; arrivals = "trace" says so.
func checkAgentArrivals(t *Traffic, w *Workload) hcl.Diagnostics {
	if w.Dataset == nil || w.Dataset.Format != workload.FormatCopilotAgent || t.LoopRange.Filename == "" {
		return nil
	}
	loop := "rate"
	if t.Concurrency != nil {
		loop = "concurrency"
	}
	return hcl.Diagnostics{invalid("Agentic trace without trace arrivals", t.LoopRange,
		"An agentic trace's sessions start at their recorded times and each call waits for the previous one and its tool batch: the trace sets the load, so traffic %q's %s would be ignored. Remove %s and set arrivals = %q.",
		t.Label, loop, loop, vocab.ArrivalsTrace)}
}

// trafficSend is a traffic block and the workload it sends.
type trafficSend struct {
	t *Traffic
	w *Workload
}

// checkTraceSpeed reports the speed of a trace (other than an agentic
// one, whose tool batches it scales) that no traffic block sends at
// arrivals = "trace": only the trace's times read it.
func checkTraceSpeed(sends []trafficSend) hcl.Diagnostics {
	other := map[*Workload]*Traffic{}
	var order []*Workload
	for _, s := range sends {
		w := s.w
		if !w.isTrace() || w.Dataset.Format == workload.FormatCopilotAgent || w.SpeedRange.Filename == "" {
			continue
		}
		if s.t.Arrivals == vocab.ArrivalsTrace {
			other[w] = nil
			continue
		}
		if _, seen := other[w]; !seen {
			other[w] = s.t
			order = append(order, w)
		}
	}
	var diags hcl.Diagnostics
	for _, w := range order {
		t := other[w]
		if t == nil {
			continue
		}
		how, loop := fmt.Sprintf("at its own rates (%q arrivals)", t.Arrivals), "rate"
		if t.Concurrency != nil {
			how, loop = "in a closed loop", "concurrency"
		}
		diags = append(diags, invalid("Speed not used at these arrivals", w.SpeedRange,
			"speed scales the trace's times, which only arrivals = %q sends; traffic %q sends workload %q %s, so speed would be ignored. Remove speed, or set arrivals = %q and remove %s.",
			vocab.ArrivalsTrace, t.Label, w.Name, how, vocab.ArrivalsTrace, loop))
	}
	return diags
}
