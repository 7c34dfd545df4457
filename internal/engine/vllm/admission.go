package vllm

import (
	"net/http"

	dto "github.com/prometheus/client_model/go"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/promread"
)

var _ engine.Rejecter = Engine{}

// Rejected says whether a generation request's failure is vLLM refusing it
// at admission (docs/vllm.md#admission-control): with --max-num-queued-reqs
// or --max-num-queued-tokens (vLLM 0.29 on), AsyncLLM.check_admission
// raises QueueOverflowError or MaxQueuedTokensError (vllm/exceptions.py),
// whose answer is 503 "Service Unavailable". Checked before the response
// starts (the serving layer's _preflight), the request is answered HTTP
// 503; checked as the request is added to the engine, inside a stream
// already answered 200, it is the stream's error event with code 503 and
// then [DONE]. No other answer vLLM gives a generation request is a 503
// but elastic expert parallelism's while it scales (ScalingMiddleware,
// "Please try again later"), which is a refusal of the same kind; a
// request that fails in the engine is a 500 (EngineGenerateError,
// EngineDeadError).
func (Engine) Rejected(status, code int, _ string) bool {
	return status == http.StatusServiceUnavailable || status == http.StatusOK && code == http.StatusServiceUnavailable
}

// admissionRejections reads vllm:admission_rejections_total (vLLM 0.32 on,
// v1/metrics/loggers.py: a counter labelled model_name and reason, one
// series per reason of ADMISSION_REASONS from the start, no engine label:
// the API server counts them), summed over the reasons and by reason; ok
// when a series of the model is on the page.
func admissionRejections(f *dto.MetricFamily, modelName string) (total float64, byReason map[string]float64, ok bool) {
	for _, m := range f.GetMetric() {
		if !promread.ModelMatches(m, modelName) {
			continue
		}
		var v float64
		switch {
		case m.GetCounter() != nil:
			v = m.GetCounter().GetValue()
		case m.GetUntyped() != nil:
			v = m.GetUntyped().GetValue()
		default:
			continue
		}
		if byReason == nil {
			byReason = map[string]float64{}
		}
		total += v
		byReason[promread.LabelValue(m, "reason")] += v
		ok = true
	}
	return total, byReason, ok
}
