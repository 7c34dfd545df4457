package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/slogate/slogate/internal/promread"
	"github.com/slogate/slogate/internal/result"
)

// vllmEngine is vLLM (docs/vllm.md): GET /version, vllm:* metrics,
// vllm:cache_config_info, the KV lines and the non-default args line of
// its log.
type vllmEngine struct{}

// SimFlags: the simulator imitates vLLM by default.
func (vllmEngine) SimFlags() []string { return nil }

// ParseMetrics reads vLLM's metric names (promread.Parse).
func (vllmEngine) ParseMetrics(r io.Reader, model string) (promread.Snapshot, error) {
	return promread.Parse(r, model)
}

// Version is GET /version.
func (vllmEngine) Version(ctx context.Context, c *Client) (string, string) {
	code, b, err := c.do(ctx, http.MethodGet, "/version", nil)
	if err != nil || code != http.StatusOK {
		return "", ""
	}
	var v struct {
		Version string `json:"version"`
	}
	json.Unmarshal(b, &v)
	return v.Version, "GET /version"
}

// KVCapacity is, the first that gives a value:
//
//  1. vllm:cache_config_info's kv_cache_size_tokens, one engine's capacity,
//     summed over the engines ("metrics"; docs/vllm.md#cache-config-info);
//  2. the KV lines of a launched server's log ("GPU KV cache size",
//     "Maximum concurrency"), per engine, summed ("log", with a warning
//     when an engine's two lines disagree; docs/vllm.md#kv-cache-log-lines);
//  3. num_gpu_blocks × block_size, taken once because num_gpu_blocks is
//     already the total over engines ("metrics-estimate"), with a warning:
//     on hybrid models block_size is not the token unit
//     (docs/vllm.md#hybrid-models);
//  4. unknown: 0, "" and a warning.
func (vllmEngine) KVCapacity(ctx context.Context, c *Client, logPath string, dp int) (tokens int64, source, warning, detail string) {
	snap, _, err := c.Metrics(ctx)
	if err == nil && snap.KV.SizeTokens > 0 {
		return snap.KV.SizeTokens, result.KVSourceMetrics, "", ""
	}
	if logPath != "" {
		if lr := kvFromLog(logPath, dp); lr.tokens > 0 {
			return lr.tokens, result.KVSourceLog, strings.Join(lr.warnings, "; "), lr.detail
		}
	}
	if n := snap.KV.BlocksTimesBlockSize(); err == nil && n > 0 {
		return n, result.KVSourceMetricsEstimate, fmt.Sprintf("KV cache capacity %d tokens is estimated as vllm:cache_config_info's num_gpu_blocks %d × block_size %d "+
			"(the server reports no kv_cache_size_tokens label and logs no \"GPU KV cache size\" line): this is wrong for hybrid models "+
			"(Mamba or linear-attention layers, several KV cache groups), whose block_size is not the unit of a token capacity; "+
			"set kv_cache_tokens in the spec if you know the capacity (docs/vllm.md#hybrid-models)", n, snap.KV.NumGPUBlocks, snap.KV.BlockSize), ""
	}
	return 0, "", "KV cache capacity unknown (no kv_cache_tokens in the spec, no vllm:cache_config_info in /metrics, no \"GPU KV cache size\" log line): no cell is skipped as over capacity", ""
}

// StatedFacts reads the KV cache dtype, block size and prefix caching from
// vllm:cache_config_info, and the speculative method from the startup
// log's "non-default args" line of a launched server: vLLM exposes no
// config metric for it (docs/vllm.md#server-facts).
func (vllmEngine) StatedFacts(ctx context.Context, c *Client, logPath string, facts *result.Server, stated map[string]string) {
	if snap, _, err := c.Metrics(ctx); err == nil {
		const from = "vllm:cache_config_info"
		if d := snap.KV.CacheDtype; d != "" {
			facts.KVCacheDtype = d
			stated["kv_cache_dtype"] = from
		}
		if snap.KV.BlockSize > 0 {
			facts.BlockSize = snap.KV.BlockSize
			stated["block_size"] = from
		}
		if p := snap.KV.PrefixCaching; p != "" {
			on := p == "True"
			facts.PrefixCaching = &on
			stated["enable_prefix_caching"] = from
		}
	}
	if logPath != "" {
		if method, ok := speculativeFromLog(logPath); ok {
			facts.Speculative = method
			stated["speculative"] = "server.log (non-default args)"
		}
	}
}

// TokenizeStatesContext: vLLM's /tokenize answers the server's max_model_len.
func (vllmEngine) TokenizeStatesContext() bool { return true }

// ChatPromptTokens: vLLM's /tokenize always takes messages.
func (vllmEngine) ChatPromptTokens(context.Context, *Client, any, map[string]any) (int, bool, error) {
	return 0, false, nil
}

// SpeculativeIdle: vLLM counts drafts in vllm:spec_decode_num_drafts_total
// and switches speculation off per request for some sampling settings
// (docs/method.md#workload).
func (vllmEngine) SpeculativeIdle() string {
	return "speculative decoding did not run in this cell (vllm:spec_decode_num_drafts_total did not move): check the server's --speculative-config and its log"
}
