package sim

import (
	"encoding/json"
	"regexp"
	"testing"
)

// TestSystemFingerprint: every answer carries vLLM's default
// system_fingerprint, vllm-VERSION[-tpN][-dpN]-HASH8, the same for the
// same configuration and another for another.
func TestSystemFingerprint(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // the form, a regexp
	}{
		{"one GPU", nil, `^vllm-\S+-slogate-sim-[0-9a-f]{8}$`},
		{"tensor parallel", []string{"-tp", "2"}, `^vllm-\S+-slogate-sim-tp2-[0-9a-f]{8}$`},
		{"tensor and data parallel", []string{"-tp", "2", "-dp", "2"}, `^vllm-\S+-slogate-sim-tp2-dp2-[0-9a-f]{8}$`},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startTest(t, append([]string{"m", "--served-model-name", "qwen", "--sim-tbt", "1ms"}, tt.args...)...)
			var body struct {
				SystemFingerprint string `json:"system_fingerprint"`
			}
			resp := ts.post(t, "/v1/completions", "", map[string]any{"prompt": []int{1, 2, 3}, "max_tokens": 2})
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			fp := body.SystemFingerprint
			if !regexp.MustCompile(tt.want).MatchString(fp) {
				t.Errorf("system_fingerprint %q, want the form %s", fp, tt.want)
			}
			if again := systemFingerprint(ts.srv.cfg, ts.srv.version); again != fp {
				t.Errorf("the same configuration gives %q, then %q", fp, again)
			}
			hash := fp[len(fp)-8:]
			if other, ok := seen[hash]; ok {
				t.Errorf("%s has the hash of %s", tt.name, other)
			}
			seen[hash] = tt.name
		})
	}
}
