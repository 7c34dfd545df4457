package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/slogate/slogate/result"
	"github.com/slogate/slogate/spec"
)

func TestWindowStatus(t *testing.T) {
	tests := []struct {
		name       string
		gateQueued bool
		sawWaiting bool
		activeAvg  float64
		want       result.Status
		wantReason string
	}{
		{name: "all streams active", activeAvg: 63.9, want: result.StatusValid},
		{name: "the gate found a queue", gateQueued: true, activeAvg: 64, want: result.StatusQueued, wantReason: "gate reason"},
		{name: "waiting requests during the window", sawWaiting: true, activeAvg: 64, want: result.StatusQueued,
			wantReason: "the server reported waiting requests during the window"},
		{name: "under 95% active", activeAvg: 60.7, want: result.StatusQueued, wantReason: "only 60.7 of 64 streams active on average"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, reason := windowStatus(tc.gateQueued, "gate reason", tc.sawWaiting, tc.activeAvg, 64)
			if got != tc.want || reason != tc.wantReason {
				t.Errorf("windowStatus = %s %q, want %s %q", got, reason, tc.want, tc.wantReason)
			}
		})
	}
}

// TestDiscoverKVCapacity: /metrics first, then the server's log, then the
// spec's kv_cache_tokens.
func TestDiscoverKVCapacity(t *testing.T) {
	logWith := filepath.Join(t.TempDir(), "server.log")
	os.WriteFile(logWith, []byte("INFO kv_cache_utils.py:1087] GPU KV cache size: 7,000 tokens\n"), 0o644)
	specTokens := int64(5000)
	tests := []struct {
		name       string
		kvBlocks   int    // in /metrics (× 16 tokens)
		log        string // the launched server's log ("" = an endpoint)
		spec       *int64
		wantTokens int64
		wantSource string
	}{
		{name: "metrics beat the log and the spec", kvBlocks: 600, log: logWith, spec: &specTokens, wantTokens: 9600, wantSource: "metrics"},
		{name: "the log beats the spec", log: logWith, spec: &specTokens, wantTokens: 7000, wantSource: "log"},
		{name: "the spec when the server says nothing", spec: &specTokens, wantTokens: 5000, wantSource: "spec"},
		{name: "unknown", wantTokens: 0, wantSource: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := (&fakeVLLM{kvBlocks: tc.kvBlocks}).start(t)
			r := &run{cfg: Config{Server: &spec.Server{Name: "q", KVCacheTokens: tc.spec}}, client: newAPIClient(s.URL, "", "qwen")}
			if tc.log != "" {
				r.serverProcess = &process{logPath: tc.log}
			}
			tokens, source := r.discoverKVCapacity(context.Background())
			if tokens != tc.wantTokens || source != tc.wantSource {
				t.Errorf("discoverKVCapacity = %d %q, want %d %q", tokens, source, tc.wantTokens, tc.wantSource)
			}
		})
	}
}
