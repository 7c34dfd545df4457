package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInterleavePodman: `slogate interleave` without -var-name varies the
// server's container.image (docs/method.md#interleaved). Two tags of one
// local image with the same entrypoint are not regressed; a tag whose
// entrypoint runs the simulator twice as slow a step (--sim-slowdown 2,
// committed into the image) is regressed. Five blocks of one boot a side,
// one 500 ms decode window a boot, the two comparisons side by side: about
// 60 s on a loaded 2-core machine. The tolerance is 10 %: the test is of
// the image path, and the slower tag is ten times beyond it.
func TestInterleavePodman(t *testing.T) {
	t.Parallel()
	// b00 and b01 run the same entrypoint; b02 the slower one.
	repo := simImages(t, realPodman(t), 3, 2, "2.0")
	const test = "box/interleave/decode/ctx=1K/conc=4"
	tests := []struct {
		name string
		b    string
		// codes are the exits taken: identical tags are within the
		// tolerance, or undecided in five blocks when other work moved
		// a block's boots apart (the lines say inconclusive), never
		// regressed.
		codes []int
		want  map[int][]string
	}{
		{name: "identical tags", b: repo + ":b01", codes: []int{0, 4}, want: map[int][]string{
			0: {" blocks paired), within 10%\n", "--- PASS: " + test + "\n", "\nPASS\n"},
			4: {" blocks paired): inconclusive", "--- FAIL: " + test + "\n", "1 of 1 cells failed: decode/ctx=1K/conc=4 (inconclusive)"}}},
		{name: "a slower tag", b: repo + ":b02", codes: []int{1}, want: map[int][]string{
			1: {"tbt_ms: A ", " blocks paired), regressed beyond 10% (lower is better)\n", "--- FAIL: " + test + "\n", "\nFAIL\n"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Both comparisons at once, each its own port and containers:
			// about a minute on 2 cores instead of two.
			t.Parallel()
			p := newPodmanRun(t, `"--sim-noise", "0.002"`,
				"measure {\n  duration = \"500ms\"\n  repeat = 1\n}\nmatrix \"decode\" {\n  contexts = [\"1K\"]\n  concurrency = [4]\n}\n")
			out := filepath.Join(t.TempDir(), "ab")
			t0 := time.Now()
			r := slogate(t, p.mark, 4*time.Minute, "", nil, "interleave", "-blocks", "5", "-tolerance", "10%",
				"-a", repo+":b00", "-b", tc.b, "-out", out, p.spec)
			var lines []string
			for _, l := range strings.Split(r.Stdout, "\n") {
				if strings.Contains(l, ": A ") {
					lines = append(lines, strings.TrimSpace(l))
				}
			}
			t.Logf("%s: exit %d in %.1fs\n%s", tc.name, r.Code, time.Since(t0).Seconds(), strings.Join(lines, "\n"))
			want, ok := tc.want[r.Code]
			if !ok {
				t.Fatalf("exit %d, want one of %v\n%s\n%s", r.Code, tc.codes, r.Stdout, r.Stderr)
			}
			if r.Code != 1 && strings.Contains(r.Stdout, "regressed beyond") {
				t.Errorf("identical tags: a metric regressed:\n%s", r.Stdout)
			}
			// The builds are the images, named as given.
			for _, w := range append([]string{"interleave: A = " + repo + ":b00, B = " + tc.b + " (container.image): 5 blocks"}, want...) {
				if !strings.Contains(r.Stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, r.Stdout)
				}
			}
			if rec := readInterleave(t, out); rec.Blocks != 5 || rec.Boots != 10 {
				t.Errorf("%d blocks, %d boots; want 5 blocks, two boots each", rec.Blocks, rec.Boots)
			}
		})
	}
}
