package result

import (
	"math"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/vocab"
)

// fieldKey is a metric of the table by phase and name.
type fieldKey struct {
	phase vocab.Phase
	name  string
}

// fields locates every metric of the table (metric.Table) in a cell of its
// phase; a statistic of the naming rule lives in the cell's Stats
// (fieldOf). TestMetricStorage checks it covers the table exactly, with the
// table's Integer and Optional.
var fields = map[fieldKey]cellField{
	{vocab.PhasePrefill, metric.TPS}:                prefillField(func(c *PrefillCell) *float64 { return &c.TPS }),
	{vocab.PhasePrefill, metric.TTFTMs}:             prefillField(func(c *PrefillCell) *float64 { return &c.TTFTMs }),
	{vocab.PhaseDecode, metric.TotalTPS}:            decodeField(func(c *DecodeCell) *float64 { return &c.TotalTPS }),
	{vocab.PhaseDecode, metric.PerRequestTPS}:       decodeField(func(c *DecodeCell) *float64 { return &c.PerRequestTPS }),
	{vocab.PhaseDecode, metric.TTFTMs}:              decodeField(func(c *DecodeCell) *float64 { return &c.TTFTMs }),
	{vocab.PhaseDecode, metric.TTFTMsP90}:           decodeField(func(c *DecodeCell) *float64 { return &c.TTFTMsP90 }),
	{vocab.PhaseDecode, metric.TTFTMsP99}:           decodeField(func(c *DecodeCell) *float64 { return &c.TTFTMsP99 }),
	{vocab.PhaseDecode, metric.TBTMs}:               decodeField(func(c *DecodeCell) *float64 { return &c.TBTMs }),
	{vocab.PhaseDecode, metric.TBTMsP90}:            decodeField(func(c *DecodeCell) *float64 { return &c.TBTMsP90 }),
	{vocab.PhaseDecode, metric.TBTMsP99}:            decodeField(func(c *DecodeCell) *float64 { return &c.TBTMsP99 }),
	{vocab.PhaseDecode, metric.ITLMs}:               statsField(vocab.PhaseDecode, metric.ITLMs),
	{vocab.PhaseDecode, metric.TPOTMs}:              statsField(vocab.PhaseDecode, metric.TPOTMs),
	{vocab.PhaseDecode, metric.ActiveAvg}:           decodeField(func(c *DecodeCell) *float64 { return &c.ActiveAvg }),
	{vocab.PhaseDecode, metric.Completed}:           decodeField(func(c *DecodeCell) *int { return &c.Completed }),
	{vocab.PhaseDecode, metric.Rejected}:            decodeField(func(c *DecodeCell) *int { return &c.Rejected }),
	{vocab.PhaseDecode, metric.OutputTokens}:        decodeField(func(c *DecodeCell) *int64 { return &c.OutputTokens }),
	{vocab.PhaseDecode, metric.MeasuredS}:           decodeField(func(c *DecodeCell) *float64 { return &c.MeasuredS }),
	{vocab.PhaseDecode, metric.ServerTotalTPS}:      decodeOptional(func(c *DecodeCell) **float64 { return &c.ServerTotalTPS }),
	{vocab.PhaseDecode, metric.SpecAcceptRate}:      decodeOptional(func(c *DecodeCell) **float64 { return &c.SpeculativeAcceptRate }),
	{vocab.PhaseDecode, metric.SpecAcceptLen}:       decodeOptional(func(c *DecodeCell) **float64 { return &c.SpeculativeAcceptLen }),
	{vocab.PhaseDecode, metric.ServerTTFTMsMean}:    decodeOptional(func(c *DecodeCell) **float64 { return &c.ServerTTFTMsMean }),
	{vocab.PhaseDecode, metric.ServerITLMsMean}:     decodeOptional(func(c *DecodeCell) **float64 { return &c.ServerITLMsMean }),
	{vocab.PhaseDecode, metric.ServerE2EMsMean}:     decodeOptional(func(c *DecodeCell) **float64 { return &c.ServerE2EMsMean }),
	{vocab.PhaseTraffic, metric.AchievedRPS}:        trafficField(func(c *TrafficCell) *float64 { return &c.AchievedRPS }),
	{vocab.PhaseTraffic, metric.GoodputRPS}:         trafficField(func(c *TrafficCell) *float64 { return &c.GoodputRPS }),
	{vocab.PhaseTraffic, metric.GoodputShare}:       trafficShare(func(c *TrafficCell) *float64 { return &c.GoodputShare }),
	{vocab.PhaseTraffic, metric.Launched}:           trafficField(func(c *TrafficCell) *int { return &c.Launched }),
	{vocab.PhaseTraffic, metric.Completed}:          trafficField(func(c *TrafficCell) *int { return &c.Completed }),
	{vocab.PhaseTraffic, metric.Unfinished}:         trafficField(func(c *TrafficCell) *int { return &c.Unfinished }),
	{vocab.PhaseTraffic, metric.Rejected}:           trafficField(func(c *TrafficCell) *int { return &c.Rejected }),
	{vocab.PhaseTraffic, metric.RejectedShare}:      trafficShare(func(c *TrafficCell) *float64 { return &c.RejectedShare }),
	{vocab.PhaseTraffic, metric.E2EMs}:              trafficLatency(func(c *TrafficCell) *float64 { return &c.E2EMs }),
	{vocab.PhaseTraffic, metric.E2EMsP90}:           trafficLatency(func(c *TrafficCell) *float64 { return &c.E2EMsP90 }),
	{vocab.PhaseTraffic, metric.E2EMsP99}:           trafficLatency(func(c *TrafficCell) *float64 { return &c.E2EMsP99 }),
	{vocab.PhaseTraffic, metric.E2EMsMean}:          trafficLatency(func(c *TrafficCell) *float64 { return &c.E2EMsMean }),
	{vocab.PhaseTraffic, metric.TTFTMs}:             trafficLatency(func(c *TrafficCell) *float64 { return &c.TTFTMs }),
	{vocab.PhaseTraffic, metric.TTFTMsP90}:          trafficLatency(func(c *TrafficCell) *float64 { return &c.TTFTMsP90 }),
	{vocab.PhaseTraffic, metric.TTFTMsP99}:          trafficLatency(func(c *TrafficCell) *float64 { return &c.TTFTMsP99 }),
	{vocab.PhaseTraffic, metric.TBTMs}:              trafficLatency(func(c *TrafficCell) *float64 { return &c.TBTMs }),
	{vocab.PhaseTraffic, metric.TBTMsP90}:           trafficLatency(func(c *TrafficCell) *float64 { return &c.TBTMsP90 }),
	{vocab.PhaseTraffic, metric.TBTMsP99}:           trafficLatency(func(c *TrafficCell) *float64 { return &c.TBTMsP99 }),
	{vocab.PhaseTraffic, metric.TPOTMs}:             statsField(vocab.PhaseTraffic, metric.TPOTMs),
	{vocab.PhaseTraffic, metric.PrefixCacheHitRate}: statsField(vocab.PhaseTraffic, metric.PrefixCacheHitRate),
	{vocab.PhaseTraffic, metric.TTFOMs}:             statsField(vocab.PhaseTraffic, metric.TTFOMs),
	{vocab.PhaseTraffic, metric.TTFOMsP90}:          statsField(vocab.PhaseTraffic, metric.TTFOMsP90),
	{vocab.PhaseTraffic, metric.TTFOMsP99}:          statsField(vocab.PhaseTraffic, metric.TTFOMsP99),
	{vocab.PhaseTraffic, metric.ReasoningTokens}:    statsField(vocab.PhaseTraffic, metric.ReasoningTokens),
	{vocab.PhaseTraffic, metric.ContentTokens}:      statsField(vocab.PhaseTraffic, metric.ContentTokens),
	{vocab.PhaseTraffic, metric.ReasoningTPS}:       statsField(vocab.PhaseTraffic, metric.ReasoningTPS),
	{vocab.PhaseTraffic, metric.ContentTPS}:         statsField(vocab.PhaseTraffic, metric.ContentTPS),
	{vocab.PhaseTraffic, metric.OutputTPS}:          statsField(vocab.PhaseTraffic, metric.OutputTPS),
	{vocab.PhaseTraffic, metric.ConcurrencyAvg}:     trafficField(func(c *TrafficCell) *float64 { return &c.ConcurrencyAvg }),
	{vocab.PhaseTraffic, metric.MeasuredS}:          trafficField(func(c *TrafficCell) *float64 { return &c.MeasuredS }),
}

// fieldOf is where metric m lives in a cell of its phase; ok is false for a
// metric neither the table nor the naming rule knows.
func fieldOf(m metric.Metric) (cellField, bool) {
	if f, ok := fields[fieldKey{m.Phase, m.Stored()}]; ok {
		return f, true
	}
	if _, ok := metric.Lookup(m.Phase, m.Name); ok {
		return statsField(m.Phase, m.Stored()), true
	}
	return cellField{}, false
}

// Value returns metric m's value in decode cell c; ok is false when m is
// not a decode metric or is an optional metric c does not have.
func (c *DecodeCell) Value(m metric.Metric) (v float64, ok bool) {
	if f, _ := fieldOf(m); f.decode != nil {
		return f.decode(c).get()
	}
	return 0, false
}

// Value returns metric m's value in prefill cell c; ok is false when m is
// not a prefill metric.
func (c *PrefillCell) Value(m metric.Metric) (v float64, ok bool) {
	if f, _ := fieldOf(m); f.prefill != nil {
		return f.prefill(c).get()
	}
	return 0, false
}

// Value returns metric m's value in traffic cell c; ok is false when m is
// not a traffic metric, or is a latency statistic of a cell in which no
// request completed or the goodput share of one that launched none: a
// statistic of no samples is unmeasured, not 0 (docs/method.md#traffic).
func (c *TrafficCell) Value(m metric.Metric) (v float64, ok bool) {
	if f, _ := fieldOf(m); f.traffic != nil {
		if f.measuredIn != nil && !f.measuredIn(c) {
			return 0, false
		}
		return f.traffic(c).get()
	}
	return 0, false
}

// SetValue stores v as metric m's value in decode cell c (rounded to the
// nearest whole number for a count); it does nothing when m is not a decode
// metric.
func (c *DecodeCell) SetValue(m metric.Metric, v float64) {
	if f, _ := fieldOf(m); f.decode != nil {
		f.decode(c).set(v)
	}
}

// SetValue stores v as metric m's value in prefill cell c; it does nothing
// when m is not a prefill metric.
func (c *PrefillCell) SetValue(m metric.Metric, v float64) {
	if f, _ := fieldOf(m); f.prefill != nil {
		f.prefill(c).set(v)
	}
}

// SetValue stores v as metric m's value in traffic cell c (rounded to the
// nearest whole number for a count); it does nothing when m is not a
// traffic metric.
func (c *TrafficCell) SetValue(m metric.Metric, v float64) {
	if f, _ := fieldOf(m); f.traffic != nil {
		f.traffic(c).set(v)
	}
}

// ClearValue removes optional metric m from decode cell c (the server did
// not report it); a metric that is always present is set to zero.
func (c *DecodeCell) ClearValue(m metric.Metric) {
	if f, _ := fieldOf(m); f.decode != nil {
		f.decode(c).clear()
	}
}

// Metric returns the named metric of a prefill cell; ok is false for an
// unknown name.
func (c *PrefillCell) Metric(name string) (v float64, ok bool) {
	m, ok := metric.Lookup(vocab.PhasePrefill, name)
	if !ok {
		return 0, false
	}
	return c.Value(m)
}

// Metric returns the named metric of a decode cell; ok is false for an
// unknown name or an optional metric the server did not provide.
func (c *DecodeCell) Metric(name string) (v float64, ok bool) {
	m, ok := metric.Lookup(vocab.PhaseDecode, name)
	if !ok {
		return 0, false
	}
	return c.Value(m)
}

// Metric returns the named metric of a traffic cell; ok is false for an
// unknown name.
func (c *TrafficCell) Metric(name string) (v float64, ok bool) {
	m, ok := metric.Lookup(vocab.PhaseTraffic, name)
	if !ok {
		return 0, false
	}
	return c.Value(m)
}

// cellField is where a metric lives in a cell of its phase: exactly one of
// prefill, decode and traffic is set.
type cellField struct {
	prefill  func(*PrefillCell) slot
	decode   func(*DecodeCell) slot
	traffic  func(*TrafficCell) slot
	integer  bool // stored as int or int64
	optional bool // stored as *float64, nil when not reported
	// measuredIn reports whether a traffic cell's stored value is a
	// measurement (nil: always); the field keeps 0 when it is not.
	measuredIn func(*TrafficCell) bool
}

// slot is one metric's storage in one cell: exactly one pointer is set
// (stats with its key).
type slot struct {
	f     *float64
	i     *int
	i64   *int64
	opt   **float64
	stats *map[string]float64
	key   string
}

func (s slot) get() (float64, bool) {
	if s.stats != nil {
		v, ok := (*s.stats)[s.key]
		return v, ok
	}
	switch {
	case s.f != nil:
		return *s.f, true
	case s.i != nil:
		return float64(*s.i), true
	case s.i64 != nil:
		return float64(*s.i64), true
	case *s.opt != nil:
		return **s.opt, true
	}
	return 0, false
}

func (s slot) set(v float64) {
	if s.stats != nil {
		if *s.stats == nil {
			*s.stats = map[string]float64{}
		}
		(*s.stats)[s.key] = v
		return
	}
	switch {
	case s.f != nil:
		*s.f = v
	case s.i != nil:
		*s.i = int(math.Round(v))
	case s.i64 != nil:
		*s.i64 = int64(math.Round(v))
	default:
		*s.opt = &v
	}
}

func (s slot) clear() {
	if s.stats != nil {
		delete(*s.stats, s.key)
		return
	}
	if s.opt != nil {
		*s.opt = nil
		return
	}
	s.set(0)
}

// number is the storage types of a metric that is always present.
type number interface{ float64 | int | int64 }

func slotOf[T number](p *T) slot {
	switch p := any(p).(type) {
	case *float64:
		return slot{f: p}
	case *int:
		return slot{i: p}
	case *int64:
		return slot{i64: p}
	}
	panic("unreachable: number has three types")
}

func isInteger[T number]() bool {
	var zero T
	_, isFloat := any(zero).(float64)
	return !isFloat
}

func prefillField[T number](f func(*PrefillCell) *T) cellField {
	return cellField{prefill: func(c *PrefillCell) slot { return slotOf(f(c)) }, integer: isInteger[T]()}
}

func decodeField[T number](f func(*DecodeCell) *T) cellField {
	return cellField{decode: func(c *DecodeCell) slot { return slotOf(f(c)) }, integer: isInteger[T]()}
}

func decodeOptional(f func(*DecodeCell) **float64) cellField {
	return cellField{decode: func(c *DecodeCell) slot { return slot{opt: f(c)} }, optional: true}
}
