package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestServerFactsInReport: report.md shows a server fact as the server
// stated it, with the spec's differing ask beside it, and a fact the
// server did not state as the spec's, saying so.
func TestServerFactsInReport(t *testing.T) {
	tests := []struct {
		name   string
		server result.Server
		want   []string
	}{
		{name: "not stated", server: result.Server{KVCacheDtype: "fp8", Speculative: "dflash",
			Asked: &result.ServerAsked{KVCacheDtype: "fp8", Speculative: "dflash"}},
			want: []string{"fp8 (from the spec; the server did not say)", "dflash (from the spec; the server did not say)"}},
		{name: "stated otherwise", server: result.Server{KVCacheDtype: "auto", Speculative: "eagle3",
			Asked:  &result.ServerAsked{KVCacheDtype: "fp8", Speculative: "dflash"},
			Stated: map[string]string{"kv_cache_dtype": "vllm:cache_config_info", "speculative": "server.log (non-default args)"}},
			want: []string{"auto (the spec asked fp8)", "eagle3 (the spec asked dflash)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.server.Name, tc.server.Model = "qwen", "Qwen/Qwen3.5-4B"
			res := &result.Results{Schema: result.Schema, Spec: "specs/qwen.hcl", Server: tc.server,
				Decode: []result.DecodeCell{{Matrix: "decode", Context: 8192, Concurrency: 1, Status: vocab.StatusValid, TotalTPS: 400}}}
			var b bytes.Buffer
			if err := WriteMarkdown(&b, res); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("report.md lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
}
