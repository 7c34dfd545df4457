package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSGLangSimDrainsOnSIGTERM runs the SGLang imitation as a process and
// stops it with SIGTERM while a stream runs: /health turns 503, the stream
// still ends with every token and [DONE], the watchdog logs the request
// left, and the process ends by its own SIGKILL, as SGLang's
// kill_process_tree does (docs/sglang.md#shutdown).
func TestSGLangSimDrainsOnSIGTERM(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	port := freePort(t)
	cmd := exec.Command(bin, "sim", "--engine", "sglang", "serve", "m", "--port", fmt.Sprint(port),
		"--sim-tbt", "10ms", "--sim-drain-poll", "100ms", "--sim-one-token-chunks")
	cmd.Env = append(childEnv(), markEnv+"="+mark)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var log syncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	health := func() int {
		resp, err := http.Get(base + "/health")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for deadline := time.Now().Add(20 * time.Second); health() != 200; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not ready after 20s:\n%s", log.String())
		}
	}
	const tokens = 200 // 2 s at 10 ms per token: the drain outlasts several watchdog periods
	body := `{"prompt":[1,2,3],"max_tokens":200,"ignore_eos":true,"stream":true}`
	resp, err := http.Post(base+"/v1/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	if !sc.Scan() {
		t.Fatalf("no first chunk: %v", sc.Err())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var during int
	for range 50 {
		if during = health(); during == 503 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if during != 503 {
		t.Errorf("/health during the drain: %d, want 503", during)
	}
	chunks, gotDone := 1, false
	for sc.Scan() {
		switch l := sc.Text(); {
		case l == "data: [DONE]":
			gotDone = true
		case strings.HasPrefix(l, "data: "):
			chunks++
		}
	}
	if chunks != tokens || !gotDone {
		t.Errorf("stream after SIGTERM: %d chunks, [DONE] %v; want %d and true (the drain lets it finish)", chunks, gotDone, tokens)
	}
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("still running 20s after SIGTERM and its last request:\n%s", log.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("exit %v, want killed by its own SIGKILL", err)
	}
	out := log.String()
	if !strings.Contains(out, "Gracefully exiting... Remaining number of requests 1. Remaining requests remaining_rids=['cmpl-") {
		t.Errorf("no watchdog line with the request in flight:\n%s", out)
	}
	if !strings.Contains(out, "Gracefully exiting... Remaining number of requests 0. Remaining requests remaining_rids=[].") {
		t.Errorf("no final watchdog line:\n%s", out)
	}
	noLeftovers(t, mark)
}

// TestSGLangSimUnknownFlag: the SGLang imitation refuses a flag SGLang's
// argparse does not know (exit 2), where the vLLM imitation ignores it.
func TestSGLangSimUnknownFlag(t *testing.T) {
	t.Parallel()
	r := slogate(t, newMark(t), 20*time.Second, "", nil, "sim", "--engine", "sglang", "serve", "m", "--max-num-seqs", "8")
	if r.Code != 2 || !strings.Contains(r.Stderr, "sglang serve: error: unrecognized arguments: --max-num-seqs 8") {
		t.Errorf("exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// TestSGLangSimSchedulersEscape: with --dp-size 2 the SGLang imitation's
// data-parallel schedulers leave the server's process tree (#23627): after
// the server has drained and killed itself they are still alive, reparented
// but in its process group, and a signal to the group ends them.
func TestSGLangSimSchedulersEscape(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	port := freePort(t)
	cmd := exec.Command(bin, "sim", "--engine", "sglang", "serve", "m", "--port", fmt.Sprint(port), "--dp-size", "2",
		"--sim-tbt", "2ms", "--sim-drain-poll", "50ms")
	cmd.Env = append(childEnv(), markEnv+"="+mark)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var log syncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() { syscall.Kill(-pgid, syscall.SIGKILL) })
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(base + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready after 20s:\n%s", log.String())
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("the server did not end after SIGTERM:\n%s", log.String())
	}
	left, err := leftovers(mark)
	if err != nil {
		t.Skipf("cannot look for processes left behind: %v", err)
	}
	schedulers := 0
	for _, l := range left {
		if strings.Contains(l, "sglang::scheduler_DP") {
			schedulers++
		}
	}
	if schedulers != 2 {
		t.Errorf("%d scheduler processes alive after the server ended, want the 2 that escaped; left: %q", schedulers, left)
	}
	syscall.Kill(-pgid, syscall.SIGTERM) // the group: what a launcher must signal
	noLeftovers(t, mark)
}
