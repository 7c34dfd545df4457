package gate

import (
	"fmt"
	"time"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// ProbeDone ends a search probe's test: the cell's summary line as for a
// decode cell, then whether it met the objective (docs/method.md#search). A
// probe over capacity is skipped (it counts as failing the objective); one
// that could not be measured is an error.
func (o *observer) ProbeDone(p result.SearchProbe, elapsed time.Duration) {
	test, out := o.decodeLines(p.Cell)
	switch {
	case out == vocab.Skip:
		o.stream.Output(test, "objective not met: over capacity")
		elapsed = 0
	case out == vocab.Error:
	case p.Passed:
		o.stream.Output(test, "objective met")
	case p.Reason != "":
		o.stream.Output(test, "objective not met: "+p.Reason)
	default:
		o.stream.Output(test, "objective not met")
	}
	o.end(test, out, elapsed)
}

// SearchDone logs a search's one-line summary.
func (o *observer) SearchDone(s result.Search) {
	o.stream.Log(searchSummary(o.server, s))
}

// searchSummary is the one line that tells a search's outcome:
//
//	search qwen/search/max_users: concurrency 23 meets the objective at ctx=8K (24 fails; 9 probes in 52s)
func searchSummary(server string, s result.Search) string {
	head := fmt.Sprintf("search %s: ", vocab.TestID{Server: server, Kind: vocab.KindSearch, Block: s.Name}.Name())
	tail := fmt.Sprintf("%d probes in %s", len(s.Probes), time.Duration(s.ElapsedS*float64(time.Second)).Round(time.Second))
	var line string
	switch {
	case s.Error != "":
		line = head + "no answer: " + s.Error + " (" + tail + ")"
	case !s.Found:
		line = fmt.Sprintf("%sno concurrency in [%d, %d] meets the objective at ctx=%s (%d fails; %s)", head, s.Range[0], s.Range[1], vocab.FormatTokens(s.Context), s.Range[0], tail)
	case s.ConfirmedBy == 0:
		line = fmt.Sprintf("%sconcurrency %d meets the objective at ctx=%s: the whole range [%d, %d] passes (%s)", head, s.Concurrency, vocab.FormatTokens(s.Context), s.Range[0], s.Range[1], tail)
	default:
		line = fmt.Sprintf("%sconcurrency %d meets the objective at ctx=%s (%d fails; %s)", head, s.Concurrency, vocab.FormatTokens(s.Context), s.ConfirmedBy, tail)
	}
	if !s.Monotone {
		line += "; not monotone: a probe passed above a failing one"
	}
	return line
}
