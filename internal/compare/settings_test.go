package compare

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/workload"
)

func settingsRun() *result.Results {
	return &result.Results{
		Server: result.Server{Name: "qwen", Model: "Qwen/Qwen3.5-4B", Version: "0.26.1",
			Argv: []string{"vllm", "serve", "Qwen/Qwen3.5-4B", "--max-num-seqs", "32", "--port", "8000", "--enable-prefix-caching", "--kv-cache-dtype=fp8"},
			Env:  map[string]string{"VLLM_USE_V1": "1"}},
		Measure:  result.Measure{Duration: "3s", DurationS: 3, MaxOutput: 256, Endpoint: "completions", Repeat: 5},
		Workload: record(`{"prompt": "article", "distinct": true, "sampling": {"temperature": 0.7}}`),
	}
}

func TestSettings(t *testing.T) {
	tests := []struct {
		name   string
		change func(b *result.Results)
		want   []string
	}{
		{"identical", func(*result.Results) {}, nil},
		{"window from -duration", func(b *result.Results) { b.Measure.Duration, b.Measure.DurationS = "1s", 1 }, []string{"window: 3s → 1s"}},
		{"window written differently is the same window", func(b *result.Results) { b.Measure.Duration = "3000ms" }, nil},
		{"max_output and endpoint", func(b *result.Results) { b.Measure.MaxOutput, b.Measure.Endpoint = 512, "chat" },
			[]string{"max_output: 256 → 512", "endpoint: completions → chat"}},
		{"repeat, 0 read as 1", func(b *result.Results) { b.Measure.Repeat = 0 }, []string{"repeat: 5 → 1"}},
		{"simulated against real", func(b *result.Results) { b.Server.Simulated = true }, []string{"server: real → simulated"}},
		{"another engine", func(b *result.Results) { b.Server.Engine = "sglang" }, []string{"engine: vllm → sglang"}},
		{"results before engines were recorded are vLLM's", func(b *result.Results) { b.Server.Engine = "vllm" }, nil},
		{"workload field changed", func(b *result.Results) {
			b.Workload = record(`{"prompt":"random","distinct":true,"sampling":{"temperature":0.70}}`)
		}, []string{"workload.prompt: article → random"}},
		{"workload nested value changed", func(b *result.Results) {
			b.Workload = record(`{"prompt":"article","distinct":true,"sampling":{"temperature":1}}`)
		}, []string{`workload.sampling: {"temperature":0.7} → {"temperature":1}`}},
		{"workload recorded on one side only", func(b *result.Results) { b.Workload = nil },
			[]string{`workload: {"prompt":"article","distinct":true,"sampling":{"temperature":0.7},"chat_template_kwargs":null} → unset`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := settingsRun(), settingsRun()
			tc.change(b)
			var got []string
			for _, d := range Settings(a, b) {
				got = append(got, d.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("differences (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("absent workload on both sides", func(t *testing.T) {
		a, b := settingsRun(), settingsRun()
		a.Workload, b.Workload = nil, nil
		if d := Settings(a, b); len(d) != 0 {
			t.Errorf("differences %v, want none", d)
		}
	})
	t.Run("workload JSON compared as values", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			a, b string
			want []string
		}{
			{"null is absent", "null", "", nil},
			{"key order and number spelling do not matter", `{"x":1,"y":0.70}`, `{"y":0.7,"x":1.0}`, nil},
			{"a big integer stays exact", `{"seed":18446744073709551615}`, `{"seed":18446744073709551614}`, []string{"workload.seed: 18446744073709551615 → 18446744073709551614"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var got []string
				for _, d := range workloadDiff(json.RawMessage(tc.a), json.RawMessage(tc.b)) {
					got = append(got, d.String())
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("differences (-want +got):\n%s", diff)
				}
			})
		}
	})
}

func TestServer(t *testing.T) {
	a, b := settingsRun(), settingsRun()
	b.Server.Version = "0.27.2"
	b.Server.Argv = []string{"vllm", "serve", "Qwen/Qwen3.5-4B", "--max-num-seqs", "64", "--port", "8001", "--kv-cache-dtype=fp8", "--enforce-eager", "--seed", "-1"}
	b.Server.Env = map[string]string{"VLLM_USE_V1": "0", "HF_HOME": "/data"}
	got := ServerHeader(Server(a, b))
	want := "vLLM 0.26.1 → 0.27.2; --max-num-seqs 32 → 64; --enable-prefix-caching removed; --enforce-eager added; --seed -1 added; env HF_HOME /data added; env VLLM_USE_V1 1 → 0"
	if got != want {
		t.Errorf("header\n %s\nwant\n %s", got, want)
	}
	if h := ServerHeader(Server(a, settingsRun())); h != "" {
		t.Errorf("same server: header %q, want none", h)
	}
	if strings.Contains(got, "--port") {
		t.Error("the port is not a server difference")
	}
}

// record reads a workload record from its JSON.
func record(js string) *workload.Record {
	var r workload.Record
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		panic(err)
	}
	return &r
}
