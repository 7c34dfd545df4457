package lifecycle

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vllmfake"
	"github.com/slogate/slogate/internal/warning"
)

func TestParseGPUs(t *testing.T) {
	got := parseGPUs("0, NVIDIA H200 NVL, 143771\n1, NVIDIA H200 NVL, 143771\n")
	want := []gpuInfo{{0, "NVIDIA H200 NVL", 143771}, {1, "NVIDIA H200 NVL", 143771}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestFactDisagreements: a warning for each fact the spec asked and the
// server states otherwise; none for a fact the spec left to the server or
// the server does not state.
func TestFactDisagreements(t *testing.T) {
	on, off := true, false
	fact := func(name string, figures map[string]float64) warning.Warning {
		return warning.Warning{Code: warning.FactDisagrees, Subject: name, Figures: figures}
	}
	counts := func(asked, stated float64) map[string]float64 {
		return map[string]float64{warning.FigAsked: asked, warning.FigStated: stated}
	}
	stated := map[string]string{"kv_cache_dtype": "vllm:cache_config_info", "enable_prefix_caching": "vllm:cache_config_info", "speculative": "server.log (non-default args)", "max_model_len": "GET /v1/models"}
	tests := []struct {
		name   string
		asked  result.ServerAsked
		server result.Server
		mml    int
		// want are the warnings by code, subject (the fact) and figures.
		want []warning.Warning
	}{
		{name: "all agree", asked: result.ServerAsked{KVCacheDtype: "fp8", PrefixCaching: &on, Speculative: "dflash", MaxModelLen: 8192},
			server: result.Server{KVCacheDtype: "fp8", PrefixCaching: &on, Speculative: "dflash", Stated: stated}, mml: 8192},
		{name: "everything differs", asked: result.ServerAsked{KVCacheDtype: "fp8", PrefixCaching: &off, Speculative: "dflash", MaxModelLen: 8192},
			server: result.Server{KVCacheDtype: "auto", PrefixCaching: &on, Stated: stated}, mml: 4096,
			want: []warning.Warning{fact("kv_cache_dtype", nil), fact("enable_prefix_caching", nil),
				fact("max_model_len", counts(8192, 4096)), fact("speculative", nil)}},
		{name: "a speculative block without a method agrees with any", asked: result.ServerAsked{Speculative: "on"},
			server: result.Server{Speculative: "dflash", Stated: stated}},
		{name: "a speculative block the server does not run", asked: result.ServerAsked{Speculative: "on"},
			server: result.Server{Stated: stated}, want: []warning.Warning{fact("speculative", nil)}},
		{name: "the spec left them to the server", server: result.Server{KVCacheDtype: "auto", PrefixCaching: &on, Stated: stated}},
		{name: "the server does not state them", asked: result.ServerAsked{KVCacheDtype: "fp8", Speculative: "dflash"},
			server: result.Server{KVCacheDtype: "fp8", Speculative: "dflash"}},
		{name: "a running limit the server resolved lower", asked: result.ServerAsked{MaxNumSeqs: 64},
			server: result.Server{MaxNumSeqs: 52, Stated: map[string]string{"max_num_seqs": "GET /server_info internal_states[].effective_max_running_requests_per_dp"}},
			want:   []warning.Warning{fact("max_num_seqs", counts(64, 52))}},
		{name: "a running limit the engine sized", server: result.Server{MaxNumSeqs: 4096, Stated: map[string]string{"max_num_seqs": "GET /server_info"}}},
		{name: "a running limit as asked", asked: result.ServerAsked{MaxNumSeqs: 48},
			server: result.Server{MaxNumSeqs: 48, Stated: map[string]string{"max_num_seqs": "GET /server_info"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := factDisagreements(&tc.asked, &tc.server, tc.mml)
			if diff := cmp.Diff(tc.want, warning.Textless(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnstatedFacts: the console names each fact the spec asked and the
// server did not state as the spec's; nothing for a stated fact or one the
// spec did not ask.
func TestUnstatedFacts(t *testing.T) {
	tests := []struct {
		name   string
		asked  result.ServerAsked
		stated map[string]string
		want   []UnstatedFact
	}{
		{name: "neither stated", asked: result.ServerAsked{KVCacheDtype: "fp8", Speculative: "dflash"},
			want: []UnstatedFact{{Fact: "kv_cache_dtype", Asked: "fp8"}, {Fact: "speculative", Asked: "dflash"}}},
		{name: "both stated", asked: result.ServerAsked{KVCacheDtype: "fp8", Speculative: "dflash"},
			stated: map[string]string{"kv_cache_dtype": "vllm:cache_config_info", "speculative": "server.log (non-default args)"}},
		{name: "nothing asked"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := unstatedFacts(&tc.asked, &result.Server{Stated: tc.stated})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestDiscoverKVCapacity: the spec, then kv_cache_size_tokens × engines,
// then the log lines summed over engines, then num_gpu_blocks × block_size
// once (with a warning), else unknown (docs/method.md#kv-capacity).
func TestDiscoverKVCapacity(t *testing.T) {
	logWith := filepath.Join(t.TempDir(), "server.log")
	os.WriteFile(logWith, []byte("(EngineCore_DP0 pid=2) INFO kv_cache_utils.py:1308] GPU KV cache size: 7,000 tokens, Maximum concurrency for 1,000 tokens per request: 7.00x\n"+
		"(EngineCore_DP1 pid=3) INFO kv_cache_utils.py:1308] GPU KV cache size: 7,000 tokens, Maximum concurrency for 1,000 tokens per request: 7.00x\n"), 0o644)
	specTokens := int64(5000)
	tests := []struct {
		name        string
		fake        func() *vllmfake.Server
		log         string // the launched server's log ("" = an endpoint)
		spec        *int64
		wantTokens  int64
		wantSource  string
		wantWarning warning.Code // "": none
	}{
		{name: "the spec beats everything", fake: func() *vllmfake.Server { return &vllmfake.Server{KVBlocks: 600, KVSizeTokens: 4800, Engines: 2} }, log: logWith, spec: &specTokens,
			wantTokens: 5000, wantSource: "spec"},
		{name: "kv_cache_size_tokens × engines beats the log", fake: func() *vllmfake.Server { return &vllmfake.Server{KVBlocks: 600, KVSizeTokens: 4800, Engines: 2} }, log: logWith,
			wantTokens: 9600, wantSource: "metrics"},
		{name: "the log, summed over engines, beats num_gpu_blocks × block_size", fake: func() *vllmfake.Server { return &vllmfake.Server{KVBlocks: 600, Engines: 2, NoKVSize: true} }, log: logWith,
			wantTokens: 14000, wantSource: "log"},
		{name: "num_gpu_blocks × block_size once, not per engine, with a warning", fake: func() *vllmfake.Server { return &vllmfake.Server{KVBlocks: 600, Engines: 2, NoKVSize: true} },
			wantTokens: 9600, wantSource: "metrics-estimate", wantWarning: warning.KVDoubtful},
		{name: "unknown", fake: func() *vllmfake.Server { return &vllmfake.Server{} }, wantWarning: warning.KVUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.fake().Start(t)
			srv := Endpoint(NewClient(s.URL, "", "qwen"))
			if tc.log != "" {
				srv.proc = &Process{logPath: tc.log}
			}
			tokens, source, warned, _ := srv.discoverKVCapacity(context.Background(), &spec.Server{Name: "q", KVCacheTokens: tc.spec})
			if tokens != tc.wantTokens || source != tc.wantSource {
				t.Errorf("discoverKVCapacity = %d %q, want %d %q", tokens, source, tc.wantTokens, tc.wantSource)
			}
			if warned.Code != tc.wantWarning || warned.Code == warning.KVDoubtful && warned.Subject != tc.wantSource {
				t.Errorf("warning %+v, want code %q (a doubtful capacity's about its source %q)", warned, tc.wantWarning, tc.wantSource)
			}
		})
	}
}

// TestStateFacts: each fact the engine states replaces the spec's in
// results.json, named in stated with its source; a fact it does not state
// keeps the spec's value.
func TestStateFacts(t *testing.T) {
	on := true
	tests := []struct {
		name       string
		facts      engine.Facts
		want       result.Server
		wantStated map[string]string
	}{
		{name: "every fact", facts: engine.Facts{KVCacheDtype: "fp8", BlockSize: 16, PrefixCaching: &on, Speculative: "dflash", MaxNumSeqs: 52,
			Stated: map[string]string{"kv_cache_dtype": "m", "block_size": "m", "enable_prefix_caching": "m", "speculative": "log", "max_num_seqs": "i"}},
			want:       result.Server{KVCacheDtype: "fp8", BlockSize: 16, PrefixCaching: &on, Speculative: "dflash", MaxNumSeqs: 52},
			wantStated: map[string]string{"kv_cache_dtype": "m", "block_size": "m", "enable_prefix_caching": "m", "speculative": "log", "max_num_seqs": "i"}},
		{name: "stated as none: no speculation", facts: engine.Facts{Stated: map[string]string{"speculative": "GET /server_info"}},
			want:       result.Server{KVCacheDtype: "auto", Speculative: ""},
			wantStated: map[string]string{"speculative": "GET /server_info"}},
		{name: "nothing stated: the spec's stay", facts: engine.Facts{KVCacheDtype: "fp8", BlockSize: 16},
			want: result.Server{KVCacheDtype: "auto", Speculative: "eagle3"}, wantStated: map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, stated := result.Server{KVCacheDtype: "auto", Speculative: "eagle3"}, map[string]string{}
			stateFacts(tc.facts, &got, stated)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("facts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStated, stated); diff != "" {
				t.Errorf("stated (-want +got):\n%s", diff)
			}
		})
	}
}
