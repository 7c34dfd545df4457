package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// smallRun is one 1K prefill cell and one 1K × 1 decode cell in a 1 s window.
const smallRun = `
measure {
  duration   = "1s"
  max_output = 128
}
prefill { contexts = ["1K"] }
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
`

// TestOutDirNotOverwritten: a run into a folder holding results, -run
// into a full run's folder included, is refused (exit 2, saying a new -out
// or -overwrite; not -resume, which has nothing left to measure in a
// completed run) and leaves results.json byte for byte; a
// -baseline inside the folder the run writes (named through a symlink) is
// refused before the server starts; -overwrite replaces the results.
func TestOutDirNotOverwritten(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := writeSpec(t, freePort(t), fastSim, smallRun)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if r := slogate(t, mark, time.Minute, "", nil, "run", "-sim", "-out", out, spec); r.Code != 0 {
		t.Fatalf("first run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	first, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	refusal := out + " already holds the results of a completed run (results.json, cells.jsonl): " +
		"write this run elsewhere with a new -out (or none: each run then gets its own folder under slogate-out), or replace it with -overwrite"
	for _, tc := range []struct {
		name string
		args []string
	}{
		{name: "the same -out again", args: []string{"run", "-sim", "-out", out, spec}},
		{name: "-run into a full run's folder", args: []string{"run", "-sim", "-run", "prefill", "-out", out, spec}},
	} {
		r := slogate(t, mark, 20*time.Second, "", nil, tc.args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, refusal) || strings.Contains(r.Stderr, "-resume") {
			t.Errorf("%s: exit %d, want 2 saying (and not naming -resume)\n%s\nstdout:\n%s\nstderr:\n%s", tc.name, r.Code, refusal, r.Stdout, r.Stderr)
		}
		if strings.Contains(r.Stdout+r.Stderr, "starting server") {
			t.Errorf("%s: a server was started:\n%s%s", tc.name, r.Stdout, r.Stderr)
		}
		if now, _ := os.ReadFile(filepath.Join(out, "results.json")); !bytes.Equal(now, first) {
			t.Errorf("%s: results.json changed", tc.name)
		}
	}

	// The baseline lies in a subfolder of a fresh -out, named through a
	// symlink to that -out: refused even with -overwrite, nothing started.
	fresh := filepath.Join(dir, "fresh")
	if err := os.MkdirAll(filepath.Join(fresh, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fresh, "old", "results.json"), first, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(fresh, link); err != nil {
		t.Fatal(err)
	}
	baseline := filepath.Join(link, "old", "results.json")
	r := slogate(t, mark, 20*time.Second, "", nil, "run", "-sim", "-overwrite", "-baseline", baseline, "-out", fresh, spec)
	if want := "-baseline " + baseline + " lies inside " + fresh + ", the results folder this run writes"; r.Code != 2 || !strings.Contains(r.Stderr, want) {
		t.Errorf("-baseline inside -out: exit %d, want 2 saying\n%s\nstderr:\n%s", r.Code, want, r.Stderr)
	}
	if strings.Contains(r.Stdout+r.Stderr, "starting server") {
		t.Errorf("-baseline inside -out: a server was started:\n%s%s", r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(fresh, "server.log")); err == nil {
		t.Errorf("-baseline inside -out: server.log written")
	}

	r = slogate(t, mark, time.Minute, "", nil, "run", "-sim", "-overwrite", "-run", "prefill", "-out", out, spec)
	if r.Code != 0 {
		t.Fatalf("-overwrite: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	got := readResults(t, out)
	if len(got.Prefill) != 1 || len(got.Decode) != 0 || len(readCellsFile(t, out)) != 1 {
		t.Errorf("-overwrite -run prefill: results.json has %d prefill and %d decode cells, cells.jsonl %d lines; want the new run's one prefill cell",
			len(got.Prefill), len(got.Decode), len(readCellsFile(t, out)))
	}
}

// TestDefaultOutDir: runs without -out each get their own folder under
// slogate-out/<spec>/<server>/, none overwriting another, and latest
// points at the last one that completed: not at one stopped by -timeout.
func TestDefaultOutDir(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := writeSpec(t, freePort(t), fastSim, smallRun)
	cwd := t.TempDir()
	parent := filepath.Join(cwd, "slogate-out", "spec", "sim")
	var dirs []string
	for i := range 2 {
		r := slogate(t, mark, time.Minute, cwd, nil, "run", "-sim", spec)
		if r.Code != 0 {
			t.Fatalf("run %d: exit %d\n%s%s", i+1, r.Code, r.Stdout, r.Stderr)
		}
		entries, _ := filepath.Glob(filepath.Join(parent, "2*"))
		if len(entries) != i+1 {
			t.Fatalf("after run %d: folders %v, want %d", i+1, entries, i+1)
		}
		dirs = entries
		latest, err := os.Readlink(filepath.Join(parent, "latest"))
		if err != nil {
			t.Fatalf("after run %d: %v", i+1, err)
		}
		rel, _ := filepath.Rel(cwd, filepath.Join(parent, latest))
		if !strings.Contains(r.Stdout, "results in "+rel+"\n") {
			t.Errorf("run %d: latest → %s, not the folder the run names:\n%s", i+1, latest, r.Stdout)
		}
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "results.json")); err != nil {
			t.Errorf("the first run's results are gone: %v", err)
		}
	}
	before, _ := os.Readlink(filepath.Join(parent, "latest"))
	r := slogate(t, mark, time.Minute, cwd, nil, "run", "-sim", "-timeout", "300ms", spec)
	if r.Code != 3 {
		t.Errorf("-timeout 300ms: exit %d, want 3\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if after, _ := os.Readlink(filepath.Join(parent, "latest")); after != before {
		t.Errorf("a run stopped by -timeout moved latest: %s → %s", before, after)
	}
	if entries, _ := filepath.Glob(filepath.Join(parent, "2*")); len(entries) != 3 {
		t.Errorf("folders %v, want 3 (the stopped run has its own)", entries)
	}
}

// TestOutDirReusableAfterNothingMeasured: a run whose server exits before
// it is ready (the simulator refuses its flags: exit 3) measured nothing;
// it says its -out keeps only the server's log of that attempt, the retry
// into the same folder is not refused, replaces the failed run's files and
// measures. (A run that starts no server, the port taken, creates nothing:
// TestFaultPortInUse.)
func TestOutDirReusableAfterNothingMeasured(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	port := freePort(t)
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, time.Minute, "", nil, "run", "-sim", "-out", out, writeSpec(t, port, `"--sim-kv-tokens", "1"`, smallRun))
	said := "nothing was measured: " + out + " keeps the server's log of this attempt (server.log), and a run with -out " + out + " again replaces it"
	if r.Code != 3 || !strings.Contains(r.Stderr, "exited before it was ready") || !strings.Contains(r.Stderr, said) {
		t.Fatalf("server exits at start: exit %d, want 3 saying\n%s\nstderr:\n%s", r.Code, said, r.Stderr)
	}
	if strings.Contains(r.Stderr, "-resume") {
		t.Errorf("server exits at start: the error suggests -resume although nothing was measured:\n%s", r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "server.log")); err != nil {
		t.Errorf("the server's log of the failed start is not kept: %v", err)
	}

	r = slogate(t, mark, time.Minute, "", nil, "run", "-sim", "-out", out, writeSpec(t, port, fastSim, smallRun))
	if r.Code != 0 {
		t.Fatalf("retry into the same -out: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if want := "sim: " + out + " held a run that measured nothing (the server "; !strings.Contains(r.Stdout, want) || !strings.Contains(r.Stdout, "): replacing it") {
		t.Errorf("the retry does not say it replaces the failed run (%q … replacing it):\n%s", want, r.Stdout)
	}
	got := readResults(t, out)
	if got.Error != "" || len(got.Prefill) != 1 || len(got.Decode) != 1 || len(readCellsFile(t, out)) != 2 {
		t.Errorf("retry: error %q, %d prefill and %d decode cells, %d lines in cells.jsonl; want the retry's 1 + 1", got.Error, len(got.Prefill), len(got.Decode), len(readCellsFile(t, out)))
	}
}
