package report

import (
	"fmt"
	"math"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// This file prices a search's answer (docs/method.md#cost): the GPU time
// the search took and, with server.price_per_gpu_hour, the dollars a
// million output tokens cost at the answer's operating point.

// costBasis is what prices one run's search: the GPUs its server
// occupied, whether it ran on CPUs, and its price per GPU-hour.
type costBasis struct {
	GPUs  int
	CPU   bool
	Price *float64
	// Known is false when the run recorded no GPU time (results written
	// before gpu_time), so neither its GPUs nor its CPU are known.
	Known bool
}

// runBasis is res's cost basis.
func runBasis(res *result.Results) costBasis {
	b := costBasis{Price: res.Server.PricePerGPUHour}
	if g := res.GPUTime; g != nil {
		b.GPUs, b.CPU, b.Known = g.GPUs, g.CPU, true
	}
	return b
}

// baselineBasis is the baseline search's cost basis; without a price of
// its own it takes this run's (fallback), and says so by own = false.
func baselineBasis(bs *result.BaselineSearch, fallback *float64) (b costBasis, own bool) {
	b = costBasis{GPUs: bs.GPUs, CPU: bs.CPU, Price: bs.PricePerGPUHour, Known: bs.GPUs > 0 || bs.CPU}
	if b.Price == nil && fallback != nil {
		return costBasis{GPUs: b.GPUs, CPU: b.CPU, Price: fallback, Known: b.Known}, false
	}
	return b, true
}

// answerOutputTPS is the output tokens per second of the probe at s's
// answer: a rate search's probe's over all its windows (its last
// window's traffic cell's output_tps in results written before that), a
// concurrency search's decode cell's total_tps; ok is false when s has no
// answer or its probe recorded none.
func answerOutputTPS(s *result.Search) (float64, bool) {
	if !s.Found {
		return 0, false
	}
	if s.IsRate() {
		p, ok := s.RateProbe(s.Rate)
		if ok && p.OutputTPS > 0 {
			return p.OutputTPS, true
		}
		if !ok || p.Traffic == nil {
			return 0, false
		}
		v, ok := p.Traffic.Value(metric.Must(vocab.PhaseTraffic, metric.OutputTPS))
		return v, ok && v > 0
	}
	p, ok := s.Probe(s.Concurrency)
	if !ok || !p.Cell.Status.Measured() || p.Cell.TotalTPS <= 0 {
		return 0, false
	}
	return p.Cell.TotalTPS, true
}

// perMillion is the dollars a million output tokens cost at tps output
// tokens per second on gpus GPUs at price an hour each.
func perMillion(price float64, gpus int, tps float64) float64 {
	return price * float64(gpus) / 3600 / tps * 1e6
}

// dollars is an amount with at least two decimals and three significant
// digits: "$1.94", "$0.0123", "$1,250.00".
func dollars(v float64) string {
	decimals := 2
	if v > 0 && v < 1 {
		decimals = max(2, 2-int(math.Floor(math.Log10(v))))
	}
	return "$" + numfmt.Fixed(v, decimals)
}

// searchCost is what prices a search (docs/method.md#cost), as figures
// computed once: the GPU time it took, and its answer priced beside the
// baseline's same search. lines words it.
type searchCost struct {
	basis costBasis
	// elapsedS is the search's server time; gpuHours the GPU time that
	// is on basis's GPUs.
	elapsedS, gpuHours float64
	answer             answerPrice
	// base is the baseline's search priced at its answer; nil without
	// the baseline's same search. baseOwnPrice is false when it is
	// priced at this run's price (the baseline recorded none).
	base         *answerPrice
	baseOwnPrice bool
	// change is the cost per million output tokens now relative to the
	// baseline's, less one (0.12: 12% more); hasChange is false unless
	// both answers are priced.
	change    float64
	hasChange bool
}

// answerPrice is one run's search priced at its answer, as figures: the
// search (its answer), the basis, the output tokens per second at the
// answer and what a million of them cost. text words it.
type answerPrice struct {
	search *result.Search
	basis  costBasis
	// tps is the output tokens per second at the answer; hasTPS is false
	// when there is no answer or its probe recorded none.
	tps    float64
	hasTPS bool
	// perMillion is the dollars a million output tokens cost at the
	// answer; priced is false when it cannot be priced (no price, no
	// GPUs, a CPU server, no output tokens per second).
	perMillion float64
	priced     bool
}

// newSearchCost prices search s of res (bs: the baseline's same search
// that res's comparison kept, or nil).
func newSearchCost(res *result.Results, s *result.Search, bs *result.BaselineSearch) searchCost {
	b := runBasis(res)
	c := searchCost{basis: b, elapsedS: s.ElapsedS, gpuHours: s.ElapsedS * float64(b.GPUs) / 3600}
	if bs != nil {
		bb, own := baselineBasis(bs, b.Price)
		base := newAnswerPrice(&bs.Search, bb)
		c.base, c.baseOwnPrice = &base, own
	}
	c.answer = newAnswerPrice(s, b)
	if c.base != nil {
		c.change, c.hasChange = costChange(c.answer, *c.base)
	}
	return c
}

// newAnswerPrice prices search s at its answer on basis b.
func newAnswerPrice(s *result.Search, b costBasis) answerPrice {
	p := answerPrice{search: s, basis: b}
	p.tps, p.hasTPS = answerOutputTPS(s)
	if b.Price != nil && b.Known && !b.CPU && b.GPUs != 0 && p.hasTPS {
		p.perMillion, p.priced = perMillion(*b.Price, b.GPUs, p.tps), true
	}
	return p
}

// costChange is the cost per million output tokens at now's answer
// relative to base's, less one; ok is false unless both are priced.
func costChange(now, base answerPrice) (change float64, ok bool) {
	if !now.priced || !base.priced {
		return 0, false
	}
	return now.perMillion/base.perMillion - 1, true
}

// lines are the lines that price the search, beside the baseline's same
// search when the comparison kept it: "GPU time: …", "Cost: …",
// "Baseline cost: …" and the change.
func (c searchCost) lines() []string {
	var out []string
	if g := c.gpuTimeText(); g != "" {
		out = append(out, "GPU time of the search: "+g)
	}
	if cost := c.answer.text(); cost != "" {
		out = append(out, "Cost at the answer: "+cost)
	}
	if c.base == nil {
		return out
	}
	bcost := c.base.text()
	if bcost == "" {
		return out
	}
	if !c.baseOwnPrice {
		bcost += ", at this run's price (the baseline recorded none)"
	}
	out = append(out, "Baseline's cost at its answer: "+bcost)
	if c.hasChange {
		out = append(out, fmt.Sprintf("Cost change: %+.1f%% per million output tokens (%s now, %s in the baseline)",
			c.change*100, dollars(c.answer.perMillion), dollars(c.base.perMillion)))
	}
	return out
}

// gpuTimeText is the GPU time the search took, in words: "0.042
// GPU-hours (76.0 s × 2 GPUs)"; for a CPU server "none: a CPU server
// (76.0 s of server time)"; "" when unknown.
func (c searchCost) gpuTimeText() string {
	switch {
	case !c.basis.Known || c.elapsedS <= 0:
		return ""
	case c.basis.CPU:
		return fmt.Sprintf("none: a CPU server, no GPU found (%s s of server time)", numfmt.Fixed(c.elapsedS, 1))
	}
	return fmt.Sprintf("%.3f GPU-hours (%s s × %d GPU%s)", c.gpuHours, numfmt.Fixed(c.elapsedS, 1), c.basis.GPUs, plural(c.basis.GPUs, "", "s"))
}

// text is what a million output tokens cost at the answer: "$1.94 per
// million output tokens at 6.2 req/s (2 GPUs × $3.50 an hour ÷ 1,000.0
// output tok/s)", or why there is no figure; "" without a price.
func (p answerPrice) text() string {
	b := p.basis
	if b.Price == nil {
		return ""
	}
	at := searchAnswerPoint(p.search)
	switch {
	case b.CPU:
		return "none: a CPU server has no GPU-hours to price"
	case !b.Known || b.GPUs == 0:
		return "unknown: the run recorded no GPU count (gpu_time)"
	case !p.search.Found:
		return "none: no answer to price"
	case !p.hasTPS:
		return fmt.Sprintf("unknown: the probe at %s recorded no output tokens per second", at)
	}
	return fmt.Sprintf("%s per million output tokens at %s (%d GPU%s × %s an hour ÷ %s output tok/s)",
		dollars(p.perMillion), at, b.GPUs, plural(b.GPUs, "", "s"), dollars(*b.Price), numfmt.Fixed(p.tps, 1))
}

// searchAnswerPoint names s's answer: "6.2 req/s" or "concurrency 24".
func searchAnswerPoint(s *result.Search) string {
	if s.IsRate() {
		return rateText(s.Rate) + " req/s"
	}
	return fmt.Sprintf("concurrency %d", s.Concurrency)
}

// SearchCost is one search's cost at its answer, in words
// (answerPrice.text).
type SearchCost struct {
	Search string
	Cost   string
}

// SearchCosts are the costs at the answers of res's searches, for the
// console's end-of-run lines; none without server.price_per_gpu_hour.
func SearchCosts(res *result.Results) []SearchCost {
	var out []SearchCost
	b := runBasis(res)
	for i := range res.Search {
		if c := newAnswerPrice(&res.Search[i], b).text(); c != "" {
			out = append(out, SearchCost{Search: res.Search[i].Name, Cost: c})
		}
	}
	return out
}

// CostAtAnswers compares the costs of search name at both runs' answers
// (docs/method.md#cost): "$0.810 per million output tokens at the
// answer, $0.572 in the baseline (+41.7%)"; "" unless both can be
// priced (a price, GPUs, both answers with output tokens per second). A
// baseline without a price is priced at this run's.
func CostAtAnswers(base, now *result.Results, name string) string {
	sNow, ok1 := now.SearchByName(name)
	sBase, ok2 := base.SearchByName(name)
	if !ok1 || !ok2 {
		return ""
	}
	bNow, bBase := runBasis(now), runBasis(base)
	if bBase.Price == nil {
		bBase.Price = bNow.Price
	}
	c, cb := newAnswerPrice(sNow, bNow), newAnswerPrice(sBase, bBase)
	change, ok := costChange(c, cb)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s per million output tokens at the answer, %s in the baseline (%+.1f%%)",
		dollars(c.perMillion), dollars(cb.perMillion), change*100)
}
