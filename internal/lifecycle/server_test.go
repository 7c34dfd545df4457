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
	"github.com/slogate/slogate/internal/hostenv"
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

// TestStopSaysWhy: a launched server's stop first writes slogate's line to
// server.log, saying why it stops and how, before the server's own
// shutdown lines (a normal stop ended server.log with the simulator's
// "stopping the server and writing what was measured", read as an
// interruption), with and without the redacting writer in between.
func TestStopSaysWhy(t *testing.T) {
	tests := []struct {
		name    string
		why     string
		secrets []string
	}{
		{name: "normal stop", why: StopNormal},
		{name: "normal stop through the redacting writer", why: StopNormal, secrets: []string{"sk-secret"}},
		{name: "a run that ended early", why: "the run ended early (interrupted by SIGTERM)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logPath := filepath.Join(t.TempDir(), "server.log")
			p, err := StartProcess([]string{"sh", "-c", "trap 'echo shutting down; exit 0' TERM; echo up; while :; do sleep 0.05; done"}, nil, logPath, tt.secrets...)
			if err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for b, _ := os.ReadFile(logPath); !strings.Contains(string(b), "up\n"); b, _ = os.ReadFile(logPath) {
				if time.Now().After(deadline) {
					p.Stop(time.Second, nil)
					t.Fatalf("the server never logged: %q", b)
				}
				time.Sleep(20 * time.Millisecond)
			}
			s := &Server{proc: p, stopper: p}
			// Its process group is the one the scheduler reading sums
			// (docs/method.md#environment): sh's, with its sleep.
			if g, ok := s.ProcessGroup(); !ok || g != p.pgid {
				t.Errorf("ProcessGroup() = %d, %v; want %d, true", g, ok, p.pgid)
			} else if sc := hostenv.ReadGroup(g); !sc.OK {
				t.Errorf("ReadGroup(%d) read no thread of the server", g)
			}
			if g, ok := Endpoint(nil).ProcessGroup(); ok {
				t.Errorf("an endpoint's ProcessGroup() = %d, true; want none", g)
			}
			if err := s.Stop(tt.why, 2*time.Second, nil); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			// After slogate's line, the server's own: sh's "Terminated"
			// for its sleep, then its trap.
			want := "up\nslogate: " + tt.why + ": stopping the server: SIGTERM, up to 2s to exit, then SIGKILL\n"
			if !strings.HasPrefix(string(b), want) || !strings.HasSuffix(string(b), "shutting down\n") {
				t.Errorf("server.log = %q, want %q then the server's shutdown", b, want)
			}
		})
	}
}
