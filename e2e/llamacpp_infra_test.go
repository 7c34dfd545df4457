package e2e

// The real engine's infrastructure (issue 27, docs/ci.md#llamacpp): the
// llama-server that scripts/llamacpp-setup.sh installs, run through
// scripts/llama-server, on the generated tiny.gguf. These tests need no
// engine support in slogate: they prove that the server starts, answers
// and is stopped by a signal to its process group as slogate stops a
// server it launched (SIGTERM, or SIGKILL), leaving no process behind.
//
// SLOGATE_LLAMA_SERVER names the executable (scripts/llama-server, or a
// native llama-server; without it, llama-server on PATH), and
// SLOGATE_LLAMACPP_MODELS the folder of genmodels' files (without it the
// test writes tiny.gguf itself). Without a llama-server the tests skip,
// saying what to run; with CI=true they fail instead.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/gguf"
)

// llamaServer returns the llama-server executable and the folder holding
// tiny.gguf, or skips (fails with CI=true) saying why there is none.
func llamaServer(t *testing.T) (server, models string) {
	t.Helper()
	server = os.Getenv("SLOGATE_LLAMA_SERVER")
	if server == "" {
		if p, err := exec.LookPath("llama-server"); err == nil {
			server = p
		}
	}
	var why string
	if server == "" {
		why = "no llama-server: run scripts/llamacpp-setup.sh as root and set SLOGATE_LLAMA_SERVER=$PWD/scripts/llama-server (docs/ci.md#llamacpp)"
	} else if out, err := exec.Command(server, "--version").CombinedOutput(); err != nil {
		why = fmt.Sprintf("%s --version: %v: %s", server, err, lastLine(string(out)))
	} else {
		t.Logf("%s --version: %s", server, strings.Join(strings.Fields(string(out)), " "))
	}
	if why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (CI=true: the real-engine tests must run, not skip)", why)
		}
		t.Skip(why)
	}
	models = os.Getenv("SLOGATE_LLAMACPP_MODELS")
	if models == "" {
		models = t.TempDir()
		f, err := gguf.Tiny.File()
		if err != nil {
			t.Fatal(err)
		}
		w, err := os.Create(filepath.Join(models, "tiny.gguf"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteTo(w); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return server, models
}

// llamaProc is one llama-server started in its own process group, as
// slogate's lifecycle starts a server.
type llamaProc struct {
	cmd  *exec.Cmd
	base string
	log  string
	done chan struct{} // closed when the process has ended, err then set
	err  error
}

func startLlama(t *testing.T, server, mark string, args ...string) *llamaProc {
	t.Helper()
	port := freePort(t)
	p := &llamaProc{base: "http://127.0.0.1:" + strconv.Itoa(port), log: filepath.Join(t.TempDir(), "server.log"),
		done: make(chan struct{})}
	logf, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	args = append([]string{"--host", "127.0.0.1", "--port", strconv.Itoa(port)}, args...)
	p.cmd = exec.Command(server, args...)
	p.cmd.Env = append(childEnv(), markEnv+"="+mark)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		if code, _, err := get(p.base + "/health"); err == nil && code == http.StatusOK {
			return p
		}
		select {
		case <-p.done:
			t.Fatalf("llama-server exited before it was ready (%v); the last lines of its log:\n%s", p.err, p.tail())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("llama-server not ready in 60 s; the last lines of its log:\n%s", p.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *llamaProc) tail() string {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-10):], "\n")
}

// stop signals the process group and waits for the server's end.
func (p *llamaProc) stop(t *testing.T, sig syscall.Signal) error {
	t.Helper()
	if err := syscall.Kill(-p.cmd.Process.Pid, sig); err != nil {
		t.Fatalf("kill -%d -%d: %v", sig, p.cmd.Process.Pid, err)
	}
	select {
	case <-p.done:
		return p.err
	case <-time.After(15 * time.Second):
		t.Fatalf("llama-server did not end within 15 s of signal %d; its log:\n%s", sig, p.tail())
	}
	return nil
}

func get(url string) (int, []byte, error) {
	c := http.Client{Timeout: 5 * time.Second}
	r, err := c.Get(url)
	if err != nil {
		return 0, nil, err
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	return r.StatusCode, b, err
}

func postJSON(t *testing.T, url, body string, out any) {
	t.Helper()
	c := http.Client{Timeout: 30 * time.Second}
	r, err := c.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("POST %s %s: %s: %s", url, body, r.Status, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("POST %s: %v: %s", url, err, b)
	}
}

// TestLlamaCppInfra: the server starts on tiny.gguf, /props states the
// slots and their context, a completion returns exactly the tokens
// ignore_eos asked for with the server's timings; then SIGKILL of the
// process group (and, on a second server, SIGTERM) leaves no process and
// no mount behind.
func TestLlamaCppInfra(t *testing.T) {
	t.Parallel()
	server, models := llamaServer(t)
	model := filepath.Join(models, "tiny.gguf")
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			mark := newMark(t)
			p := startLlama(t, server, mark, "-m", model, "--alias", "tiny", "-c", "2048", "--parallel", "2", "-t", "1", "--metrics")

			_, b, err := get(p.base + "/props")
			if err != nil {
				t.Fatal(err)
			}
			var props struct {
				Settings struct {
					NCtx int `json:"n_ctx"`
				} `json:"default_generation_settings"`
				TotalSlots int    `json:"total_slots"`
				BuildInfo  string `json:"build_info"`
				ModelPath  string `json:"model_path"`
			}
			if err := json.Unmarshal(b, &props); err != nil {
				t.Fatalf("/props: %v: %s", err, b)
			}
			t.Logf("/props: build_info %q, total_slots %d, n_ctx %d, model_path %s", props.BuildInfo, props.TotalSlots, props.Settings.NCtx, props.ModelPath)
			if props.TotalSlots != 2 || props.Settings.NCtx != 1024 || props.BuildInfo == "" || props.ModelPath != model {
				t.Errorf("/props: want 2 slots of 1024 (-c 2048 --parallel 2), a build_info, model_path %s", model)
			}

			var c struct {
				Usage struct {
					CompletionTokens int `json:"completion_tokens"`
				} `json:"usage"`
				Timings struct {
					PredictedN         int     `json:"predicted_n"`
					PredictedPerSecond float64 `json:"predicted_per_second"`
				} `json:"timings"`
			}
			postJSON(t, p.base+"/v1/completions", `{"model":"tiny","prompt":"the cat sat on the mat","max_tokens":32,"ignore_eos":true,"temperature":0}`, &c)
			t.Logf("32 tokens at %.0f tok/s (the server's predicted_per_second)", c.Timings.PredictedPerSecond)
			if c.Usage.CompletionTokens != 32 || c.Timings.PredictedN != 32 || c.Timings.PredictedPerSecond <= 0 {
				t.Errorf("completion: %+v, want 32 tokens and the server's timings", c)
			}

			err = p.stop(t, sig)
			var ee *exec.ExitError
			switch {
			case sig == syscall.SIGTERM && err != nil:
				t.Errorf("after SIGTERM llama-server exited with %v, want 0 (its graceful stop)", err)
			case sig == syscall.SIGKILL && !(errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL):
				// The PID slogate holds is the server's own, not a
				// wrapper's that would exit otherwise.
				t.Errorf("after SIGKILL: %v, want killed by the signal", err)
			}
			noLeftovers(t, mark)
			if _, _, err := get(p.base + "/health"); err == nil {
				t.Errorf("%s still answers after the server ended", p.base)
			}
			root := os.Getenv("SLOGATE_LLAMACPP_ROOT")
			if root == "" {
				root = "/var/cache/slogate/llamacpp-root"
			}
			if m, err := os.ReadFile("/proc/self/mounts"); err == nil && strings.Contains(string(m), " "+root+"/") {
				t.Errorf("a mount in the llama.cpp root %s is left on the host:\n%s", root, m)
			}
		})
	}
}
