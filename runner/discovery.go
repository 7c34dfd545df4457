package runner

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
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
	r.kvCapacity, facts.KVCacheSource = r.discoverKVCapacity(ctx)
	facts.KVCacheTokens = r.kvCapacity
	if r.kvCapacity == 0 {
		r.warn("KV cache capacity unknown (no vllm:cache_config_info in /metrics, no \"GPU KV cache size\" log line, no kv_cache_tokens in the spec): no cell is skipped as over capacity")
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
	if r.kvCapacity > 0 {
		kv = fmt.Sprintf("%d tokens (from %s)", r.kvCapacity, facts.KVCacheSource)
	}
	r.logf("server %s: version %s, max_model_len %d, KV cache %s", srv.Name, orDash(facts.Version), r.maxModelLen, kv)
	return ctx.Err()
}

// discoverKVCapacity is the one place that finds the server's KV cache
// capacity in tokens (docs/method.md#kv-capacity), and where it came from:
// vllm:cache_config_info in /metrics, else the "GPU KV cache size" line of
// the server's log (a launched server only), else the spec's
// kv_cache_tokens. 0 and "" when none says.
func (r *run) discoverKVCapacity(ctx context.Context) (tokens int64, source string) {
	if snap, _, err := r.client.metrics(ctx); err == nil && snap.KVCacheTokens > 0 {
		return snap.KVCacheTokens, "metrics"
	}
	if r.serverProcess != nil {
		if n := kvFromLog(r.serverProcess.logPath); n > 0 {
			return n, "log"
		}
	}
	if kv := r.cfg.Server.KVCacheTokens; kv != nil && *kv > 0 {
		return *kv, "spec"
	}
	return 0, ""
}

// orDash shows an unknown value as "unknown".
func orDash(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

var kvLogRe = regexp.MustCompile(`GPU KV cache size: ([0-9][0-9,]*) tokens`)

// kvFromLog finds the last "GPU KV cache size: N tokens" line in a log.
func kvFromLog(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	var n int64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if m := kvLogRe.FindSubmatch(sc.Bytes()); m != nil {
			if v, err := strconv.ParseInt(string(bytes.ReplaceAll(m[1], []byte(","), nil)), 10, 64); err == nil {
				n = v
			}
		}
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
