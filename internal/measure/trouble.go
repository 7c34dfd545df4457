package measure

import (
	"context"
	"errors"
	"net/http"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/engine/registry"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/measure/sse"
	"github.com/slogate/slogate/internal/promread"
	"github.com/slogate/slogate/internal/result"
)

// trouble checks, after a stream failed, whether the run cannot go on: the
// server refuses every request (samplingRejected), says its engine died
// (engine.EngineDead: lifecycle.Server.EngineDied), or is gone
// (lifecycle.Server.Gone); it returns an infrastructure error when so. A
// refusal at admission is neither: the server is up and full
// (docs/method.md#rejections).
func (m *Meter) trouble(ctx context.Context, failure error) error {
	if isRejection(failure) {
		return nil
	}
	if err := m.samplingRejected(failure); err != nil {
		return err
	}
	if engine.EngineDead(m.engine(), failure.Error()) {
		return m.Server.EngineDied(ctx, failure.Error())
	}
	return m.Server.Gone(ctx)
}

// samplingRejected returns the run-ending error (exit 3) when failure is
// the server refusing the workload's sampling settings as its engine
// answers it (engine.Engine.SamplingRejected: vLLM's 400 to min_p or
// logit_bias under speculative decoding): every request of the run would
// fail the same way. The remedy is the user's: slogate never changes the
// workload by itself. nil for any other failure.
func (m *Meter) samplingRejected(failure error) error {
	var se *lifecycle.StreamStatusError
	var ae *sse.APIError
	var msg string
	switch {
	case errors.As(failure, &se) && se.Code == http.StatusBadRequest:
		msg = se.Error()
	case errors.As(failure, &ae):
		msg = ae.Error()
	default:
		return nil
	}
	why, remedy, ok := m.engine().SamplingRejected(msg, m.sentSampling())
	if !ok {
		return nil
	}
	return exit.Infraf("server %s rejects every request: %s. %s: %s; slogate does not change the workload by itself", m.Spec.Name, msg, why, remedy)
}

// sentSampling is what the cell's workload sends of its sampling settings,
// and whether its server block speculates (none of it without a workload or
// a server block, as in tests of one rule).
func (m *Meter) sentSampling() engine.Sampling {
	var sent engine.Sampling
	if m.Spec != nil {
		sent.Speculative = m.Spec.Speculative != nil
	}
	if w := m.Workload; w != nil {
		sent.LogitBias = len(w.LogitBias) > 0
		sent.MinP, _ = w.Sampling["min_p"].Float64()
		if t, err := w.Sampling["temperature"].Float64(); err == nil {
			sent.Temperature = &t
		}
	}
	return sent
}

// engine is the measured server's engine (vLLM for a Meter without a
// server, as in tests of one rule).
func (m *Meter) engine() engine.Engine {
	if m.Server == nil || m.Server.Client == nil {
		if m.Spec == nil {
			return registry.For("")
		}
		return registry.For(m.Spec.Engine)
	}
	return m.Server.Client.Engine()
}

// asleepError ends a cell whose server put its engine to sleep while it
// was measured: the cell is an Error with why (Meter.asleep). Its message
// is the reason's code: the cell words why.
type asleepError struct{ why *result.CellReason }

func (e asleepError) Error() string { return string(e.why.Code) }

// asleep is the Error reason of a cell whose server reports, in s, an
// engine asleep (vLLM's sleep mode, engine.Status.Asleep): such a server
// answers /health and shows no request running or waiting, so it would
// read as an idle one; nil when every engine is awake or the engine has
// no sleep gauge.
func (m *Meter) asleep(s promread.Snapshot) *result.CellReason {
	how := m.engine().Status().Asleep
	if s.Asleep == 0 || how == "" {
		return nil
	}
	return &result.CellReason{Code: result.ReasonAsleep,
		Figures: map[string]float64{result.FigAsleep: float64(s.Asleep), result.FigSleepLevel: float64(s.SleepLevel)},
		Names:   map[string]string{result.NameHow: how}}
}

// awakeCheck scrapes /metrics before a cell and says why it cannot be
// measured when the server's engine sleeps (Meter.asleep); nil when it is
// awake, or when /metrics cannot tell.
func (m *Meter) awakeCheck(ctx context.Context) *result.CellReason {
	if m.Server == nil || m.Server.Client == nil {
		return nil
	}
	s, _, err := m.Server.Client.Metrics(ctx)
	if err != nil {
		return nil
	}
	return m.asleep(s)
}
