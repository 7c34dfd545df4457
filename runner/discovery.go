package runner

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/slogate/slogate/result"
)

// discover reads the version, KV capacity, max_model_len, GPUs, and
// prepares the workload's prompt builder.
func (r *run) discover(ctx context.Context) error {
	srv := r.cfg.Server
	facts := &r.results.Server
	facts.Endpoint = r.client.base
	facts.Version = r.client.version(ctx)
	for _, g := range gpus(ctx) {
		facts.GPUs = append(facts.GPUs, result.GPU{Index: g.Index, Name: g.Name, MemoryMiB: g.MemoryMiB})
	}
	var kvWarning string
	r.kvPool.Tokens, facts.KVCacheSource, kvWarning = r.discoverKVCapacity(ctx)
	r.kvPool.Engines = r.kvEngines(ctx)
	facts.KVCacheTokens = r.kvPool.Tokens
	if r.kvPool.Engines > 1 {
		facts.KVCacheEngines = r.kvPool.Engines
	}
	if kvWarning != "" {
		r.warn(kvWarning)
	}
	mml, err := r.setupWorkload(ctx)
	if err != nil {
		return err
	}
	if r.maxModelLen == 0 && srv.MaxModelLen != nil {
		r.maxModelLen = *srv.MaxModelLen
	}
	if r.maxModelLen == 0 {
		r.maxModelLen = mml
	}
	facts.MaxModelLen = r.maxModelLen
	kv := "unknown"
	if r.kvPool.Tokens > 0 {
		kv = fmt.Sprintf("%d tokens (from %s)", r.kvPool.Tokens, facts.KVCacheSource)
		if r.kvPool.Engines > 1 {
			kv += fmt.Sprintf(", %d per engine over %d data-parallel engines", r.kvPool.PerEngine(), r.kvPool.Engines)
		}
	}
	r.logf("server %s: version %s, max_model_len %d, KV cache %s", srv.Name, orDash(facts.Version), r.maxModelLen, kv)
	return ctx.Err()
}

// discoverKVCapacity is the one place that decides the server's KV cache
// capacity in tokens and where it came from (docs/method.md#kv-capacity);
// the first source that gives a value wins:
//
//  1. the spec's kv_cache_tokens ("spec": a user who knows better says so);
//  2. vllm:cache_config_info's kv_cache_size_tokens, one engine's capacity,
//     summed over the engines ("metrics"; docs/vllm.md#cache-config-info);
//  3. the "GPU KV cache size" lines of a launched server's log, one per
//     engine, summed ("log"; docs/vllm.md#kv-cache-log-lines);
//  4. num_gpu_blocks × block_size, taken once because num_gpu_blocks is
//     already the total over engines ("metrics-estimate"), with a warning:
//     on hybrid models block_size is not the token unit
//     (docs/vllm.md#hybrid-models);
//  5. unknown: 0, "" and a warning.
func (r *run) discoverKVCapacity(ctx context.Context) (tokens int64, source, warning string) {
	if kv := r.cfg.Server.KVCacheTokens; kv != nil && *kv > 0 {
		return *kv, result.KVSourceSpec, ""
	}
	snap, _, err := r.client.metrics(ctx)
	if err == nil && snap.KV.SizeTokens > 0 {
		return snap.KV.SizeTokens, result.KVSourceMetrics, ""
	}
	if r.serverProcess != nil {
		if n := kvFromLog(r.serverProcess.logPath); n > 0 {
			return n, result.KVSourceLog, ""
		}
	}
	if n := snap.KV.BlocksTimesBlockSize(); err == nil && n > 0 {
		return n, result.KVSourceMetricsEstimate, fmt.Sprintf("KV cache capacity %d tokens is estimated as vllm:cache_config_info's num_gpu_blocks %d × block_size %d "+
			"(the server reports no kv_cache_size_tokens label and logs no \"GPU KV cache size\" line): this is wrong for hybrid models "+
			"(Mamba or linear-attention layers, several KV cache groups), whose block_size is not the unit of a token capacity; "+
			"set kv_cache_tokens in the spec if you know the capacity (docs/vllm.md#hybrid-models)", n, snap.KV.NumGPUBlocks, snap.KV.BlockSize)
	}
	return 0, "", "KV cache capacity unknown (no kv_cache_tokens in the spec, no vllm:cache_config_info in /metrics, no \"GPU KV cache size\" log line): no cell is skipped as over capacity"
}

// kvEngines is the number of data-parallel engines the KV capacity is
// split over (docs/method.md#over-capacity): the spec's
// data_parallel_size, else the engines vllm:cache_config_info has a series
// for, else one.
func (r *run) kvEngines(ctx context.Context) int {
	if dp := r.cfg.Server.DataParallelSize; dp != nil && *dp > 1 {
		return *dp
	}
	if snap, _, err := r.client.metrics(ctx); err == nil && snap.KV.Engines > 1 {
		return snap.KV.Engines
	}
	return 1
}

// orDash shows an unknown value as "unknown".
func orDash(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

var (
	kvLogRe     = regexp.MustCompile(`GPU KV cache size: ([0-9][0-9,]*) tokens`)
	kvLogProcRe = regexp.MustCompile(`\((EngineCore\S*) pid=[0-9]+\)`)
)

// kvFromLog sums the "GPU KV cache size: N tokens" lines of a server log
// over the engines (docs/vllm.md#kv-cache-log-lines): each engine core
// logs its own capacity once, prefixed with its process name
// ("(EngineCore_DP1 pid=N)"); a line without the prefix counts as one
// engine. Both layouts match: the current one with "Maximum concurrency …"
// on the same line, and the older one with it on the next line. The last
// line of an engine wins. 0 when the log has no such line.
func kvFromLog(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	perEngine := map[string]int64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Bytes()
		m := kvLogRe.FindSubmatch(line)
		if m == nil {
			continue
		}
		v, err := strconv.ParseInt(string(bytes.ReplaceAll(m[1], []byte(","), nil)), 10, 64)
		if err != nil || v <= 0 {
			continue
		}
		engine := ""
		if p := kvLogProcRe.FindSubmatch(line); p != nil {
			engine = string(p[1])
		}
		perEngine[engine] = v
	}
	var n int64
	for _, v := range perEngine {
		if n > math.MaxInt64-v {
			return 0
		}
		n += v
	}
	return n
}

// gpus lists the GPUs with nvidia-smi when it is installed.
func gpus(ctx context.Context) []gpuInfo {
	path, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--query-gpu=index,name,memory.total", "--format=csv,noheader,nounits").Output()
	if err != nil {
		return nil
	}
	return parseGPUs(string(out))
}

type gpuInfo struct {
	Index     int
	Name      string
	MemoryMiB int
}

func parseGPUs(out string) []gpuInfo {
	var gs []gpuInfo
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, ",")
		if len(f) != 3 {
			continue
		}
		idx, err1 := strconv.Atoi(strings.TrimSpace(f[0]))
		mem, err2 := strconv.Atoi(strings.TrimSpace(f[2]))
		if err1 != nil || err2 != nil {
			continue
		}
		gs = append(gs, gpuInfo{idx, strings.TrimSpace(f[1]), mem})
	}
	return gs
}
