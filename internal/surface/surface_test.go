package surface

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestShape(t *testing.T) {
	tests := []struct {
		name string
		json string
		want string // the shape as JSON
	}{
		{"scalars by type", `{"a":"x","b":1,"c":1.5,"d":true,"e":null}`, `{"a":"string","b":"int","c":"float","d":"bool","e":"null"}`},
		{"an empty string is kept", `{"text":""}`, `{"text":"''"}`},
		{"protocol strings are kept", `{"object":"text_completion","finish_reason":"length","role":"assistant"}`,
			`{"finish_reason":"'length'","object":"'text_completion'","role":"'assistant'"}`},
		{"a literal key's non-string is typed", `{"message":{"role":"assistant"},"type":3}`, `{"message":{"role":"'assistant'"},"type":"int"}`},
		{"an array by its first element", `{"tokens":[1,2,3],"data":[{"id":"a"},{"id":"b","x":1}]}`, `{"data":[{"id":"string"}],"tokens":["int"]}`},
		{"an empty array", `{"choices":[]}`, `{"choices":"[]"}`},
		{"an exponent is a float", `{"v":1e3}`, `{"v":"float"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := decode([]byte(tt.json))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(Shape(v))
			if string(got) != tt.want {
				t.Errorf("Shape(%s) = %s, want %s", tt.json, got, tt.want)
			}
		})
	}
}

func TestEvents(t *testing.T) {
	chunk := func(text, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `{"id":"cmpl-1","choices":[{"text":"` + text + `","finish_reason":` + f + `}]}`
	}
	tests := []struct {
		name string
		data []string
		want []bool // Repeated of each event
		n    int
	}{
		{"a run of content chunks collapses", []string{chunk("a", ""), chunk("b", ""), chunk("c", ""), chunk("d", "length"), "[DONE]"}, []bool{true, false, false}, 3},
		{"a single chunk is not repeated", []string{chunk("a", ""), chunk("d", "length"), "[DONE]"}, []bool{false, false, false}, 3},
		{"an empty text breaks the run", []string{chunk("a", ""), chunk("", ""), chunk("b", ""), chunk("c", "")}, []bool{false, false, true}, 3},
		{"texts and ids do not", []string{chunk("a", ""), `{"id":"cmpl-2","choices":[{"text":"zz","finish_reason":null}]}`}, []bool{true}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := events(tt.data)
			if len(got) != tt.n {
				t.Fatalf("%d events, want %d: %+v", len(got), tt.n, got)
			}
			for i, ev := range got {
				if ev.Repeated != tt.want[i] {
					t.Errorf("event %d repeated = %v, want %v", i, ev.Repeated, tt.want[i])
				}
			}
		})
	}
}

func TestEventData(t *testing.T) {
	raw := "data: {\"a\":1}\n\ndata:{\"b\":2}\r\n\r\n: a comment\n\ndata: [DONE]\n\n"
	want := []string{`{"a":1}`, `{"b":2}`, "[DONE]"}
	if got := eventData([]byte(raw)); !cmp.Equal(got, want) {
		t.Errorf("eventData = %q, want %q", got, want)
	}
}

func TestPattern(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"vLLM 0.32.0 on a CPU", "(EngineCore pid=13543) INFO 12-06 22:48:22 [kv_cache_utils.py:2327] CPU KV cache size: 524,288 tokens, Maximum concurrency for 1,024 tokens per request: 512.00x",
			"(EngineCore pid=<pid>) INFO <time> [kv_cache_utils.py:<line>] CPU KV cache size: <n,nnn> tokens, Maximum concurrency for <n,nnn> tokens per request: <n.nn>x"},
		{"a data-parallel engine, the two-line form", "(EngineCore_DP1 pid=77) INFO 11-30 21:03:56 [kv_cache_utils.py:1087] GPU KV cache size: 425424 tokens",
			"(EngineCore_DP1 pid=<pid>) INFO <time> [kv_cache_utils.py:<line>] GPU KV cache size: <n> tokens"},
		{"a small concurrency", "Maximum concurrency for 512 tokens per request: 0.25x", "Maximum concurrency for <n> tokens per request: <n.nn>x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Pattern(tt.line); got != tt.want {
				t.Errorf("Pattern(%q)\n = %q\nwant %q", tt.line, got, tt.want)
			}
		})
	}
}

func TestReadLog(t *testing.T) {
	log := strings.Join([]string{
		"(APIServer pid=1) INFO 12-06 22:48:03 [api_utils.py:286] non-default args: {'model': '/tmp/x', 'port': 18250}",
		"(Worker pid=3) INFO 12-06 22:48:22 [cpu_worker.py:260] Explicitly set (1.0/23.54) GiB for KV cache on node 0.",
		"(EngineCore pid=2) INFO 12-06 22:48:22 [kv_cache_utils.py:2327] CPU KV cache size: 524,288 tokens, Maximum concurrency for 1,024 tokens per request: 512.00x",
		"(APIServer pid=1) INFO 12-06 22:48:23 [entry.py:140] Starting vLLM server on http://127.0.0.1:18250",
	}, "\n")
	got, err := readLog(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	want := Log{
		KV:             []string{"(EngineCore pid=<pid>) INFO <time> [kv_cache_utils.py:<line>] CPU KV cache size: <n,nnn> tokens, Maximum concurrency for <n,nnn> tokens per request: <n.nn>x"},
		NonDefaultArgs: "(APIServer pid=<pid>) INFO <time> [api_utils.py:<line>] non-default args: {…}",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readLog (-want +got):\n%s", diff)
	}
}

// page is a /metrics page in prometheus_client's form: each counter and
// histogram with its _created gauge, a runtime family, an info gauge.
const page = `# HELP python_gc_collections_total Number of times this generation was collected
# TYPE python_gc_collections_total counter
python_gc_collections_total{generation="0"} 1642.0
# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{engine="0",model_name="tiny"} 0.0
# HELP vllm:num_preemptions_created Cumulative number of preemption from the engine.
# TYPE vllm:num_preemptions_created gauge
vllm:num_preemptions_created{engine="0",model_name="tiny"} 1.79e+09
# HELP vllm:request_success_total Count of successfully processed requests.
# TYPE vllm:request_success_total counter
vllm:request_success_total{engine="0",finished_reason="stop",model_name="tiny"} 0.0
vllm:request_success_total{engine="0",finished_reason="length",model_name="tiny"} 3.0
# HELP vllm:iteration_tokens_total Histogram of number of tokens per engine_step.
# TYPE vllm:iteration_tokens_total histogram
vllm:iteration_tokens_total_bucket{engine="0",le="1.0",model_name="tiny"} 2.0
vllm:iteration_tokens_total_bucket{engine="0",le="+Inf",model_name="tiny"} 3.0
vllm:iteration_tokens_total_count{engine="0",model_name="tiny"} 3.0
vllm:iteration_tokens_total_sum{engine="0",model_name="tiny"} 9.0
# HELP vllm:iteration_tokens_total_created Histogram of number of tokens per engine_step.
# TYPE vllm:iteration_tokens_total_created gauge
vllm:iteration_tokens_total_created{engine="0",model_name="tiny"} 1.79e+09
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="tiny"} 0.0
# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig
# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="16",engine="0",num_gpu_blocks="4096"} 1.0
`

func TestParseMetrics(t *testing.T) {
	own, runtime, err := parseMetrics(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		family string
		want   Family
	}{
		{"a counter with its _created", "vllm:num_preemptions_total", Family{Type: "counter", Help: "Cumulative number of preemption from the engine.", Labels: []string{"engine", "model_name"}, Created: true}},
		{"an enumerated label's values, sorted", "vllm:request_success_total", Family{Type: "counter", Help: "Count of successfully processed requests.",
			Labels: []string{"engine", "finished_reason", "model_name"}, Values: map[string][]string{"finished_reason": {"length", "stop"}}}},
		{"a histogram without le, with its _created", "vllm:iteration_tokens_total", Family{Type: "histogram", Help: "Histogram of number of tokens per engine_step.", Labels: []string{"engine", "model_name"}, Created: true}},
		{"a gauge has no _created", "vllm:num_requests_running", Family{Type: "gauge", Help: "Number of requests in model execution batches.", Labels: []string{"engine", "model_name"}}},
		{"the configuration's values are dropped", "vllm:cache_config_info", Family{Type: "gauge", Help: "Information of the LLMEngine CacheConfig", Labels: []string{"block_size", "engine", "num_gpu_blocks"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, own[tt.family]); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tt.family, diff)
			}
		})
	}
	if len(own) != len(tests) {
		t.Errorf("%d engine families, want %d (the _created gauges folded): %v", len(own), len(tests), sortedKeys(own))
	}
	if want := map[string]string{"python_gc_collections_total": "counter"}; !cmp.Equal(runtime, want) {
		t.Errorf("runtime families %v, want %v", runtime, want)
	}
}

func TestDiff(t *testing.T) {
	base := func() *Surface {
		return &Surface{
			Health: Health{Loading: []string{"connection refused"}, Ready: Answer{Status: 200, Body: "(empty)"}},
			Log:    Log{KV: []string{"GPU KV cache size: <n,nnn> tokens"}},
			Metrics: map[string]Family{
				"vllm:a_total": {Type: "counter", Labels: []string{"engine", "model_name"}, Created: true},
				"vllm:b":       {Type: "gauge", Labels: []string{"engine", "model_name", "reason"}, Values: map[string][]string{"reason": {"x", "y"}}},
			},
			Streams: map[string]Answer{"chat": {Status: 200, Events: []Event{{Data: map[string]any{"object": "'chunk'"}, Repeated: true}, {Data: "[DONE]"}}}},
		}
	}
	tests := []struct {
		name   string
		change func(s *Surface)
		want   []string // Difference.String()
	}{
		{"the same surface", func(s *Surface) {}, nil},
		{"a family only on one side is one difference", func(s *Surface) { delete(s.Metrics, "vllm:a_total") },
			[]string{`metrics/vllm:a_total: want: {"created":true,"help":"","labels":["engine","model_name"],"type":"counter"}; got: (absent)`}},
		{"a family only on the other", func(s *Surface) { s.Metrics["vllm:c"] = Family{Type: "gauge", Labels: []string{}} },
			[]string{`metrics/vllm:c: want: (absent); got: {"help":"","labels":[],"type":"gauge"}`}},
		{"a label value missing", func(s *Surface) { s.Metrics["vllm:b"].Values["reason"] = []string{"x"} },
			[]string{`metrics/vllm:b/values/reason: only want: y`}},
		{"a changed scalar", func(s *Surface) { s.Health.Ready.Status = 503 },
			[]string{`health/ready/status: want: 200; got: 503`}},
		{"a changed log line", func(s *Surface) { s.Log.KV = []string{"CPU KV cache size: <n,nnn> tokens"} },
			[]string{`log/kv: only want: GPU KV cache size: <n,nnn> tokens; only got: CPU KV cache size: <n,nnn> tokens`}},
		{"an event missing", func(s *Surface) { s.Streams["chat"] = Answer{Status: 200, Events: []Event{{Data: "[DONE]"}}} },
			[]string{`streams/chat/events/0/data: want: {"object":"'chunk'"}; got: "[DONE]"`,
				`streams/chat/events/0/repeated: want: true; got: (absent)`,
				`streams/chat/events/1: want: {"data":"[DONE]"}; got: (absent)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := base()
			tt.change(got)
			diffs, err := Diff(base(), got)
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, d := range diffs {
				lines = append(lines, d.String())
			}
			if diff := cmp.Diff(tt.want, lines); diff != "" {
				t.Errorf("Diff (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMarshalRead(t *testing.T) {
	s := &Surface{Log: Log{KV: []string{"a <n> & b"}, NonDefaultArgs: "non-default args: {…}"}, Metrics: map[string]Family{"vllm:x": {Type: "gauge", Labels: []string{}}}}
	raw, err := Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"a <n> & b"`) || !strings.HasSuffix(string(raw), "}\n") {
		t.Errorf("Marshal escaped the patterns or lost the final newline:\n%s", raw)
	}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if diffs, _ := Diff(s, back); len(diffs) > 0 {
		t.Errorf("read back differs: %v", diffs)
	}
	if err := os.WriteFile(path, []byte(`{"health":{},"unknown":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(path); err == nil {
		t.Error("Read accepted an unknown key")
	}
}
