package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The firehose (issue 28): what slogate's own reading of the streams
// costs. One decode cell of 128 streams at 1 ms between tokens on the
// simulator (128,000 one-token chunks a second), run as a user runs it,
// `slogate run -endpoint URL spec.hcl`, timed as a whole process: its user
// + system CPU (rusage) divided by the tokens the simulator generated
// meanwhile (its vllm:generation_tokens_total), so that the same count
// serves any client. With SLOGATE_SEEDS_TOOL naming llm-inference-bench's
// llm_decode_bench.py (github.com/voipmonitor/llm-inference-bench, the
// seed reports' tool; needs python3-httpx and python3-rich), that tool is
// run beside it on the same server with the same streams, each iteration,
// and its figure and the ratio are reported too. The machine is shared:
// run several iterations and read the medians it reports. tokens/chunk
// says whether a run read the firehose: near 1, each token its own chunk
// (vLLM's one chunk a step); far above it the simulator fell behind and
// sent each stream's tokens in bursts (23 a burst on this 2-core machine
// at a load average of 20), so the figure is mostly each request's cost,
// its chunks' diluted, and not comparable with a run near 1:
//
//	go test ./e2e -run '^$' -bench Firehose -benchtime 5x
//	SLOGATE_SEEDS_TOOL=/path/llm_decode_bench.py go test ./e2e -run '^$' -bench Firehose -benchtime 5x

// firehoseSpec is the cell: 10 s, as the seeds' tool's --duration 10,
// with its 128-token requests.
const firehoseSpec = `server "sim" {
  model             = "m"
  served_model_name = "m"
  max_model_len     = 100000
}
measure {
  duration   = "10s"
  max_output = 128
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [128]
}
`

// firehoseMaxOutput is the spec's max_output: the most tokens a chunk can carry.
const firehoseMaxOutput = 128

// firehoseRun is one client's run: its CPU and the tokens generated for it.
type firehoseRun struct {
	cpu    time.Duration
	tokens int64
}

func (r firehoseRun) usPerToken() float64 {
	return float64(r.cpu.Microseconds()) / float64(max(r.tokens, 1))
}

func BenchmarkFirehose(b *testing.B) {
	if testing.Short() {
		b.Skip("firehose: a 15 s run of slogate per iteration")
	}
	seeds := os.Getenv("SLOGATE_SEEDS_TOOL")
	mark := newMark(b)
	b.Cleanup(func() { noLeftovers(b, mark) })
	base := startSim(b, mark, "m", "--sim-tbt", "1ms", "--sim-ttft", "1ms", "--max-model-len", "100000",
		"--sim-kv-tokens", "100000000", "--max-num-seqs", "1024", "--sim-log-interval", "0")
	dir := b.TempDir()
	spec := filepath.Join(dir, "firehose.hcl")
	if err := os.WriteFile(spec, []byte(firehoseSpec), 0o644); err != nil {
		b.Fatal(err)
	}
	var ours, theirs, perChunk []float64
	for i := 0; b.Loop(); i++ {
		out := filepath.Join(dir, fmt.Sprintf("out%d", i))
		r := firehoseClient(b, base, mark, exec.Command(bin, "run", "-endpoint", base, "-out", out, spec))
		received, chunks := requestsRead(b, filepath.Join(out, "requests.jsonl"))
		// Tokens generated but never read (streams cut at the window's
		// end) are a few per stream; more than 1 % means the count is wrong.
		if d := r.tokens - received; d < 0 || d > r.tokens/100 {
			b.Fatalf("the simulator generated %d tokens, slogate's requests.jsonl records %d", r.tokens, received)
		}
		// A chunk carries a token at least, and no more than its request's.
		if chunks == 0 || chunks > received || received > chunks*firehoseMaxOutput {
			b.Fatalf("requests.jsonl records %d tokens in %d chunks", received, chunks)
		}
		ours = append(ours, r.usPerToken())
		perChunk = append(perChunk, float64(received)/float64(chunks))
		b.Logf("slogate: %v CPU, %d tokens in %d chunks (%.1f a chunk): %.2f µs a token", r.cpu, r.tokens, chunks, perChunk[i], r.usPerToken())
		if seeds != "" {
			cmd := exec.Command("/usr/bin/python3", seeds, "--host", "127.0.0.1", "--port", base[strings.LastIndexByte(base, ':')+1:],
				"--model", "m", "--contexts", "0", "--concurrency", "128", "--duration", "10", "--max-tokens", "128",
				"--display-mode", "plain", "--skip-prefill", "--kv-budget", "131072", "--no-hw-monitor",
				"--output", filepath.Join(dir, fmt.Sprintf("seeds%d.json", i)))
			cmd.Dir = dir
			s := firehoseClient(b, base, mark, cmd)
			theirs = append(theirs, s.usPerToken())
			b.Logf("llm_decode_bench.py: %v CPU, %d tokens: %.2f µs a token", s.cpu, s.tokens, s.usPerToken())
		}
	}
	b.ReportMetric(median(ours), "µs/token")
	b.ReportMetric(median(perChunk), "tokens/chunk")
	if median(perChunk) > 2 {
		b.Logf("the simulator sent %.1f tokens a chunk: it fell behind, and µs/token is mostly the requests' cost, not the firehose's chunks'", median(perChunk))
	}
	if len(theirs) > 0 {
		b.ReportMetric(median(theirs), "seeds-µs/token")
		b.ReportMetric(median(theirs)/median(ours), "seeds/slogate")
	}
}

// firehoseClient runs cmd to its end (at most 2 min) against the
// simulator at base and returns its CPU time and the tokens the simulator
// generated while it ran.
func firehoseClient(b *testing.B, base, mark string, cmd *exec.Cmd) firehoseRun {
	b.Helper()
	before := generatedTokens(b, base)
	cmd.Env = append(childEnv(), markEnv+"="+mark, "NO_COLOR=1")
	cmd.Stdin = nil
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	timer := time.AfterFunc(2*time.Minute, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	err := cmd.Wait()
	timer.Stop()
	if err != nil {
		b.Fatalf("%s: %v\n%s", filepath.Base(cmd.Args[0]), err, log.String())
	}
	st := cmd.ProcessState
	return firehoseRun{cpu: st.UserTime() + st.SystemTime(), tokens: generatedTokens(b, base) - before}
}

// generatedTokens is the simulator's vllm:generation_tokens_total.
func generatedTokens(b *testing.B, base string) int64 {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var n float64
	found := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if name, value, ok := strings.Cut(sc.Text(), " "); ok && strings.HasPrefix(name, "vllm:generation_tokens_total") {
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				b.Fatalf("%s: %v", sc.Text(), err)
			}
			n, found = n+v, true
		}
	}
	if !found {
		b.Fatal("the simulator's /metrics has no vllm:generation_tokens_total")
	}
	return int64(n)
}

// requestsRead sums the output tokens of a requests.jsonl and the chunks
// that carried them: a request's ITLs plus one (a burst written back to
// back is one chunk, docs/method.md#bursts), one for a request of one
// chunk.
func requestsRead(b *testing.B, path string) (tokens, chunks int64) {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	for {
		var r struct {
			OutputTokens int64 `json:"output_tokens"`
			ITL          *struct {
				Count int64 `json:"count"`
			} `json:"itl_ms"`
		}
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			return tokens, chunks
		} else if err != nil {
			b.Fatal(err)
		}
		tokens += r.OutputTokens
		switch {
		case r.ITL != nil:
			chunks += r.ITL.Count + 1
		case r.OutputTokens > 0:
			chunks++
		}
	}
}

// median of xs (not modified).
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
