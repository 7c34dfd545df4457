package run

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
)

// DefaultOutRoot is where a run without -out writes: a fresh folder per
// run, DefaultOutRoot/<spec>/<server>/<run-id>, so that two runs never
// write into the same folder, and beside those folders a link LatestLink
// to the last run that completed.
const DefaultOutRoot = "slogate-out"

// LatestLink is the name of the link, in DefaultOutRoot/<spec>/<server>,
// to the folder of the last run of that server that completed (measured its
// plan and wrote its reports, whatever the verdicts): `slogate codify
// slogate-out/demo/qwen/latest/results.json`. A run that was interrupted or
// stopped by an infrastructure error leaves it where it was.
const LatestLink = "latest"

// runIDFormat names a default results folder after the run's start (UTC);
// a second run started within the same second gets a "-2" suffix.
const runIDFormat = "20060102-150405"

// resultsMarkers are the files that make a folder a run's results: a run
// refuses to write into a folder holding one unless -resume or -overwrite.
var resultsMarkers = []string{"results.json", "cells.jsonl"}

// resultFiles are the files a run writes into its results folder (runner:
// results.json, cells.jsonl, requests.jsonl, server.log; publish: the
// reports), and resultLogs the server logs it keeps (an earlier boot's,
// a resumed run's) with the rate searches' charts beside report.md
// (report.SearchCharts). -overwrite removes them before the run, so that
// nothing of the replaced run is left to be read as this one's.
var (
	resultFiles = []string{"results.json", "cells.jsonl", "requests.jsonl", "server.log", "report.md", "report.html", "junit.xml"}
	resultLogs  = []string{"server.boot*.log", "server.attempt*.log", "search-*.svg"}
)

// explicitOutDir is the folder -resume or -out gives a server; "" when the
// run writes into a fresh default folder (newRunDir). With -out DIR and
// several servers each writes into DIR/<run name>: DIR/<server>, or
// DIR/<spec>/<server> when another spec of the run has a server of the
// same name, <spec> with the folders that tell two specs of one file name
// apart (vocab.RunNames, the rule of merged folders).
func (o *Options) explicitOutDir(sp *spec.Spec, srv *spec.Server) string {
	switch {
	case o.Resumed != nil:
		return o.Resumed.Dir
	case o.OutDir == "":
		return ""
	}
	var keys []vocab.RunKey
	at := -1
	for _, s := range o.Specs {
		for _, v := range s.Servers {
			if s == sp && v == srv {
				at = len(keys)
			}
			keys = append(keys, vocab.RunKey{Spec: s.Filename, Server: v.Name})
		}
	}
	if len(keys) == 1 || at < 0 {
		return o.OutDir
	}
	return filepath.Join(o.OutDir, filepath.FromSlash(vocab.RunNames(keys)[at]))
}

// CheckOutDirs refuses, before any server starts, a run that would lose
// results (exit 2, saying what to do instead): a -out folder that already
// holds a run's results (unless -overwrite; -resume continues one), two
// servers writing into one folder, and a -baseline inside a folder the run
// writes (it would be overwritten by the run it is compared with; symlinks
// are resolved on both sides). A default folder is new for every run, so
// it holds nothing.
func (o *Options) CheckOutDirs() error {
	if o.Resumed != nil && o.Overwrite {
		return exit.Usagef("-resume %s continues the run in that folder and -overwrite would replace it: give one of them", o.Resumed.Dir)
	}
	writer := map[string]string{} // folder → server that writes it
	for _, sp := range o.Specs {
		for _, srv := range sp.Servers {
			dir := o.explicitOutDir(sp, srv)
			if dir == "" {
				continue
			}
			who := fmt.Sprintf("server %q of %s", srv.Name, sp.Filename)
			key := realPath(dir)
			if prev, ok := writer[key]; ok {
				return exit.Usagef("%s and %s would both write into %s: give each spec once, or rename a server", prev, who, dir)
			}
			writer[key] = who
			if o.BaselinePath != "" && inside(o.BaselinePath, dir) {
				return exit.Usagef("-baseline %s lies inside %s, the results folder this run writes: the run would overwrite what it is compared with; copy the baseline out of it or write this run elsewhere (a new -out, or none for a fresh slogate-out folder)", o.BaselinePath, dir)
			}
			if o.Resumed != nil || o.Overwrite {
				continue
			}
			if h := readHeld(dir); len(h.markers) > 0 && h.measured {
				if h.left {
					return exit.Usagef("%s already holds the results of a run (%s): continue it with `-resume %s`, write this run elsewhere with a new -out (or none: each run then gets its own folder under %s), or replace it with -overwrite", dir, strings.Join(h.markers, ", "), dir, DefaultOutRoot)
				}
				// A completed run: -resume would have nothing to measure.
				return exit.Usagef("%s already holds the results of a completed run (%s): write this run elsewhere with a new -out (or none: each run then gets its own folder under %s), or replace it with -overwrite", dir, strings.Join(h.markers, ", "), DefaultOutRoot)
			}
		}
	}
	return nil
}

// held is what a results folder holds, as CheckOutDirs judges it.
type held struct {
	// markers are the results markers the folder holds.
	markers []string
	// measured is false when the run there recorded no cell and no verdict
	// (it failed before measuring: the port was taken, the server never
	// came up): the folder is then reusable (reusableOutDir).
	measured bool
	// left is true when that run did not finish (interrupted, ended by an
	// error, a cell left unmeasured, or no readable results.json): -resume
	// can continue it.
	left bool
	// err is the error that ended that run, "" when none is recorded.
	err string
}

// readHeld reads what dir holds. Anything it cannot read counts as
// measured and left: a folder is never taken as empty by mistake.
func readHeld(dir string) held {
	var h held
	for _, name := range resultsMarkers {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			h.markers = append(h.markers, name)
		}
	}
	if len(h.markers) == 0 {
		return h
	}
	h.measured, h.left = true, true
	res, err := result.Read(filepath.Join(dir, "results.json"))
	switch {
	case errors.Is(err, fs.ErrNotExist): // cells.jsonl alone says
	case err != nil:
		return h
	default:
		h.err = res.Error
		h.left = res.Finished.IsZero() || res.Error != "" || res.Interrupted || len(res.Unmeasured()) > 0
		if res.Measured()+len(res.Verdicts) > 0 {
			return h
		}
	}
	recs, err := readCellsFile(filepath.Join(dir, "cells.jsonl"))
	h.measured = err != nil || len(recs) > 0
	return h
}

// readCellsFile reads a cells.jsonl; a missing file holds no record.
func readCellsFile(path string) ([]result.CellRecord, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return result.ReadCells(f)
}

// reusableOutDir reports whether dir holds the files of a run that
// measured nothing (readHeld): a run into it replaces them (clearResults)
// instead of being refused, so that a CI retry into the same -out works.
// It returns the error that ended that run.
func reusableOutDir(dir string) (bool, string) {
	h := readHeld(dir)
	return len(h.markers) > 0 && !h.measured, h.err
}

// clearResults removes the files of the run dir held (-overwrite); other
// files there are left alone.
func clearResults(dir string) error {
	names := slices.Clone(resultFiles)
	for _, pattern := range resultLogs {
		logs, _ := filepath.Glob(filepath.Join(dir, pattern)) // the patterns are well-formed
		for _, l := range logs {
			names = append(names, filepath.Base(l))
		}
	}
	for _, name := range names {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return exit.Infraf("-overwrite: %v", err)
		}
	}
	return nil
}

// removeRun removes the files of a run that started no server and
// measured nothing, and its folder when the run made it (existed: it was
// there before) and nothing else is left in it. The parents a default
// folder was made in stay: another run may be making its folder there.
func removeRun(dir string, existed bool) {
	if clearResults(dir) != nil || existed {
		return
	}
	os.Remove(dir) // fails, and keeps it, when something else is in it
}

// isDir reports whether path is a folder; isFile whether it is a file.
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// newRunDir creates the fresh default folder of one server's run,
// DefaultOutRoot/<spec>/<server>/<id>, with a numeric suffix when a run
// started in the same second already took the name; specName is the
// spec's name among the run's specs (vocab.SpecNames: its file name, with
// the folders that tell two specs of one file name apart). Mkdir fails on
// an existing folder, so two concurrent runs never share one.
func newRunDir(specName, server, id string) (string, error) {
	parent := filepath.Join(DefaultOutRoot, filepath.FromSlash(specName), server)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", exit.Infraf("creating the results folder: %v", err)
	}
	for n := 1; ; n++ {
		name := id
		if n > 1 {
			name = fmt.Sprintf("%s-%d", id, n)
		}
		dir := filepath.Join(parent, name)
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", exit.Infraf("creating the results folder: %v", err)
		}
	}
}

// runID names the default folders of a run started at t.
func runID(t time.Time) string { return t.UTC().Format(runIDFormat) }

// hasLatestLink reports whether dir's parent holds a LatestLink: dir is
// then a default results folder (a resumed one too).
func hasLatestLink(dir string) bool {
	fi, err := os.Lstat(filepath.Join(filepath.Dir(dir), LatestLink))
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// moveLatest points dir's sibling LatestLink at dir, atomically (a new
// link renamed over the old one), relative so that the folder can move.
func moveLatest(dir string) error {
	parent := filepath.Dir(dir)
	tmp := filepath.Join(parent, fmt.Sprintf(".%s-%d", LatestLink, os.Getpid()))
	os.Remove(tmp)
	if err := os.Symlink(filepath.Base(dir), tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(parent, LatestLink)); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// inside reports whether file lies in dir or below it, after resolving
// both to real absolute paths (dir need not exist yet).
func inside(file, dir string) bool {
	rel, err := filepath.Rel(realPath(dir), realPath(file))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// realPath is path made absolute with every symlink resolved, as far as it
// exists: the part that does not exist yet is appended as written.
func realPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		if filepath.Dir(p) == p {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}
