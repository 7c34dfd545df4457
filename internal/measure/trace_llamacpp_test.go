package measure

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/workload"
)

// startLlamaServer launches $SLOGATE_LLAMA_SERVER on tiny.gguf
// ($SLOGATE_LLAMACPP_MODELS, else /tmp/gguf) with one slot of 4096
// tokens and returns its base URL; the test skips without them. The
// server's process group is killed when the test ends.
func startLlamaServer(t *testing.T, args ...string) string {
	t.Helper()
	server := os.Getenv("SLOGATE_LLAMA_SERVER")
	models := os.Getenv("SLOGATE_LLAMACPP_MODELS")
	if models == "" {
		models = "/tmp/gguf"
	}
	model := filepath.Join(models, "tiny.gguf")
	if _, err := os.Stat(model); server == "" || err != nil {
		t.Skip("needs SLOGATE_LLAMA_SERVER and tiny.gguf in SLOGATE_LLAMACPP_MODELS (docs/ci.md#llamacpp)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(server, append([]string{"-m", model, "--host", "127.0.0.1", "--port", fmt.Sprint(port), "-c", "4096", "-np", "1", "-t", "1"}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if resp, err := http.Get(base + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("llama-server not ready in 60 s:\n%s", log.String())
		}
	}
}

// TestTraceCacheHitsLlamaCpp replays the Mooncake fixture's prompts
// (testdata/traces/mooncake.jsonl) one after the other on a real
// llama-server with one slot (docs/spec.md#traces): the server counts
// exactly each line's input_length of prompt tokens (prompt_n + cache_n),
// and reuses (timings.cache_n) exactly the tokens of the hash_ids blocks
// a request shares with a prompt it still holds: its slot's last prompt,
// or, with its host-memory prompt cache (--cache-ram, on by default), an
// earlier one it kept. Line 2 shares blocks 0 and 1 (1000 tokens) with
// line 1, the slot's last prompt; line 4 shares 1200 with line 2 and line
// 5 block 3's 512 with line 3, prompts the slot no longer holds.
func TestTraceCacheHitsLlamaCpp(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCached []int
	}{
		{name: "prompt cache in host memory", wantCached: []int{0, 1000, 0, 1200, 512, 0}},
		{name: "the slot's last prompt only", args: []string{"--cache-ram", "0"}, wantCached: []int{0, 1000, 0, 0, 0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := startLlamaServer(t, tc.args...)
			got := replayCacheN(t, base)
			t.Logf("cache_n by line: %v", got)
			for i := range tc.wantCached {
				if got[i] != tc.wantCached[i] {
					t.Errorf("cache_n by line %v; want %v", got, tc.wantCached)
					break
				}
			}
		})
	}
}

// replayCacheN sends the Mooncake fixture's planned prompts to the
// llama-server at base in order and returns each one's timings.cache_n,
// checking that prompt_n + cache_n is the line's input_length.
func replayCacheN(t *testing.T, base string) []int {
	t.Helper()
	ctx := context.Background()
	c := lifecycle.NewClient(base, "", "tiny").ForServer(&spec.Server{Engine: "llamacpp"})
	d, err := requests.ReadDataset("../../testdata/traces/mooncake.jsonl", "")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := requests.NewScheduler(lifecycle.NewTokenizer(c), workload.Options{Prompt: workload.DatasetPrompt, Seed: 1}, d).
		Schedule(ctx, requests.ScheduleConfig{Requests: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for i, r := range plan.Requests {
		body, _ := json.Marshal(map[string]any{"prompt": r.Tokens, "n_predict": 1, "cache_prompt": true})
		resp, err := http.Post(base+"/completion", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Timings struct {
				CacheN  int `json:"cache_n"`
				PromptN int `json:"prompt_n"`
			} `json:"timings"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if n := out.Timings.PromptN + out.Timings.CacheN; n != d.Entries[i].Trace.InputTokens {
			t.Errorf("line %d: the server counted %d prompt tokens; the trace says %d", r.Line, n, d.Entries[i].Trace.InputTokens)
		}
		got = append(got, out.Timings.CacheN)
	}
	return got
}
