package sim

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Histogram bucket bounds of SGLang's TokenizerMetricsCollector
// (metrics/collector.py @00ae9c15).
var (
	sglangTTFTBuckets = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400}
	sglangITLBuckets  = []float64{0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060,
		0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1.000, 2.000, 4.000, 6.000, 8.000}
	sglangE2EBuckets = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400}
)

// sglangGauges are one scheduler's gauges as SGLang last set them: at a
// prefill batch or a decode log, never in between (docs/sglang.md#metric-cadence).
type sglangGauges struct {
	set              bool // log_stats has run once: the series exist
	numRunning       int
	numQueue         int
	numUsedTokens    int
	tokenUsage       float64
	genThroughput    float64
	cacheHitRate     float64
	maxTotalTokens   int
	specAcceptLength float64
	specAcceptRate   float64
}

// sglangScheduler is one DP rank's scheduler-side reporting: it is told
// every engine iteration (engineParams.observe, on the loop's goroutine)
// and updates its gauges and writes its batch lines only where SGLang's
// scheduler does (report_prefill_stats at every prefill batch,
// report_decode_stats every decode_log_interval decode steps).
type sglangScheduler struct {
	rank     int
	interval int // --decode-log-interval
	maxTotal int // max_total_num_tokens of this rank
	drafts   int // draft tokens per verify step (speculative_num_draft_tokens − 1); 0 = none
	log      *sglangLogger

	// Owned by the engine's loop.
	forwardCtDecode       int
	lastDecodeLog         time.Duration
	lastPrefillLog        time.Duration
	genAtLog              int64
	retractedSeen         int64 // the engine's preemptions as last copied to retracted
	draftsAtLog, accAtLog int64
	started               bool

	mu sync.Mutex
	g  sglangGauges
	// retracted counts the requests the engine retracted (its
	// preemptions), as increment_retracted_reqs does at each retraction,
	// not at the logs: sglang:num_retracted_requests_total.
	retracted int64
	// cumulative speculative counters for /server_info's avg_spec_accept_length
	cumDrafts, cumAccepted int64
	lastGenThroughput      float64
}

func (s *sglangScheduler) usage(held int) float64 {
	if s.maxTotal == 0 {
		return 0
	}
	return float64(held) / float64(s.maxTotal)
}

// observe is the engine's observe hook. The retraction counter follows
// the engine's preemptions at every iteration: a retraction happens as a
// decode step reserves its tokens, before the step is reported.
func (s *sglangScheduler) observe(ev stepEvent) {
	if n := ev.st.preemptions; n != s.retractedSeen {
		s.retractedSeen = n
		s.mu.Lock()
		s.retracted = n
		s.mu.Unlock()
	}
	if !ev.decode {
		s.prefill(ev)
		return
	}
	s.forwardCtDecode++
	if s.forwardCtDecode%s.interval != 0 {
		return
	}
	s.decodeLog(ev)
}

// prefill is report_prefill_stats: the running count is the batch already
// decoding (the new sequences not yet in it), the hit rate this batch's.
func (s *sglangScheduler) prefill(ev stepEvent) {
	dt := (ev.now - s.lastPrefillLog).Seconds()
	s.lastPrefillLog = ev.now
	inputTPS := 0.0
	if dt > 0 {
		inputTPS = float64(ev.newTokens) / dt
	}
	hit := 0.0
	if t := ev.newTokens + ev.cachedTokens; t > 0 {
		hit = float64(ev.cachedTokens) / float64(t)
	}
	running := ev.running - ev.newSeqs
	s.log.rank(s.rank, "Prefill batch, #new-seq: %d, #new-token: %d, #cached-token: %d, token usage: %.2f, #running-req: %d, #queue-req: %d, #pending-token: 0, cuda graph: False, input throughput (token/s): %.2f",
		ev.newSeqs, ev.newTokens, ev.cachedTokens, s.usage(ev.heldTokens), running, ev.waiting, inputTPS)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.g.set = true
	s.g.numRunning, s.g.numQueue, s.g.numUsedTokens = running, ev.waiting, ev.heldTokens
	s.g.tokenUsage, s.g.cacheHitRate, s.g.maxTotalTokens = s.usage(ev.heldTokens), hit, s.maxTotal
}

// decodeLog is report_decode_stats at a decode_log_interval step.
func (s *sglangScheduler) decodeLog(ev stepEvent) {
	dt := (ev.now - s.lastDecodeLog).Seconds()
	s.lastDecodeLog = ev.now
	gen := ev.st.generationTokens - s.genAtLog
	s.genAtLog = ev.st.generationTokens
	tps := 0.0
	if dt > 0 {
		tps = float64(gen) / dt
	}
	spec := ""
	length, rate := 0.0, 0.0
	if s.drafts > 0 {
		d, a := ev.st.drafts-s.draftsAtLog, ev.st.acceptedTokens-s.accAtLog
		s.draftsAtLog, s.accAtLog = ev.st.drafts, ev.st.acceptedTokens
		if d > 0 {
			length = float64(a+d) / float64(d)
			rate = float64(a) / float64(d*int64(s.drafts))
		}
		spec = fmt.Sprintf("accept len: %.2f, accept rate: %.2f, ", length, rate)
	}
	s.log.rank(s.rank, "Decode batch, #running-req: %d, #token: %d, token usage: %.2f, %scuda graph: True, gen throughput (token/s): %.2f, #queue-req: %d",
		ev.batch, ev.heldTokens, s.usage(ev.heldTokens), spec, tps, ev.waiting)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.g.set = true
	s.g.numRunning, s.g.numQueue, s.g.numUsedTokens = ev.batch, ev.waiting, ev.heldTokens
	s.g.tokenUsage, s.g.genThroughput, s.g.maxTotalTokens = s.usage(ev.heldTokens), tps, s.maxTotal
	s.g.cacheHitRate = 0 // report_decode_stats resets it
	s.g.specAcceptLength, s.g.specAcceptRate = length, rate
	s.lastGenThroughput = tps
	if s.drafts > 0 {
		s.cumDrafts, s.cumAccepted = ev.st.drafts, ev.st.acceptedTokens
	}
}

// gauges returns the gauges as last set.
func (s *sglangScheduler) gauges() sglangGauges {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.g
}

// sglangHistogram is a Prometheus histogram SGLang's way: bucket counts
// can grow by more than one per observation (observe_inter_token_latency).
type sglangHistogram struct {
	bounds []float64
	counts []float64 // per bucket, the last for +Inf
	sum    float64
}

func newSGLangHistogram(bounds []float64) *sglangHistogram {
	return &sglangHistogram{bounds: bounds, counts: make([]float64, len(bounds)+1)}
}

// observeN counts n observations of v and adds sum to the sum.
func (h *sglangHistogram) observeN(v, sum float64, n int) {
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i] += float64(n)
	h.sum += sum
}

// sglangTokenizerMetrics are the TokenizerManager's counters and
// histograms: fed by the HTTP side as outputs arrive and requests finish.
type sglangTokenizerMetrics struct {
	mu                      sync.Mutex
	seen                    bool // a request finished or was aborted: the counter series exist
	promptTokens, genTokens float64
	cachedTokens            float64
	requests, aborted       float64
	ttft, itl, e2e          *sglangHistogram
}

func newSGLangTokenizerMetrics() *sglangTokenizerMetrics {
	return &sglangTokenizerMetrics{ttft: newSGLangHistogram(sglangTTFTBuckets), itl: newSGLangHistogram(sglangITLBuckets),
		e2e: newSGLangHistogram(sglangE2EBuckets)}
}

// firstToken observes a request's time to first token.
func (m *sglangTokenizerMetrics) firstToken(d time.Duration) {
	m.mu.Lock()
	m.ttft.observeN(d.Seconds(), d.Seconds(), 1)
	m.mu.Unlock()
}

// tokens observes one output batch of n tokens interval after the last.
func (m *sglangTokenizerMetrics) tokens(interval time.Duration, n int) {
	if n <= 0 {
		return
	}
	m.mu.Lock()
	m.itl.observeN(interval.Seconds()/float64(n), interval.Seconds(), n)
	m.mu.Unlock()
}

// finished is observe_one_finished_request: the token counters grow only
// here, when a request ends.
func (m *sglangTokenizerMetrics) finished(prompt, generated, cached int, e2e time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen = true
	m.promptTokens += float64(prompt)
	m.genTokens += float64(generated)
	m.cachedTokens += float64(cached)
	m.requests++
	m.e2e.observeN(e2e.Seconds(), e2e.Seconds(), 1)
}

// abortedOne is observe_one_aborted_request.
func (m *sglangTokenizerMetrics) abortedOne() {
	m.mu.Lock()
	m.aborted++
	m.mu.Unlock()
}

// writeSGLangMetrics renders /metrics in the Prometheus text format with
// SGLang's names and labels: the scheduler gauges once per DP rank
// (model_name, engine_type, tp_rank, pp_rank, moe_ep_rank, and dp_rank
// under DP), the tokenizer's counters and histograms with model_name. A
// gauge no scheduler has set yet has no samples, as prometheus_client
// writes a labelled metric never given its labels. Written by hand, as
// writeMetrics, so the names and label sets are exactly SGLang's.
func writeSGLangMetrics(b *bytes.Buffer, model string, scheds []*sglangScheduler, tm *sglangTokenizerMetrics) {
	gs := make([]sglangGauges, len(scheds))
	labels := make([]string, len(scheds))
	for i, s := range scheds {
		gs[i] = s.gauges()
		labels[i] = fmt.Sprintf(`engine_type="unified",model_name=%q,moe_ep_rank="0",pp_rank="0",tp_rank="0"`, model)
		if len(scheds) > 1 {
			labels[i] += `,dp_rank="` + strconv.Itoa(s.rank) + `"`
		}
	}
	gauge := func(name, help string, v func(g *sglangGauges) float64) {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
		for i := range gs {
			if gs[i].set {
				fmt.Fprintf(b, "%s{%s} %s\n", name, labels[i], fmtFloat(v(&gs[i])))
			}
		}
	}
	gauge("sglang:num_running_reqs", "The number of running requests.", func(g *sglangGauges) float64 { return float64(g.numRunning) })
	gauge("sglang:num_used_tokens", "The number of used tokens.", func(g *sglangGauges) float64 { return float64(g.numUsedTokens) })
	gauge("sglang:token_usage", "The token usage.", func(g *sglangGauges) float64 { return g.tokenUsage })
	gauge("sglang:gen_throughput", "The generation throughput (token/s).", func(g *sglangGauges) float64 { return g.genThroughput })
	gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue.", func(g *sglangGauges) float64 { return float64(g.numQueue) })
	gauge("sglang:num_grammar_queue_reqs", "The number of requests in the grammar waiting queue.", func(*sglangGauges) float64 { return 0 })
	gauge("sglang:cache_hit_rate", "The prefix cache hit rate.", func(g *sglangGauges) float64 { return g.cacheHitRate })
	gauge("sglang:max_total_num_tokens", "Maximum total number of tokens in the KV cache pool.", func(g *sglangGauges) float64 { return float64(g.maxTotalTokens) })
	gauge("sglang:spec_accept_length", "The average acceptance length of speculative decoding.", func(g *sglangGauges) float64 { return g.specAcceptLength })
	gauge("sglang:spec_accept_rate", "The average acceptance rate of speculative decoding (`accepted tokens / total draft tokens` in batch).", func(g *sglangGauges) float64 { return g.specAcceptRate })
	// The retraction counter (metrics_collector.py): a labelled
	// prometheus_client counter, so a rank's series appears at its first
	// retraction.
	fmt.Fprintf(b, "# HELP sglang:num_retracted_requests_total Total number of retracted requests.\n# TYPE sglang:num_retracted_requests_total counter\n")
	for i, s := range scheds {
		s.mu.Lock()
		n := s.retracted
		s.mu.Unlock()
		if n > 0 {
			fmt.Fprintf(b, "sglang:num_retracted_requests_total{%s} %s\n", labels[i], fmtFloat(float64(n)))
		}
	}

	tm.mu.Lock()
	defer tm.mu.Unlock()
	tl := fmt.Sprintf("model_name=%q", model)
	counter := func(name, help string, v float64, present bool) {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s counter\n", name, help, name)
		if present {
			fmt.Fprintf(b, "%s{%s} %s\n", name, tl, fmtFloat(v))
		}
	}
	counter("sglang:prompt_tokens_total", "Number of prefill tokens processed.", tm.promptTokens, tm.seen)
	counter("sglang:generation_tokens_total", "Number of generation tokens processed.", tm.genTokens, tm.seen)
	counter("sglang:cached_tokens_total", "Number of cached prompt tokens.", tm.cachedTokens, tm.cachedTokens > 0)
	counter("sglang:num_requests_total", "Number of requests processed.", tm.requests, tm.seen)
	counter("sglang:num_aborted_requests_total", "Number of requests aborted.", tm.aborted, tm.aborted > 0)
	hist := func(name, help string, h *sglangHistogram) {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
		if h.sum == 0 && !slices.ContainsFunc(h.counts, func(c float64) bool { return c > 0 }) {
			return // never observed: no series, as prometheus_client writes it
		}
		var cum float64
		for i, le := range h.bounds {
			cum += h.counts[i]
			fmt.Fprintf(b, "%s_bucket{%s,le=\"%s\"} %s\n", name, tl, fmtFloat(le), fmtFloat(cum))
		}
		cum += h.counts[len(h.bounds)]
		fmt.Fprintf(b, "%s_bucket{%s,le=\"+Inf\"} %s\n%s_count{%s} %s\n%s_sum{%s} %s\n", name, tl, fmtFloat(cum),
			name, tl, fmtFloat(cum), name, tl, fmtFloat(h.sum))
	}
	hist("sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.", tm.ttft)
	hist("sglang:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", tm.itl)
	hist("sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", tm.e2e)
}

// avgAcceptLength is /server_info's avg_spec_accept_length of a rank (NaN
// when it never speculated).
func (s *sglangScheduler) avgAcceptLength() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cumDrafts == 0 {
		return math.NaN()
	}
	return float64(s.cumAccepted+s.cumDrafts) / float64(s.cumDrafts)
}
