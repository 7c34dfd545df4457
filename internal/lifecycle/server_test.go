package lifecycle

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/exit"
)

func TestProcessLifecycle(t *testing.T) {
	dir := t.TempDir()
	t.Run("stop ends the whole group", func(t *testing.T) {
		p, err := StartProcess([]string{"sh", "-c", "sleep 60 & sleep 60 & echo started; wait"}, nil, filepath.Join(dir, "a.log"))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		if err := p.Stop(2*time.Second, nil); err != nil {
			t.Fatal(err)
		}
		if syscall.Kill(-p.pgid, 0) != syscall.ESRCH {
			t.Fatal("process group still exists")
		}
	})
	t.Run("SIGTERM ignored: SIGKILL after the grace", func(t *testing.T) {
		p, err := StartProcess([]string{"sh", "-c", "trap '' TERM; sleep 60 & wait"}, nil, filepath.Join(dir, "b.log"))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		start := time.Now()
		if err := p.Stop(300*time.Millisecond, nil); err != nil {
			t.Fatal(err)
		}
		if time.Since(start) < 300*time.Millisecond || groupExists(p.pgid) {
			t.Fatal("the group was not killed after the grace period")
		}
	})
	t.Run("SIGTERM ignored: a closed force channel kills at once", func(t *testing.T) {
		p, err := StartProcess([]string{"sh", "-c", "trap '' TERM; sleep 60 & wait"}, nil, filepath.Join(dir, "f.log"))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		force := make(chan struct{})
		time.AfterFunc(200*time.Millisecond, func() { close(force) })
		start := time.Now()
		if err := p.Stop(time.Minute, force); err != nil {
			t.Fatal(err)
		}
		if time.Since(start) > 30*time.Second || groupExists(p.pgid) {
			t.Fatalf("force did not cut the one-minute grace short (took %v)", time.Since(start))
		}
	})
	t.Run("exit before ready shows the log", func(t *testing.T) {
		p, err := StartProcess([]string{"sh", "-c", "echo loading weights; echo 'CUDA out of memory' >&2; exit 1"},
			map[string]string{"X": "1"}, filepath.Join(dir, "c.log"))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Stop(time.Second, nil)
		c := NewClient("http://127.0.0.1:1", "", "qwen")
		_, err = waitReady(context.Background(), p, c, 10*time.Second, nil)
		if exit.Code(err) != exit.Infra || !strings.Contains(err.Error(), "exited before it was ready") || !strings.Contains(err.Error(), "CUDA out of memory") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("env is merged over the environment", func(t *testing.T) {
		logp := filepath.Join(dir, "d.log")
		p, err := StartProcess([]string{"sh", "-c", "echo $SLOGATE_T_A $HOME"}, map[string]string{"SLOGATE_T_A": "yes"}, logp)
		if err != nil {
			t.Fatal(err)
		}
		<-p.exited
		p.Stop(time.Second, nil)
		b, _ := os.ReadFile(logp)
		if got := strings.TrimSpace(string(b)); got != "yes "+os.Getenv("HOME") {
			t.Errorf("log = %q", got)
		}
	})
	t.Run("missing command", func(t *testing.T) {
		_, err := StartProcess([]string{"/nonexistent/vllm", "serve"}, nil, filepath.Join(dir, "e.log"))
		if exit.Code(err) != exit.Infra || !strings.Contains(err.Error(), "/nonexistent/vllm") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestServerLogRedactsSecrets(t *testing.T) {
	logp := filepath.Join(t.TempDir(), "server.log")
	p, err := StartProcess([]string{"sh", "-c", `echo "non-default args: {'api_key': ['sk-123']}"; printf 'tail sk-123'`}, nil, logp, "sk-123")
	if err != nil {
		t.Fatal(err)
	}
	<-p.exited
	p.Stop(time.Second, nil)
	b, _ := os.ReadFile(logp)
	if got, want := string(b), "non-default args: {'api_key': ['<redacted>']}\ntail <redacted>"; got != want {
		t.Errorf("log = %q, want %q", got, want)
	}
}
