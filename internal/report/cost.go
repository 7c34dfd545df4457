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

// searchGPUTime is the GPU time search s took on basis b, in words:
// "0.042 GPU-hours (76.0 s × 2 GPUs)"; for a CPU server "none: a CPU
// server (76.0 s of server time)"; "" when unknown.
func searchGPUTime(s *result.Search, b costBasis) string {
	switch {
	case !b.Known || s.ElapsedS <= 0:
		return ""
	case b.CPU:
		return fmt.Sprintf("none: a CPU server, no GPU found (%s s of server time)", numfmt.Fixed(s.ElapsedS, 1))
	}
	return fmt.Sprintf("%.3f GPU-hours (%s s × %d GPU%s)", s.ElapsedS*float64(b.GPUs)/3600, numfmt.Fixed(s.ElapsedS, 1), b.GPUs, plural(b.GPUs, "", "s"))
}

// answerCost is what a million output tokens cost at s's answer on basis
// b: "$1.94 per million output tokens at 6.2 req/s (2 GPUs × $3.50 an
// hour ÷ 1,000.0 output tok/s)", or why there is no figure; "" without a
// price.
func answerCost(s *result.Search, b costBasis) string {
	if b.Price == nil {
		return ""
	}
	at := searchAnswerPoint(s)
	tps, ok := answerOutputTPS(s)
	switch {
	case b.CPU:
		return "none: a CPU server has no GPU-hours to price"
	case !b.Known || b.GPUs == 0:
		return "unknown: the run recorded no GPU count (gpu_time)"
	case !s.Found:
		return "none: no answer to price"
	case !ok:
		return fmt.Sprintf("unknown: the probe at %s recorded no output tokens per second", at)
	}
	return fmt.Sprintf("%s per million output tokens at %s (%d GPU%s × %s an hour ÷ %s output tok/s)",
		dollars(perMillion(*b.Price, b.GPUs, tps)), at, b.GPUs, plural(b.GPUs, "", "s"), dollars(*b.Price), numfmt.Fixed(tps, 1))
}

// searchAnswerPoint names s's answer: "6.2 req/s" or "concurrency 24".
func searchAnswerPoint(s *result.Search) string {
	if s.IsRate() {
		return rateText(s.Rate) + " req/s"
	}
	return fmt.Sprintf("concurrency %d", s.Concurrency)
}

// costLines are the lines that price search s of res, beside the
// baseline's same search when the comparison kept it: "GPU time: …",
// "Cost: …", "Baseline cost: …" and the change.
func costLines(res *result.Results, s *result.Search) []string {
	b := runBasis(res)
	var out []string
	if g := searchGPUTime(s, b); g != "" {
		out = append(out, "GPU time of the search: "+g)
	}
	cost := answerCost(s, b)
	if cost != "" {
		out = append(out, "Cost at the answer: "+cost)
	}
	bs := baselineSearch(res, s.Name)
	if bs == nil {
		return out
	}
	bb, own := baselineBasis(bs, b.Price)
	bcost := answerCost(&bs.Search, bb)
	if bcost == "" {
		return out
	}
	if !own {
		bcost += ", at this run's price (the baseline recorded none)"
	}
	out = append(out, "Baseline's cost at its answer: "+bcost)
	now, okNow := answerOutputTPS(s)
	was, okWas := answerOutputTPS(&bs.Search)
	if okNow && okWas && b.Known && bb.Known && !b.CPU && !bb.CPU && b.GPUs > 0 && bb.GPUs > 0 {
		c, cb := perMillion(*b.Price, b.GPUs, now), perMillion(*bb.Price, bb.GPUs, was)
		out = append(out, fmt.Sprintf("Cost change: %+.1f%% per million output tokens (%s now, %s in the baseline)", (c/cb-1)*100, dollars(c), dollars(cb)))
	}
	return out
}

// baselineSearch is the baseline's search called name that res's
// comparison kept; nil without one.
func baselineSearch(res *result.Results, name string) *result.BaselineSearch {
	if res.Comparison == nil {
		return nil
	}
	for i := range res.Comparison.Searches {
		if res.Comparison.Searches[i].Search.Name == name {
			return &res.Comparison.Searches[i]
		}
	}
	return nil
}

// SearchCost is one search's cost at its answer, in words (answerCost).
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
		if c := answerCost(&res.Search[i], b); c != "" {
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
	c, ok1 := priced(sNow, bNow)
	cb, ok2 := priced(sBase, bBase)
	if !ok1 || !ok2 {
		return ""
	}
	return fmt.Sprintf("%s per million output tokens at the answer, %s in the baseline (%+.1f%%)", dollars(c), dollars(cb), (c/cb-1)*100)
}

// priced is what a million output tokens cost at s's answer on basis b;
// ok is false when it cannot be priced.
func priced(s *result.Search, b costBasis) (float64, bool) {
	tps, ok := answerOutputTPS(s)
	if b.Price == nil || !b.Known || b.CPU || b.GPUs == 0 || !ok {
		return 0, false
	}
	return perMillion(*b.Price, b.GPUs, tps), true
}

// baselineSearchOf is the baseline's search called name, nil without one.
func baselineSearchOf(res *result.Results, name string) *result.Search {
	if bs := baselineSearch(res, name); bs != nil {
		return &bs.Search
	}
	return nil
}
