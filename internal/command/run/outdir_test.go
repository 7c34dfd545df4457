package run

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/runner"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
)

func TestExplicitOutDir(t *testing.T) {
	one := &spec.Spec{Filename: "specs/one.hcl", Servers: []*spec.Server{{Name: "q"}}}
	two := &spec.Spec{Filename: "specs/two.hcl", Servers: []*spec.Server{{Name: "q"}, {Name: "r"}}}
	twin := &spec.Spec{Filename: "specs/sglang/one.hcl", Servers: []*spec.Server{{Name: "q"}}}
	tests := []struct {
		name string
		o    Options
		sp   *spec.Spec
		srv  int
		want string
	}{
		{name: "default: a fresh folder", o: Options{Specs: []*spec.Spec{one}}, sp: one, want: ""},
		{name: "-out with one server", o: Options{Specs: []*spec.Spec{one}, OutDir: "x"}, sp: one, want: "x"},
		{name: "-out with several servers", o: Options{Specs: []*spec.Spec{two}, OutDir: "x"}, sp: two, srv: 1, want: filepath.Join("x", "r")},
		{name: "-out with a server name two specs share", o: Options{Specs: []*spec.Spec{one, two}, OutDir: "x"}, sp: one, want: filepath.Join("x", "one", "q")},
		{name: "-out with a server name no other spec has", o: Options{Specs: []*spec.Spec{one, two}, OutDir: "x"}, sp: two, srv: 1, want: filepath.Join("x", "r")},
		{name: "-out with a server of two specs of one file name", o: Options{Specs: []*spec.Spec{one, twin}, OutDir: "x"}, sp: twin, want: filepath.Join("x", "sglang", "one", "q")},
		{name: "-out with the other of them", o: Options{Specs: []*spec.Spec{one, twin}, OutDir: "x"}, sp: one, want: filepath.Join("x", "one", "q")},
		{name: "-resume writes into its folder", o: Options{Specs: []*spec.Spec{two}, OutDir: "x", Resumed: &runner.Resumed{Dir: "r"}}, sp: two, want: "r"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.o.explicitOutDir(tc.sp, tc.sp.Servers[tc.srv]); got != tc.want {
				t.Errorf("explicitOutDir = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCheckOutDirs: a folder holding results, a baseline inside the folder
// written (through a symlink too) and two servers sharing a folder are
// refused with exit 2 saying what to do; -resume and -overwrite are
// allowed into a folder holding results, not together.
func TestCheckOutDirs(t *testing.T) {
	root := t.TempDir()
	full := filepath.Join(root, "full")
	empty := filepath.Join(root, "empty")
	for _, d := range []string{full, empty} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	baseline := filepath.Join(full, "results.json")
	if err := os.WriteFile(baseline, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(full, link); err != nil {
		t.Fatal(err)
	}
	// complete: a run that finished; nothing: one that failed before it
	// measured (the port was taken); cellsOnly: a killed run's cells.jsonl.
	complete, nothing, cellsOnly := filepath.Join(root, "complete"), filepath.Join(root, "nothing"), filepath.Join(root, "cells-only")
	cell := result.PrefillCell{Context: 1024, Status: vocab.StatusValid, TPS: 1}
	writeRun(t, complete, &result.Results{Started: time.Now(), Finished: time.Now(), Prefill: []result.PrefillCell{cell}}, &cell)
	writeRun(t, nothing, &result.Results{Started: time.Now(), Finished: time.Now(), Error: "port 127.0.0.1:8000 already accepts connections"}, nil)
	writeRun(t, cellsOnly, nil, &cell)
	one := []*spec.Spec{{Filename: "a.hcl", Servers: []*spec.Server{{Name: "q"}}}}
	same := []*spec.Spec{{Filename: "x/a.hcl", Servers: []*spec.Server{{Name: "q"}}}, {Filename: "x/a.hcl", Servers: []*spec.Server{{Name: "q"}}}}
	twins := []*spec.Spec{{Filename: "x/a.hcl", Servers: []*spec.Server{{Name: "q"}}}, {Filename: "y/a.hcl", Servers: []*spec.Server{{Name: "q"}}}}
	tests := []struct {
		name string
		o    Options
		want string // "" = allowed
	}{
		{name: "empty folder", o: Options{Specs: one, OutDir: empty}},
		{name: "missing folder", o: Options{Specs: one, OutDir: filepath.Join(root, "new", "deeper")}},
		{name: "default folder", o: Options{Specs: one}},
		{name: "folder holding results", o: Options{Specs: one, OutDir: full},
			want: full + " already holds the results of a run (results.json): continue it with `-resume " + full + "`, write this run elsewhere with a new -out (or none: each run then gets its own folder under slogate-out), or replace it with -overwrite"},
		{name: "folder of a completed run", o: Options{Specs: one, OutDir: complete},
			want: complete + " already holds the results of a completed run (results.json, cells.jsonl): write this run elsewhere with a new -out (or none: each run then gets its own folder under slogate-out), or replace it with -overwrite"},
		{name: "folder of a run that measured nothing", o: Options{Specs: one, OutDir: nothing}},
		{name: "folder of a killed run's cells.jsonl", o: Options{Specs: one, OutDir: cellsOnly},
			want: cellsOnly + " already holds the results of a run (cells.jsonl): continue it with `-resume " + cellsOnly + "`"},
		{name: "-overwrite", o: Options{Specs: one, OutDir: full, Overwrite: true}},
		{name: "-resume", o: Options{Specs: one, Resumed: &runner.Resumed{Dir: full}}},
		{name: "-resume and -overwrite", o: Options{Specs: one, Resumed: &runner.Resumed{Dir: full}, Overwrite: true},
			want: "-resume " + full + " continues the run in that folder and -overwrite would replace it: give one of them"},
		{name: "baseline inside -out", o: Options{Specs: one, OutDir: full, Overwrite: true, BaselinePath: baseline},
			want: "-baseline " + baseline + " lies inside " + full + ", the results folder this run writes"},
		{name: "baseline inside -out through a symlink", o: Options{Specs: one, OutDir: empty, Overwrite: true, BaselinePath: filepath.Join(link, "results.json")}},
		{name: "-out is a symlink to the baseline's folder", o: Options{Specs: one, OutDir: link, Overwrite: true, BaselinePath: baseline},
			want: "-baseline " + baseline + " lies inside " + link},
		{name: "baseline beside -out", o: Options{Specs: one, OutDir: empty, BaselinePath: baseline}},
		{name: "baseline inside the resumed folder", o: Options{Specs: one, Resumed: &runner.Resumed{Dir: full}, BaselinePath: filepath.Join(link, "results.json")},
			want: "-baseline " + filepath.Join(link, "results.json") + " lies inside " + full},
		{name: "two servers into one folder", o: Options{Specs: same, OutDir: empty},
			want: `server "q" of x/a.hcl and server "q" of x/a.hcl would both write into ` + filepath.Join(empty, "q") + ": give each spec once, or rename a server"},
		{name: "specs of one file name in two folders", o: Options{Specs: twins, OutDir: empty}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.CheckOutDirs()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (exit.Code(err) != exit.Usage || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("err = %v (exit %d), want exit 2 with\n%s", err, exit.Code(err), tc.want)
			case tc.want != "" && strings.Contains(tc.want, "completed") && strings.Contains(err.Error(), "-resume"):
				t.Errorf("the refusal of a completed run's folder names -resume, which has nothing to measure: %v", err)
			}
		})
	}
}

// writeRun writes a results folder: res as results.json (none when nil)
// and cells.jsonl holding c (empty when nil).
func writeRun(t *testing.T, dir string, res *result.Results, c *result.PrefillCell) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if res != nil {
		if err := res.Write(filepath.Join(dir, "results.json")); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if c != nil {
		if err := result.AppendCell(&b, result.CellRecord{Server: "q", Phase: vocab.PhasePrefill, Prefill: c}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "cells.jsonl"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReusableOutDir: only a folder whose run recorded no cell and no
// verdict is reusable; the error that ended that run is returned to be said.
func TestReusableOutDir(t *testing.T) {
	root := t.TempDir()
	cell := result.PrefillCell{Context: 1024, Status: vocab.StatusValid, TPS: 1}
	tests := []struct {
		name    string
		res     *result.Results
		cell    *result.PrefillCell
		want    bool
		wantErr string
	}{
		{name: "nothing measured", res: &result.Results{Error: "port taken"}, want: true, wantErr: "port taken"},
		{name: "a cell in results.json", res: &result.Results{Prefill: []result.PrefillCell{cell}}, cell: &cell},
		{name: "a cell in cells.jsonl only", res: &result.Results{Error: "crashed"}, cell: &cell, wantErr: "crashed"},
		{name: "a verdict", res: &result.Results{Verdicts: []result.Verdict{{Test: "q/assert/x"}}}},
		{name: "no results.json, empty cells.jsonl", want: true},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(root, strconv.Itoa(i))
			writeRun(t, dir, tc.res, tc.cell)
			if got, err := reusableOutDir(dir); got != tc.want || err != tc.wantErr {
				t.Errorf("reusableOutDir = %v, %q; want %v, %q", got, err, tc.want, tc.wantErr)
			}
		})
	}
	if got, _ := reusableOutDir(filepath.Join(root, "missing")); got {
		t.Errorf("a missing folder is reusable: it holds no run to replace")
	}
}

// TestClearResults: -overwrite removes the files a run writes and the
// server logs it keeps (an earlier boot's, a resumed run's), and leaves
// every other file of the folder alone.
func TestClearResults(t *testing.T) {
	tests := []struct {
		name        string
		files, kept []string
	}{
		{name: "a run's files", files: []string{"results.json", "cells.jsonl", "requests.jsonl", "server.log", "report.md", "report.html", "junit.xml"}},
		{name: "kept server logs", files: []string{"server.log", "server.boot1.log", "server.boot2.log", "server.attempt1.log", "server.attempt12.log"}},
		{name: "other files stay", files: []string{"results.json", "server.attempt1.log"}, kept: []string{"notes.txt", "server.log.bak", "baseline.json"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range append(slices.Clone(tc.files), tc.kept...) {
				if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := clearResults(dir); err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var left []string
			for _, e := range entries {
				left = append(left, e.Name())
			}
			want := slices.Sorted(slices.Values(tc.kept))
			if !slices.Equal(left, want) {
				t.Errorf("left %q, want %q", left, want)
			}
		})
	}
}

// TestNewRunDir: every run gets its own folder, a second one started in the
// same second a suffixed one; latest moves to the folder it is given.
func TestNewRunDir(t *testing.T) {
	t.Chdir(t.TempDir())
	a, err := newRunDir("demo", "qwen", "20261201-094600")
	if err != nil {
		t.Fatal(err)
	}
	b, err := newRunDir("demo", "qwen", "20261201-094600")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join("slogate-out", "demo", "qwen", "20261201-094600"); a != want {
		t.Errorf("first folder %s, want %s", a, want)
	}
	if want := filepath.Join("slogate-out", "demo", "qwen", "20261201-094600-2"); b != want {
		t.Errorf("second folder %s, want %s", b, want)
	}
	if hasLatestLink(a) {
		t.Errorf("latest exists before any run completed")
	}
	for _, dir := range []string{a, b, a} {
		if err := moveLatest(dir); err != nil {
			t.Fatal(err)
		}
		got, err := os.Readlink(filepath.Join("slogate-out", "demo", "qwen", "latest"))
		if err != nil || got != filepath.Base(dir) {
			t.Errorf("latest → %q (%v), want %q", got, err, filepath.Base(dir))
		}
	}
	if !hasLatestLink(b) {
		t.Errorf("hasLatestLink(%s) = false after a run completed", b)
	}
	twin, err := newRunDir("sglang/demo", "qwen", "20261201-094600")
	if want := filepath.Join("slogate-out", "sglang", "demo", "qwen", "20261201-094600"); err != nil || twin != want {
		t.Errorf("the folder of a twin spec's run %s (%v), want %s", twin, err, want)
	}
}
