package vllm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/engine"
)

// KVCacheSpaceEnv is the variable vLLM's CPU build sizes its KV cache by,
// in GiB (vllm/platforms/cpu.py, "Legacy setting"): when set it becomes
// kv_cache_memory_bytes and --gpu-memory-utilization no longer sizes the
// cache (docs/vllm.md#cpu-build).
const KVCacheSpaceEnv = "VLLM_CPU_KVCACHE_SPACE"

// CPUAttentionBackend is the one attention backend of vLLM's CPU build
// for models without MLA: any other --attention-backend is logged
// ("Cannot use X backend on CPU.") and ignored (CpuPlatform.
// get_attn_backend_cls, vllm/platforms/cpu.py).
const CPUAttentionBackend = "CPU_ATTN"

// CPUCacheDTypes are the KV cache dtypes the CPU build takes: its
// attention backend's (CPUAttentionBackend.supported_kv_cache_dtypes,
// vllm/v1/attention/backends/cpu_attn.py, 0.31.0 and 0.32.0: auto and the
// fp8 ones), and bfloat16 and float16, a model's own dtype, which vLLM
// 0.32.0's CPU build served here as auto.
var CPUCacheDTypes = []string{"auto", "bfloat16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2"}

// checkLaunch reports what vLLM's CPU build (device = "cpu") ignores or
// refuses of a launch, and a CPU build's variable set without it
// (docs/vllm.md#cpu-build); at are the server block's attributes.
func checkLaunch(l engine.Launch, at hcl.Attributes) hcl.Diagnostics {
	_, kvSpace := l.Env[KVCacheSpaceEnv]
	if l.Device != engine.DeviceCPU {
		if a, ok := at["env"]; ok && kvSpace {
			return hcl.Diagnostics{warning("CPU build setting without device = \"cpu\"", a, fmt.Sprintf(
				"env sets %s, which only vLLM's CPU build reads: write device = \"cpu\" if the command launches vllm-cpu, so that slogate counts server time, not GPU time, and checks what that build ignores (docs/spec.md#device).", KVCacheSpaceEnv))}
		}
		return nil
	}
	var diags hcl.Diagnostics
	if a, ok := at["gpu_memory_utilization"]; ok && kvSpace && l.GPUMemoryUtilization != nil {
		diags = append(diags, warning("gpu_memory_utilization ignored by the CPU build", a, fmt.Sprintf(
			"env sets %s, so vLLM's CPU build sizes its KV cache by it (GiB) and not by gpu_memory_utilization (vllm/platforms/cpu.py; docs/vllm.md#cpu-build): remove one of them.", KVCacheSpaceEnv)))
	}
	if !kvSpace && l.GPUMemoryUtilization == nil && !slices.ContainsFunc(l.Args, func(s string) bool { return strings.HasPrefix(s, "--kv-cache-memory-bytes") }) {
		if a, ok := at["device"]; ok {
			diags = append(diags, warning("CPU KV cache not sized", a, fmt.Sprintf(
				"Without %s in env (GiB), gpu_memory_utilization or --kv-cache-memory-bytes, vLLM's CPU build reserves gpu_memory_utilization's default, 0.92, of the machine's memory for its worker and exits at start-up when less than that is free (vllm/v1/worker/cpu_worker.py): write env = { %s = \"4\" } (docs/vllm.md#cpu-build).",
				KVCacheSpaceEnv, KVCacheSpaceEnv)))
		}
	}
	if a, ok := at["attention_backend"]; ok && l.AttentionBackend != "" && !strings.EqualFold(l.AttentionBackend, CPUAttentionBackend) {
		diags = append(diags, warning("attention_backend ignored by the CPU build", a, fmt.Sprintf(
			"vLLM's CPU build runs %s whatever --attention-backend says (it logs \"Cannot use %s backend on CPU.\": vllm/platforms/cpu.py): remove attention_backend, or the measurement is labelled with a backend that did not run.",
			CPUAttentionBackend, l.AttentionBackend)))
	}
	if a, ok := at["kv_cache_dtype"]; ok && l.KVCacheDtype != "" && !slices.Contains(CPUCacheDTypes, l.KVCacheDtype) {
		diags = append(diags, warning("KV cache dtype not listed by the CPU build", a, fmt.Sprintf(
			"vLLM's CPU attention backend lists kv_cache_dtype auto, fp8, fp8_e4m3 and fp8_e5m2 (supported_kv_cache_dtypes in vllm/v1/attention/backends/cpu_attn.py), and takes the model's own bfloat16 or float16; with %q it may find no attention backend and exit at start-up (docs/vllm.md#cpu-build).",
			l.KVCacheDtype)))
	}
	return diags
}

// warning is a warning diagnostic on attribute a's value.
func warning(summary string, a *hcl.Attribute, detail string) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: summary, Detail: detail, Subject: a.Expr.Range().Ptr(), Context: a.Range.Ptr()}
}
