package spec

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/shellcmd"
)

func TestRedactedEnv(t *testing.T) {
	tests := []struct {
		name string
		srv  Server
		want map[string]string
	}{
		{name: "nil stays nil", srv: Server{}, want: nil},
		{
			name: "credential names and the api key are hidden",
			srv: Server{
				APIKey: "sk-planted-123",
				Env: map[string]string{
					"VLLM_USE_V2_MODEL_RUNNER": "1",
					"HF_TOKEN":                 "hf_abc",
					"VLLM_API_KEY":             "sk-planted-123",
					"EXTRA_ARGS":               "--api-key=sk-planted-123",
					"EMPTY_SECRET":             "",
				},
			},
			want: map[string]string{
				"VLLM_USE_V2_MODEL_RUNNER": "1",
				"HF_TOKEN":                 shellcmd.Redacted,
				"VLLM_API_KEY":             shellcmd.Redacted,
				"EXTRA_ARGS":               "--api-key=" + shellcmd.Redacted,
				"EMPTY_SECRET":             "",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.srv.RedactedEnv()); diff != "" {
				t.Errorf("RedactedEnv (-want +got):\n%s", diff)
			}
		})
	}
}
