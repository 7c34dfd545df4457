package e2e

import (
	"bufio"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/result/resulttest"
	"github.com/slogate/slogate/internal/vocab"
)

// TestChatMatchesSimulatorSettings: measure.endpoint = "chat" streams
// /v1/chat/completions (role chunk first) with prompts calibrated through
// /tokenize, and measures the configured flat timings as completions does
// (within the margins of checkFlatTimings).
func TestChatMatchesSimulatorSettings(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	const tbtMs, ttftMs = 10.0, 400.0
	spec := writeSpec(t, freePort(t), `"--sim-tbt", "10ms", "--sim-ttft", "400ms", "--sim-kv-tokens", "1000000"`, `
measure {
  duration   = "2s"
  max_output = 4096
  endpoint   = "chat"
}
prefill { contexts = ["1K", "4K"] }
matrix "decode" {
  contexts    = ["1K", "4K"]
  concurrency = [1, 4]
}
`)
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, 3*time.Minute, "", nil, "run", "-sim", "-v", "-out", out, spec)
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	results := readResults(t, out)
	if results.Measure.Endpoint != "chat" || len(results.Warnings) != 0 {
		t.Errorf("measure %+v, warnings %q", results.Measure, results.Warnings)
	}
	if len(results.Prefill) != 2 || len(results.Decode) != 4 {
		t.Fatalf("results: %+v", results)
	}
	for _, c := range results.Prefill {
		if c.Status != vocab.StatusValid || c.TPS <= 0 {
			t.Errorf("prefill %s: %+v", c.Ref().Name(), c)
		}
	}
	for _, c := range results.Decode {
		t.Logf("%s: total_tps %.1f tbt_ms %.2f ttft_ms %.1f", c.Ref().Name(), c.TotalTPS, c.TBTMs, c.TTFTMs)
		checkFlatTimings(t, c, tbtMs, ttftMs)
		if c.TokenSource != "usage" || len(resulttest.UnexplainedWarnings(c)) != 0 {
			t.Errorf("%s: token_source %q warnings %q", c.Ref().Name(), c.TokenSource, c.Warnings)
		}
	}
}

// TestChatPromptsAreExact: the chat prompts the runner sends render to
// exactly the context length: the simulator's vllm:prompt_tokens_total
// grows by 1K + 4K for the two cold prefill requests.
func TestChatPromptsAreExact(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	t.Cleanup(func() { noLeftovers(t, mark) }) // runs after startSim's own cleanup
	base := startSim(t, mark, "Qwen/Qwen3.5-4B", "--served-model-name", "qwen", "--sim-tbt", "5ms", "--sim-ttft", "20ms")
	before := promptTokensTotal(t, base)
	spec := writeSpec(t, freePort(t), "", `
measure {
  duration   = "1s"
  max_output = 16
  endpoint   = "chat"
}
prefill { contexts = ["1K", "4K"] }
`)
	r := slogate(t, mark, time.Minute, "", nil, "run", "-endpoint", base, "-out", t.TempDir(), spec)
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if got := promptTokensTotal(t, base) - before; got != 1024+4096 {
		t.Errorf("prompt tokens sent = %d, want %d (1K + 4K)", got, 1024+4096)
	}
}

// promptTokensTotal reads vllm:prompt_tokens_total from the server's /metrics.
func promptTokensTotal(t *testing.T, base string) int64 {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "vllm:prompt_tokens_total") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		return int64(v)
	}
	t.Fatalf("no vllm:prompt_tokens_total in %s/metrics", base)
	return 0
}
