package llamacpp

import (
	"io"

	"github.com/slogate/slogate/internal/promread"
)

// ParseMetrics reads a llama-server /metrics page (--metrics;
// docs/llamacpp.md#metrics) into the engine-neutral figures: Running from
// llamacpp:requests_processing and Waiting from llamacpp:requests_deferred,
// the requests waiting for a free slot, i.e. for capacity (read live at
// each scrape); the prefix cache from prompt_tokens_total (evaluated,
// cached ones excluded) and prompt_tokens_cached_total; the speculative
// counters from spec_decode_num_drafts_total (verification steps),
// num_draft_tokens_total and num_accepted_tokens_total;
// tokens_predicted_total as FinishedTokens, not the generation counter:
// llama-server adds a request's tokens when it finishes (as spec_decode_*
// too), so its rate over a window of long streams is not the server's
// throughput, but its change between two scrapes is the predicted_n of the
// requests that finished between them.
func ParseMetrics(r io.Reader, modelName string) (promread.Snapshot, error) {
	fams, err := promread.Families(r)
	if err != nil {
		return promread.Snapshot{}, err
	}
	var s promread.Snapshot
	val := func(name string) (float64, bool) {
		f, ok := fams[name]
		if !ok {
			return 0, false
		}
		return promread.SumFamily(f, modelName)
	}
	var okR, okW bool
	s.Running, okR = val("llamacpp:requests_processing")
	s.Waiting, okW = val("llamacpp:requests_deferred")
	s.HasRequests = okR && okW
	evaluated, okE := val("llamacpp:prompt_tokens_total")
	cached, okC := val("llamacpp:prompt_tokens_cached_total")
	if okE && okC {
		s.PrefixCacheQueries, s.PrefixCacheHits, s.HasPrefixCache = evaluated+cached, cached, true
	}
	s.FinishedTokens, s.HasFinishedTokens = val("llamacpp:tokens_predicted_total")
	drafts, okD := val("llamacpp:spec_decode_num_drafts_total")
	drafted, okT := val("llamacpp:spec_decode_num_draft_tokens_total")
	accepted, okA := val("llamacpp:spec_decode_num_accepted_tokens_total")
	if okD && okT && okA {
		s.SpeculativeDrafts, s.SpeculativeDraftTokens, s.SpeculativeAcceptedTokens, s.HasSpeculative = drafts, drafted, accepted, true
	}
	return s, nil
}
