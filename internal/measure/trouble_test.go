package measure

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/measure/sse"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vllmfake"
)

// TestSamplingRejected: the exit-3 message of a server that answers every
// request vLLM's speculative-decoding 400 blames the spec only when it sends
// a min_p vLLM rejects (above 1e-5) or a logit_bias; an explicit min_p = 0
// or none points at the server's defaults, generation_config.json or
// --override-generation-config.
func TestSamplingRejected(t *testing.T) {
	defaults := []string{"the min_p comes from the server's defaults", "--override-generation-config", "add sampling = { min_p = 0 }"}
	blame := []string{"the spec sends min_p or logit_bias", "remove min_p and logit_bias from workload.sampling"}
	tests := []struct {
		name     string
		sampling map[string]json.Number
		bias     map[string]json.Number
		want     []string
	}{
		{name: "no min_p", want: defaults},
		{name: "min_p = 0", sampling: map[string]json.Number{"min_p": "0"}, want: defaults},
		{name: "min_p = 1e-5", sampling: map[string]json.Number{"min_p": "0.00001"}, want: defaults},
		{name: "min_p = 0.05", sampling: map[string]json.Number{"min_p": "0.05"}, want: blame},
		{name: "min_p = 0.05 at a greedy temperature", sampling: map[string]json.Number{"min_p": "0.05", "temperature": "0"}, want: defaults},
		{name: "logit_bias", bias: map[string]json.Number{"7": "-100"}, want: blame},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := &spec.Workload{}
			w.Sampling, w.LogitBias = tc.sampling, tc.bias
			m := &Meter{Spec: &spec.Server{Name: "q"}, Workload: w}
			err := m.samplingRejected(&lifecycle.StreamStatusError{Path: "/v1/completions", Code: 400, Body: vllmSamplingRefusal})
			if err == nil {
				t.Fatal("samplingRejected = nil")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message lacks %q: %s", w, err)
				}
			}
		})
	}
}

// vllmSamplingRefusal is vLLM's 400 to min_p or logit_bias under
// speculative decoding (SamplingParams._validate_spec_decode).
const vllmSamplingRefusal = "The min_p and logit_bias sampling parameters are not yet supported with speculative decoding."

// TestEngineDied: a failed request whose answer is vLLM's EngineDeadError
// (as its API server sends to every stream in flight when its EngineCore
// dies: seen on the real CPU build after kill -9) ends the run with an
// infrastructure error saying the engine died, not a cell's error; any
// other server error in the stream leaves the run going while the server
// answers.
func TestEngineDied(t *testing.T) {
	tests := []struct {
		name    string
		failure error
		want    string // "" for no run-ending error
	}{
		{name: "EngineDeadError in the stream", failure: &sse.APIError{Message: "EngineCore encountered an issue. See stack trace (above) for the root cause.", Type: "InternalServerError", Code: 500},
			want: "engine died during the run (server error in stream: EngineCore encountered an issue"},
		{name: "another server error", failure: &sse.APIError{Message: "CUDA out of memory", Type: "InternalServerError", Code: 500}},
	}
	srv := (&vllmfake.Server{}).Start(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &Meter{Server: lifecycle.Endpoint(lifecycle.NewClient(srv.URL, "", "qwen")), Spec: &spec.Server{Name: "q"}}
			err := m.trouble(context.Background(), tc.failure)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || exit.Code(err) != exit.Infra) {
				t.Errorf("trouble = %v (exit %d), want %q (exit 3)", err, exit.Code(err), tc.want)
			}
		})
	}
}
