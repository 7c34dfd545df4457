package measure

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
	"github.com/slogate/slogate/internal/workload"
)

// This file records what determines a traffic cell's requests and arrival
// times (its schedule: docs/method.md#traffic-schedules) and judges the
// client's lag behind it (docs/method.md#client-lag).

// trafficSchedule is cell ref's schedule: traffic block t's arrivals and
// window, workload opts (named name; "" for the unnamed workload, whose
// prompts are the context's decode prompts) sent on endpoint path with
// maxOutput tokens unless the workload sets its own, and the SHA-256 of
// the dataset file its prompts came from ("" without one). Sealed.
func trafficSchedule(ref vocab.CellRef, t *spec.Traffic, name string, opts workload.Options, path string, maxOutput int, datasetSHA string) *result.Schedule {
	s := &result.Schedule{Seed: t.Seed, Arrivals: t.Arrivals, Burstiness: t.Burstiness, Rate: ref.Rate, Concurrency: ref.Concurrency,
		WarmUpS: t.WarmUp.Seconds(), WindowS: t.Duration.Seconds(), Workload: name,
		Settings: scheduleSettings(opts, name != "", ref.Context, maxOutput, path), DatasetSHA256: datasetSHA}
	return s.Seal()
}

// scheduleSettings is what of a workload decides its requests, by setting
// name, as text without spaces: the prompt kind, the seed and the article's document and
// instruction (by SHA-256), the sampling fields, the endpoint, the
// context and max_output where the workload does not set its lengths, and
// a named workload's lengths, prefixes, turns and dataset filter.
func scheduleSettings(opts workload.Options, named bool, context, maxOutput int, path string) map[string]string {
	rec := requests.NewBuilder(nil, opts).Record() // asks the tokenizer nothing
	s := map[string]string{
		"prompt":   rec.Prompt,
		"seed":     strconv.FormatUint(opts.Seed, 10),
		"distinct": strconv.FormatBool(opts.Distinct),
		"endpoint": path,
		"context":  strconv.Itoa(context),
	}
	if opts.Prompt == workload.DatasetPrompt {
		rec.DocumentSHA256, rec.InstructionSHA256 = "", "" // a dataset's prompts use neither
	}
	text := func(key string, v any, empty bool) {
		if empty {
			return
		}
		b, err := json.Marshal(v) // maps marshal sorted by key
		if err != nil {
			panic(fmt.Errorf("measure: a workload setting does not marshal: %w", err)) // decoded from JSON-compatible values
		}
		s[key] = string(b)
	}
	text("sampling", rec.Sampling, len(rec.Sampling) == 0)
	text("logit_bias", rec.LogitBias, len(rec.LogitBias) == 0)
	text("chat_template_kwargs", rec.ChatTemplateKwargs, len(rec.ChatTemplateKwargs) == 0)
	if rec.DocumentSHA256 != "" {
		s["document_sha256"], s["instruction_sha256"] = rec.DocumentSHA256, rec.InstructionSHA256
	}
	if !named {
		s["max_output"] = strconv.Itoa(maxOutput)
		return s
	}
	if opts.InputTokens.IsSet() {
		s["input_tokens"] = compact(opts.InputTokens.String())
	}
	switch {
	case opts.OutputTokens.IsSet():
		s["output_tokens"] = compact(opts.OutputTokens.String())
	case opts.Prompt != workload.DatasetPrompt:
		s["max_output"] = strconv.Itoa(maxOutput) // generated prompts' output length
	}
	s["ignore_eos"] = strconv.FormatBool(opts.IgnoreEOS)
	if opts.Prefix.IsSet() {
		s["prefix"] = fmt.Sprintf("{groups=%d,tokens=%d}", opts.Prefix.Groups, opts.Prefix.Tokens)
	}
	if opts.Prefix.IsDial() {
		s["prefix"] = fmt.Sprintf("{hit_rate=%s,block=%d}", strconv.FormatFloat(opts.Prefix.HitRate, 'g', -1, 64), opts.Prefix.Block)
	}
	if opts.Turns > 0 {
		s["turns"] = strconv.Itoa(opts.Turns)
	}
	if opts.Prompt == workload.DatasetPrompt {
		f := opts.Filter
		if f == (workload.Filter{}) {
			f = workload.DefaultFilter
		}
		s["dataset_format"] = opts.DatasetFormat
		s["filter"] = fmt.Sprintf("{min_prompt=%d,max_prompt=%d,min_output=%d,max_total=%d}", f.MinPromptTokens, f.MaxPromptTokens, f.MinOutputTokens, f.MaxTotalTokens)
	}
	return s
}

// compact is a setting's text without spaces ("{min=100,max=900}"), so
// that "NAME A vs B" (result.ScheduleChange.String) reads unambiguously.
func compact(s string) string { return strings.ReplaceAll(s, " ", "") }

// The client-lag bound (docs/method.md#client-lag): a window whose
// arrivals' client lag has a median above the larger of lagFloor and
// lagGapShare of the mean gap (the client did not keep the rate: its lag
// grew), or any lag above lagMax (it stopped), was not driven as
// scheduled. The 99th percentile is recorded, not judged: a loaded
// machine's scheduler delays a client that keeps up by tens of ms now and
// then, and it catches up; at load 42 on 2 cores the median itself was
// 16-19 ms, hence the floor.
const (
	lagFloor    = 50 * time.Millisecond
	lagGapShare = 0.10
	lagMax      = time.Second
)

// lagFigures are a window's client-lag figures, in ms.
type lagFigures struct {
	p50, p99, max float64
	// bound is the median's bound, meanGap the schedule's mean gap (1/rate).
	bound, meanGap float64
	arrivals       int
}

// clientLags is the client's lag (ms) of each arrival launched in the
// window [windowStart, windowEnd): its launch less when it could have been
// launched (its planned time, or later when the outstanding cap held it or
// an arrival before it). A closed loop's requests and a conversation's
// later turns have no planned time and no lag.
func clientLags(reqs []trafficRequest, windowStart, windowEnd int64) []float64 {
	var lags []float64
	for _, q := range reqs {
		if q.planned < 0 || q.launch < windowStart || q.launch >= windowEnd {
			continue
		}
		lags = append(lags, float64(max(q.launch-q.ready, 0))/1e6)
	}
	return lags
}

// judgeLag computes lags' figures at rate and reports whether the client
// fell behind its schedule beyond the bound. No lag (a closed loop, a
// window without arrivals) is never behind.
func judgeLag(lags []float64, rate float64) (f lagFigures, behind bool) {
	if len(lags) == 0 || rate <= 0 {
		return lagFigures{}, false
	}
	f.meanGap = 1000 / rate
	f.bound = max(float64(lagFloor)/1e6, lagGapShare*f.meanGap)
	slices.Sort(lags)
	f.p50, f.p99, f.max = percentile(lags, 50), percentile(lags, 99), lags[len(lags)-1]
	f.arrivals = len(lags)
	return f, f.p50 > f.bound || f.max > float64(lagMax)/1e6
}

// reason is the reason a lagging cell carries: the figures, and that the
// rate could not be driven from this machine (not a slow server): its
// median over the bound, else a lag over lagMax.
func (f lagFigures) reason() result.CellReason {
	figures := map[string]float64{result.FigLagP50Ms: f.p50, result.FigLagP99Ms: f.p99, result.FigLagMaxMs: f.max, result.FigArrivals: float64(f.arrivals)}
	if f.p50 <= f.bound {
		figures[result.FigLagMostS] = lagMax.Seconds()
		return result.CellReason{Code: result.ReasonClientLagMax, Figures: figures}
	}
	figures[result.FigLagBoundMs], figures[result.FigLagFloorS] = f.bound, lagFloor.Seconds()
	figures[result.FigLagGapShare], figures[result.FigMeanGapMs] = lagGapShare, f.meanGap
	return result.CellReason{Code: result.ReasonClientLagMedian, Figures: figures}
}

// warning is the lagging cell's typed warning, with its figures.
func (f lagFigures) warning() warning.Warning {
	return warning.New(warning.ClientLag,
		fmt.Sprintf("the client fell behind its schedule (median lag %s ms, p99 %s ms, max %s ms)", numfmt.Lag(f.p50), numfmt.Lag(f.p99), numfmt.Lag(f.max)),
		"drive this rate from a faster or less loaded machine, or measure a lower rate",
		map[string]float64{warning.FigLagP50Ms: Round(f.p50, 3), warning.FigLagP99Ms: Round(f.p99, 3), warning.FigLagMaxMs: Round(f.max, 3), warning.FigLagBoundMs: Round(f.bound, 3),
			warning.FigMeanGapMs: Round(f.meanGap, 3), warning.FigArrivals: float64(f.arrivals)})
}

// clientStallEnv names the test hook that starves the client: the traffic
// dispatcher sleeps this long (a Go duration) after each arrival's timer
// fires, before launching it, so that a test can make a schedule the client
// cannot keep on any machine (docs/method.md#client-lag). Unset: no stall.
const clientStallEnv = "SLOGATE_TEST_CLIENT_STALL"

// clientStall reads clientStallEnv; 0 when it is unset or not a positive
// duration.
func clientStall() time.Duration {
	d, err := time.ParseDuration(os.Getenv(clientStallEnv))
	if err != nil || d < 0 {
		return 0
	}
	return d
}

// traceSettings adds to schedule s what decides a trace's replay: its
// speed, slice, max_requests and drop_over_length, and the SHA-256 of the
// requests and times planned (requests.Schedule.TraceSHA256), so two
// cells of one hash replay the same trace the same way. Resealed.
func traceSettings(s *result.Schedule, tr workload.Trace, sha string) {
	s.Settings["trace_schedule"] = sha
	s.Settings["speed"] = strconv.FormatFloat(tr.SpeedOrOne(), 'g', -1, 64)
	if tr.From > 0 || tr.To > 0 {
		s.Settings["slice"] = fmt.Sprintf("[%s,%s)", tr.From, tr.To)
	}
	if tr.MaxRequests > 0 {
		s.Settings["max_requests"] = strconv.Itoa(tr.MaxRequests)
	}
	s.Settings["drop_over_length"] = strconv.FormatBool(tr.DropOverLength)
	s.Seal()
}

// traceWarnings is the warning.TraceCounts of a trace's plan when it left
// requests out; none when it sent the whole slice.
func traceWarnings(w *spec.Workload, plan *requests.Schedule) []warning.Warning {
	d := plan.Dropped
	if d.ZeroLength+d.OverLength == 0 {
		return nil
	}
	return []warning.Warning{warning.New(warning.TraceCounts, "trace "+w.DatasetText, "", map[string]float64{
		warning.FigExamined: float64(plan.Examined), warning.FigKept: float64(plan.Usable),
		warning.FigZeroLength: float64(d.ZeroLength), warning.FigOverLength: float64(d.OverLength)})}
}
