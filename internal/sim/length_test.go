package sim

import (
	"encoding/json"
	"testing"
)

// TestOutputLength: vLLM 0.32.0 refuses a prompt longer than max_model_len
// and shortens an output that does not fit beside its prompt to the room
// left (testdata/surface/vllm-0.32.0-cpu.json, over_max_model_len_output);
// builds before it (--sim-refuse-over-length) refuse that too.
func TestOutputLength(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		prompt     int
		maxTokens  any // nil: unset
		chat       bool
		wantCode   int
		wantTokens int    // completion_tokens of a 200
		wantMsg    string // the error's message of a 400
		wantParam  any
	}{
		{name: "fits", prompt: 900, maxTokens: 100, wantCode: 200, wantTokens: 100},
		{name: "shortened to the room left", prompt: 976, maxTokens: 100, wantCode: 200, wantTokens: 24},
		{name: "a chat's default fills the room", prompt: 0, chat: true, wantCode: 200, wantTokens: -1},
		{name: "no room left", prompt: 1000, maxTokens: 16, wantCode: 400,
			wantMsg: "max_tokens must be at least 1, got 0. (parameter=max_tokens, value=0)", wantParam: "max_tokens"},
		{name: "one over is at least", prompt: 1001, maxTokens: 16, wantCode: 400,
			wantMsg:   "This model's maximum context length is 1000 tokens. However, your prompt contains at least 1001 input tokens, which exceeds this limit even without any output tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=1001)",
			wantParam: "input_tokens"},
		{name: "before 0.32: refused", args: []string{"--sim-refuse-over-length"}, prompt: 976, maxTokens: 100, wantCode: 400,
			wantMsg:   "This model's maximum context length is 1000 tokens. However, you requested 100 output tokens and your prompt contains 976 input tokens, for a total of 1076 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=976)",
			wantParam: "input_tokens"},
		{name: "before 0.32: one over is at least", args: []string{"--sim-refuse-over-length"}, prompt: 901, maxTokens: 100, wantCode: 400,
			wantMsg:   "This model's maximum context length is 1000 tokens. However, you requested 100 output tokens and your prompt contains at least 901 input tokens, for a total of at least 1001 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=901)",
			wantParam: "input_tokens"},
		{name: "before 0.32: fits", args: []string{"--sim-refuse-over-length"}, prompt: 900, maxTokens: 100, wantCode: 200, wantTokens: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startTest(t, append([]string{"m", "--served-model-name", "qwen", "--max-model-len", "1000", "--sim-tbt", "1ms"}, tt.args...)...)
			body := map[string]any{"prompt": make([]int, tt.prompt), "ignore_eos": true}
			path := "/v1/completions"
			if tt.chat {
				path = "/v1/chat/completions"
				body = map[string]any{"messages": []map[string]string{{"role": "user", "content": "hi"}}, "ignore_eos": true}
			}
			if tt.maxTokens != nil {
				body["max_tokens"] = tt.maxTokens
			}
			resp := ts.post(t, path, "", body)
			var got struct {
				Usage struct {
					PromptTokens     int `json:"prompt_tokens"`
					CompletionTokens int `json:"completion_tokens"`
				}
				Choices []struct {
					FinishReason string `json:"finish_reason"`
				}
				Error struct {
					Message string
					Param   any
				}
			}
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantCode {
				t.Fatalf("HTTP %d %+v, want %d", resp.StatusCode, got.Error, tt.wantCode)
			}
			if tt.wantCode != 200 {
				if got.Error.Message != tt.wantMsg || got.Error.Param != tt.wantParam {
					t.Errorf("error %q (param %v)\nwant  %q (param %v)", got.Error.Message, got.Error.Param, tt.wantMsg, tt.wantParam)
				}
				return
			}
			want := tt.wantTokens
			if want < 0 {
				want = 1000 - got.Usage.PromptTokens
			}
			if got.Usage.CompletionTokens != want || len(got.Choices) != 1 || got.Choices[0].FinishReason != "length" {
				t.Errorf("%d tokens, finish %+v; want %d, length", got.Usage.CompletionTokens, got.Choices, want)
			}
		})
	}
}
