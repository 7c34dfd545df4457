package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bisectImages makes N tags of one local repository from the simulator
// image, b00 … b(n-1): from build k on, their entrypoint runs the
// simulator 30% slower per step (`slogate sim serve --sim-slowdown 1.3`,
// committed into the image as vLLM's per-commit images carry their own
// build). It returns the repository; the tags go when the test ends.
func bisectImages(t *testing.T, base string, n, k int) string {
	t.Helper()
	return simImages(t, base, n, k, "1.3")
}

// simImages is bisectImages with the slower builds' --sim-slowdown.
func simImages(t *testing.T, base string, n, k int, slowdown string) string {
	t.Helper()
	var b [4]byte
	rand.Read(b[:])
	repo := "localhost/slogate-bisect-" + hex.EncodeToString(b[:])
	podman := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("podman", args...).CombinedOutput(); err != nil {
			t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	ctr := "slogate-bisect-src-" + hex.EncodeToString(b[:])
	podman("create", "--pull=never", "--name", ctr, base)
	defer exec.Command("podman", "rm", "-f", ctr).Run()
	var tags []string
	for _, v := range []struct{ name, slowdown string }{{"fast", "1.0"}, {"slow", slowdown}} {
		podman("commit", "-q", "--change", `ENTRYPOINT ["/slogate", "sim", "serve", "--sim-slowdown", "`+v.slowdown+`"]`, ctr, repo+":"+v.name)
		tags = append(tags, repo+":"+v.name)
	}
	for i := range n {
		from := repo + ":fast"
		if i >= k {
			from = repo + ":slow"
		}
		tag := fmt.Sprintf("%s:b%02d", repo, i)
		podman("tag", from, tag)
		tags = append(tags, tag)
	}
	t.Cleanup(func() { exec.Command("podman", append([]string{"rmi", "-f"}, tags...)...).Run() })
	return repo
}

// TestBisectPodman: 16 tags of a local image on real podman, slower from
// b09 on: the first bad is b09 in ⌈log₂ 16⌉ = 4 steps + at most 1; an
// unknown tag as the good build is the runtime's error, exit 3. The steps
// decide on server_itl_ms_mean, the simulator's own clock, as
// TestBisectFindsFirstBad's do: with the client's tbt_ms, CI's full suite
// once left an unchanged build inconclusive and the bisection undecided.
func TestBisectPodman(t *testing.T) {
	// 16 images, 360 s on 2 cores in CI's full suite: behind the same
	// variable as the two-cell bisection.
	if os.Getenv("SLOGATE_BISECT_E2E") == "" {
		t.Skip("SLOGATE_BISECT_E2E=1 bisects 16 podman images (about 2-6 min)")
	}
	t.Parallel()
	p := newPodmanRun(t, `"--sim-ttft", "300ms", "--sim-noise", "0.002"`,
		"measure {\n  duration = \"300ms\"\n  max_output = 256\n  repeat = 4\n}\nmatrix \"decode\" {\n  contexts = [\"1K\"]\n  concurrency = [4]\n}\n")
	repo := bisectImages(t, realPodman(t), 16, 9)
	var list strings.Builder
	for i := range 16 {
		fmt.Fprintf(&list, "%s:b%02d\n", repo, i)
	}
	list.WriteString(repo + ":nope\n")
	candidates := specFile(t, "images.txt", list.String())
	t.Run("first bad", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "bisect")
		r := slogate(t, p.mark, 6*time.Minute, "", nil, "bisect", "-metric", "server_itl_ms_mean", "-good", repo+":b00", "-bad", repo+":b15",
			"-candidates", candidates, "-out", out, p.spec)
		if r.Code != 0 {
			t.Fatalf("exit %d, want 0\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		}
		if want := "first bad: " + repo + ":b09\n"; !strings.Contains(r.Stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.Stdout)
		}
		if want := "; last good " + repo + ":b08 ("; !strings.Contains(r.Stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.Stdout)
		}
		if steps := strings.Count(r.Stdout, " (step "); steps < 4 || steps > 5 {
			t.Errorf("%d steps, want ⌈log₂ 16⌉ = 4 (+1 at most):\n%s", steps, r.Stdout)
		}
	})
	t.Run("unknown tag", func(t *testing.T) {
		// :nope comes last: as the bad build after a good one.
		r := slogate(t, p.mark, 2*time.Minute, "", nil, "bisect", "-good", repo+":b00", "-bad", repo+":nope", "-candidates", candidates,
			"-out", filepath.Join(t.TempDir(), "bisect"), p.spec)
		want := "the bad build " + repo + ":nope could not be measured"
		if r.Code != 3 || !strings.Contains(r.Stderr, want) || !strings.Contains(r.Stderr, "image not known") {
			t.Fatalf("exit %d, want 3 with %q and podman's \"image not known\"\nstdout:\n%s\nstderr:\n%s", r.Code, want, r.Stdout, r.Stderr)
		}
	})
}
