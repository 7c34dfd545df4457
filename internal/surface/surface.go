// Package surface records what an inference server with vLLM's HTTP API
// shows of itself — its /metrics families, the KV capacity line of its
// startup log, the shapes of its answers and stream chunks, its error
// bodies — normalized so that two runs of the same server record the same
// Surface: no ids, timestamps, token texts or values that vary. It exists
// to hold slogate's simulator against a real vLLM: scripts/
// record-vllm-surface.sh records a release into a golden file
// (internal/sim/testdata/surface/), and the simulator's fidelity test
// records the simulator with the same Record and lists the differences
// (Diff). docs/simulator.md#fidelity says what is recorded and why.
package surface

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
)

// Surface is one server's observable surface, normalized. Its JSON form
// (Marshal) is the golden file's.
type Surface struct {
	// Health is GET /health while the server loads and once it is ready.
	Health Health `json:"health"`
	// Log is the startup log's lines slogate reads, as patterns.
	Log Log `json:"log"`
	// Endpoints are the plain answers, by name: version (GET /version),
	// models (GET /v1/models), tokenize (POST /tokenize), completion and
	// chat (non-streaming POST /v1/completions and /v1/chat/completions).
	Endpoints map[string]Answer `json:"endpoints"`
	// Streams are streaming completions and chats, by name: completions
	// and chat, each without stream_options (_no_usage), with
	// include_usage and with continuous_usage_stats too (_continuous).
	Streams map[string]Answer `json:"streams"`
	// Errors are the answers to requests the server refuses or bounds, by
	// name (see the probes in record.go).
	Errors map[string]Answer `json:"errors"`
	// Metrics are the server's own /metrics families (vllm:*), by the
	// name of their TYPE line.
	Metrics map[string]Family `json:"metrics"`
	// RuntimeMetrics are the other families — the Python runtime's
	// (python_*, process_*) and the HTTP instrumentator's (http_*) — by
	// name, with their type only: they belong to the server's runtime, not
	// to the engine, and slogate reads none of them.
	RuntimeMetrics map[string]string `json:"runtime_metrics"`
}

// Health is what GET /health answers over a server's start.
type Health struct {
	// Loading are the distinct answers seen before the first 200, in the
	// order first seen: "connection refused", "HTTP 503", … Empty when
	// the server was ready at the first poll (the recorder started late).
	Loading []string `json:"loading"`
	// Ready is the answer once ready.
	Ready Answer `json:"ready"`
}

// Log holds the startup log's lines that slogate parses
// (internal/engine/vllm/facts.go), with pids, timestamps, source line
// numbers and numbers replaced by placeholders (Pattern).
type Log struct {
	// KV are the KV cache capacity lines ("… KV cache size: N tokens",
	// "Maximum concurrency for M tokens per request: Xx"), in order.
	KV []string `json:"kv"`
	// NonDefaultArgs is the "non-default args: {…}" line, its dict elided.
	NonDefaultArgs string `json:"non_default_args"`
}

// Answer is one HTTP answer, normalized.
type Answer struct {
	// Status is the HTTP status code.
	Status int `json:"status"`
	// ContentType is the Content-Type header as sent, lower case.
	ContentType string `json:"content_type,omitempty"`
	// Body is the shape of a JSON body (Shape), "(empty)" for an empty
	// body, "(text)" for another; nil for an event stream.
	Body any `json:"body,omitempty"`
	// Events are an event stream's events in order, runs of alike events
	// collapsed into one marked Repeated.
	Events []Event `json:"events,omitempty"`
	// CompletionTokens is usage.completion_tokens, recorded only by the
	// probes whose point is the output's length (over_max_model_len_output).
	CompletionTokens *int `json:"completion_tokens,omitempty"`
}

// Event is one server-sent event (or a run of alike ones).
type Event struct {
	// Data is the shape of the event's JSON data (Shape), or the data
	// itself when it is not JSON ("[DONE]").
	Data any `json:"data"`
	// Repeated marks a run of two or more consecutive events of the same
	// shape (a stream's content chunks), however many.
	Repeated bool `json:"repeated,omitempty"`
}

// Family is one /metrics family, values dropped.
type Family struct {
	// Type is the TYPE line's: counter, gauge, histogram, summary, untyped.
	Type string `json:"type"`
	// Help is the HELP line's text.
	Help string `json:"help"`
	// Labels are the label names of its series, sorted, without le and
	// quantile (a histogram's and a summary's own).
	Labels []string `json:"labels"`
	// Values are the values of its enumerated labels, sorted, by label:
	// every label but engine, model_name, le and quantile, and none of
	// vllm:cache_config_info, whose labels are the server's configuration.
	Values map[string][]string `json:"values,omitempty"`
	// Created says a NAME_created gauge family accompanies it, as
	// prometheus_client writes one beside each counter and histogram.
	Created bool `json:"created,omitempty"`
}

// Marshal is s as the golden file holds it: indented JSON, keys sorted,
// ending in a newline.
func Marshal(s *Surface) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Read reads a golden file written by Marshal.
func Read(path string) (*Surface, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Surface
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
