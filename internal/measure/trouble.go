package measure

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/measure/sse"
)

// trouble checks, after a stream failed, whether the run cannot go on: the
// server refuses every request (samplingRejected), or it is gone
// (lifecycle.Server.Gone); it returns an infrastructure error when so.
func (m *Meter) trouble(ctx context.Context, failure error) error {
	if err := m.samplingRejected(failure); err != nil {
		return err
	}
	return m.Server.Gone(ctx)
}

// specDecodeSamplingMessage is the start of vLLM's answer to a request
// whose min_p or logit_bias its speculative decoding cannot take
// (SamplingParams._validate_spec_decode, vLLM PR #31982).
const specDecodeSamplingMessage = "The min_p and logit_bias sampling parameters are not yet supported with speculative decoding"

// samplingRejected returns the run-ending error (exit 3) when failure is
// the server refusing the workload's sampling under speculative decoding:
// every request of the run would fail the same way. The spec cannot send
// min_p or logit_bias with a speculative block (spec load refuses it), so
// the min_p the server objects to is the model's generation_config.json
// default (docs/vllm.md#sampling-defaults), or the server speculates
// without the spec saying so. The remedy is the user's: slogate never
// changes the workload by itself. nil for any other failure.
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
	if !strings.Contains(msg, specDecodeSamplingMessage) {
		return nil
	}
	srv := m.Spec
	w := m.Workload
	// min_p counts as sent when vLLM would reject it: above _SAMPLING_EPS
	// (an explicit min_p = 0 pins it and is never the cause) at a
	// temperature that is not greedy (below 1e-5 vLLM resets min_p first).
	minP, _ := w.Sampling["min_p"].Float64()
	sentMinP := minP > 1e-5
	if t, err := w.Sampling["temperature"].Float64(); err == nil && t < 1e-5 {
		sentMinP = false
	}
	var why, remedy string
	switch {
	case srv.Speculative == nil && (sentMinP || len(w.LogitBias) > 0):
		why = "the spec sends min_p or logit_bias, and the server runs speculative decoding although the server block has no speculative block"
		remedy = "remove min_p and logit_bias from workload.sampling, or serve without speculative decoding"
	default:
		why = "the spec sends no min_p above 1e-5 and no logit_bias, so the min_p comes from the server's defaults: the model's generation_config.json or the server's --override-generation-config, which vLLM applies to every request that leaves min_p out"
		remedy = "add sampling = { min_p = 0 } to the workload block (or start the server with --generation-config vllm and no min_p in --override-generation-config)"
	}
	return exit.Infraf("server %s rejects every request: %s. %s (docs/vllm.md#sampling-defaults): %s; slogate does not change the workload by itself", srv.Name, msg, why, remedy)
}
