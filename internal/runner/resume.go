package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/measure"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/shellcmd"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
)

// Resumed is what `slogate run -resume DIR` found in the folder of an
// interrupted run.
type Resumed struct {
	// Dir is the folder of the interrupted run; the resumed run writes there.
	Dir string
	// Server is the name of the server that run measured.
	Server string
	// Records are the cells.jsonl records of that run.
	Records []result.CellRecord
	// Previous is that run's results.json; nil when it is unreadable.
	Previous *result.Results
}

// LoadResume reads the folder of an interrupted run. Every problem is a
// usage error (exit 2) that says which folder to give instead.
func LoadResume(dir string) (*Resumed, error) {
	fh, err := os.Open(filepath.Join(dir, "cells.jsonl"))
	if err != nil {
		return nil, exit.Usagef("-resume %s: no cells.jsonl there (%v): give the -out folder of an earlier slogate run", dir, err)
	}
	defer fh.Close()
	recs, err := result.ReadCells(fh)
	if err != nil {
		return nil, exit.Usagef("-resume %s: %v", dir, err)
	}
	rs := &Resumed{Dir: dir, Records: recs}
	if prev, err := result.Read(filepath.Join(dir, "results.json")); err == nil {
		rs.Previous = prev
		rs.Server = prev.Server.Name
	}
	if rs.Server == "" && len(recs) > 0 {
		rs.Server = recs[0].Server
	}
	if rs.Server == "" {
		return nil, exit.Usagef("-resume %s: neither results.json nor cells.jsonl says which server was measured", dir)
	}
	return rs, nil
}

// SpecPath is the spec the interrupted run measured, "" when unknown.
func (rs *Resumed) SpecPath() string {
	if rs.Previous == nil {
		return ""
	}
	return rs.Previous.Spec
}

// SelectServer keeps, of the specs, only the server the interrupted run
// measured; a spec set without it is a usage error.
func (rs *Resumed) SelectServer(specs []*spec.Spec) ([]*spec.Spec, error) {
	var names []string
	for _, sp := range specs {
		for _, srv := range sp.Servers {
			if srv.Name == rs.Server {
				cp := *sp
				cp.Servers = []*spec.Server{srv}
				return []*spec.Spec{&cp}, nil
			}
			names = append(names, strconv.Quote(srv.Name))
		}
	}
	return nil, exit.Usagef("-resume %s: that run measured server %q, but the spec defines %s: give the spec it ran", rs.Dir, rs.Server, strings.Join(names, ", "))
}

// MatchFlags makes a resumed run take the selecting flags of the run it
// continues (result.RunFlags, recorded in its results.json), so that it
// measures exactly the rest of what that run was asked: -run, -server,
// -stream-timeout and each -var not given again are taken from the record,
// and told to note; one given again with another value is a usage error
// (its cells would answer another question: start a fresh run instead), as
// is a -var the first run was not given. A secret -var (recorded redacted)
// must be given again. now holds the flags as given, given says which
// flags were (by name: "run", "server", "stream-timeout"). Results
// written before flags were recorded leave now as it is.
func (rs *Resumed) MatchFlags(now *result.RunFlags, given func(flag string) bool, note func(event.Note)) error {
	if rs.Previous == nil || rs.Previous.Flags == nil {
		return nil
	}
	was := rs.Previous.Flags
	for _, f := range []struct {
		flag     string
		was, now *string
	}{
		{"run", &was.Run, &now.Run},
		{"server", &was.Server, &now.Server},
		{"stream-timeout", &was.StreamTimeout, &now.StreamTimeout},
	} {
		switch {
		case !given(f.flag):
			if *f.was != "" && *f.now != *f.was {
				note(event.FlagCarried{Flag: f.flag, Value: *f.was})
			}
			*f.now = *f.was
		case *f.now != *f.was && f.flag != "stream-timeout":
			return exit.Usagef("-resume %s: that run was given %s, not -%s %s: a resumed run measures the rest of what that run was asked; drop -%s (or start a fresh run)",
				rs.Dir, flagText(f.flag, *f.was), f.flag, shellcmd.Quote(*f.now), f.flag)
		}
	}
	var carried []event.Var
	for _, name := range slices.Sorted(maps.Keys(was.Vars)) {
		v, ok := now.Vars[name]
		switch {
		case ok && was.Vars[name] != shellcmd.Redacted && v != was.Vars[name]:
			return exit.Usagef("-resume %s: that run was given -var %s=%s, not %s: a resumed run measures the rest of what that run was asked; drop -var %s (or start a fresh run)",
				rs.Dir, name, shellcmd.Quote(was.Vars[name]), shellcmd.Quote(v), name)
		case ok:
		case was.Vars[name] == shellcmd.Redacted:
			return exit.Usagef("-resume %s: that run was given -var %s, a secret results.json does not record: give -var %s=… again", rs.Dir, name, name)
		default:
			if now.Vars == nil {
				now.Vars = map[string]string{}
			}
			now.Vars[name] = was.Vars[name]
			carried = append(carried, event.Var{Name: name, Value: was.Vars[name]})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(now.Vars)) {
		if _, ok := was.Vars[name]; !ok {
			return exit.Usagef("-resume %s: that run was not given -var %s: a resumed run measures the rest of what that run was asked; drop it (or start a fresh run)", rs.Dir, name)
		}
	}
	if len(carried) > 0 {
		note(event.VarsCarried{Vars: carried})
	}
	return nil
}

// flagText is how a recorded flag is named in a message: "-run 'x'", or
// "no -run" when it was not given.
func flagText(flag, value string) string {
	if value == "" {
		return "no -" + flag
	}
	return "-" + flag + " " + shellcmd.Quote(value)
}

// ResumeSettings are the run settings a resumed run must share with the
// interrupted one: the flags -duration, -sim and -endpoint.
type ResumeSettings struct {
	Duration time.Duration // 0: the spec's measure.duration
	Sim      bool
	Endpoint string
}

// MatchPrevious makes a resumed run measure the way the interrupted one
// did, so that its cells and the kept ones are comparable: the same window
// (-duration of the first run carries over), the same server mode (-sim or
// -endpoint, unless given again), the same launch command and measure
// settings and workload (a change is a usage error: start a fresh run instead). What it
// carries over it tells note.
func (rs *Resumed) MatchPrevious(sp *spec.Spec, set *ResumeSettings, note func(event.Note)) error {
	prev := rs.Previous
	if prev == nil {
		return nil // only cells.jsonl survived: nothing to compare with
	}
	m := prev.Measure
	if m.DurationS > 0 {
		was := time.Duration(m.DurationS * float64(time.Second))
		switch {
		case set.Duration == 0 && sp.Measure != nil && sp.Measure.Duration != was:
			set.Duration = was
			note(event.WindowCarried{Window: was})
		case set.Duration > 0 && set.Duration != was:
			return exit.Usagef("-resume %s: that run measured %v windows, not -duration %v: its cells would not be comparable; drop -duration (or start a fresh run)", rs.Dir, was, set.Duration)
		}
	}
	if sp.Measure != nil && m.MaxOutput > 0 && (sp.Measure.MaxOutput != m.MaxOutput || max(sp.Measure.Repeat, 1) != max(m.Repeat, 1) ||
		sp.Measure.RepeatAuto != m.RepeatAuto || max(sp.Measure.Boots, 1) != max(m.Boots, 1)) {
		return exit.Usagef("-resume %s: the spec's measure block changed since that run (max_output %d → %d, repeat %d → %d): its cells would not be comparable; restore it or start a fresh run without -resume",
			rs.Dir, m.MaxOutput, sp.Measure.MaxOutput, max(m.Repeat, 1), max(sp.Measure.Repeat, 1))
	}
	if prev.Workload != nil {
		was, _ := json.Marshal(prev.Workload)
		now, _ := json.Marshal(measure.WorkloadRecord(sp.Workload))
		if !bytes.Equal(was, now) {
			return exit.Usagef("-resume %s: the spec's workload changed since that run (was %s, now %s): its cells would not be comparable; restore it or start a fresh run without -resume",
				rs.Dir, was, now)
		}
	}
	if !set.Sim && set.Endpoint == "" {
		// A run through -endpoint records no argv, even when the server it
		// measured was a simulator (Simulated from its /version).
		switch {
		case len(prev.Server.Argv) == 0 && prev.Server.Endpoint != "":
			set.Endpoint = prev.Server.Endpoint
			note(event.EndpointCarried{Endpoint: set.Endpoint})
		case prev.Server.Simulated:
			set.Sim = true
			note(event.SimCarried{})
		}
	}
	if set.Endpoint == "" && len(prev.Server.Argv) > 0 {
		if now := sp.Servers[0].RedactedArgv(); !slices.Equal(now, prev.Server.Argv) {
			return exit.Usagef("-resume %s: the server's launch command changed since that run:\n  was: %s\n  now: %s\nits cells would not be comparable; restore the spec or start a fresh run without -resume",
				rs.Dir, shellcmd.Line(nil, prev.Server.Argv), shellcmd.Line(nil, now))
		}
	}
	return nil
}

// Apply sets cfg to continue the interrupted run: its cells are kept and
// only the plan's missing ones are measured.
func (rs *Resumed) Apply(cfg *Config) {
	cfg.Resume, cfg.Previous = rs.Records, rs.Previous
	if cfg.Resume == nil {
		cfg.Resume = []result.CellRecord{}
	}
}

// Measured is the set of cells the interrupted run measured that a resumed
// run keeps (keptRecords): the others of its plan are left to measure.
func (rs *Resumed) Measured() map[vocab.CellRef]bool {
	done := map[vocab.CellRef]bool{}
	for _, rec := range keptRecords(rs.Records, rs.Server) {
		switch {
		case rec.Prefill != nil:
			done[rec.Prefill.Ref()] = true
		case rec.Decode != nil:
			done[rec.Decode.Ref()] = true
		case rec.Traffic != nil:
			done[rec.Traffic.Ref()] = true
		}
	}
	return done
}

// keptRecords are the records of server a resumed run keeps: a cell
// recorded as an error is measured again (the fault may have been
// passing), a search's probes too (a search is run again as a whole,
// docs/method.md#search); when a cell was recorded more than once, the last
// record counts. Superseded records are left as zero records in place.
func keptRecords(recs []result.CellRecord, server string) []result.CellRecord {
	var kept []result.CellRecord
	index := map[vocab.CellRef]int{}
	for _, rec := range recs {
		var ref vocab.CellRef
		var failed bool
		switch {
		case rec.Server != server:
			continue
		case rec.Decode != nil && rec.Decode.Search != "", rec.Traffic != nil && rec.Traffic.Search != "":
			continue // a search is run again as a whole (docs/method.md#search)
		case rec.Prefill != nil:
			ref, failed = rec.Prefill.Ref(), rec.Prefill.Status == vocab.StatusError
		case rec.Decode != nil:
			ref, failed = rec.Decode.Ref(), rec.Decode.Status == vocab.StatusError
		case rec.Traffic != nil:
			ref, failed = rec.Traffic.Ref(), rec.Traffic.Status == vocab.StatusError
		}
		if i, ok := index[ref]; ok {
			kept[i] = result.CellRecord{} // superseded by this later record
			delete(index, ref)
		}
		if !failed {
			index[ref] = len(kept)
			kept = append(kept, rec)
		}
	}
	return kept
}

// resume loads the cells of an interrupted run and returns how many cells
// of the plan are left to measure. A cell recorded as an error is measured
// again (the fault may have been passing); when a cell was recorded more
// than once, the last record counts. cells.jsonl is rewritten with exactly
// the kept records, so it and results.json hold each cell once.
func (r *run) resume() (int, error) {
	r.measuredRefs = map[vocab.CellRef]bool{}
	if r.cfg.Resume != nil {
		if p := r.cfg.Previous; p != nil {
			r.results.Started = p.Started
			r.results.Server = p.Server
			r.results.Server.GPUs = nil // discovered again
			r.results.Warnings = p.Warnings
		}
		kept := keptRecords(r.cfg.Resume, r.cfg.Server.Name)
		var buf bytes.Buffer
		for _, rec := range kept {
			switch {
			case rec.Prefill != nil:
				r.results.Prefill = append(r.results.Prefill, *rec.Prefill)
				r.measuredRefs[rec.Prefill.Ref()] = true
			case rec.Decode != nil:
				r.results.Decode = append(r.results.Decode, *rec.Decode)
				r.measuredRefs[rec.Decode.Ref()] = true
			case rec.Traffic != nil:
				r.results.Traffic = append(r.results.Traffic, *rec.Traffic)
				r.measuredRefs[rec.Traffic.Ref()] = true
			default:
				continue
			}
			if err := result.AppendCell(&buf, rec); err != nil {
				return 0, exit.Infraf("rewriting cells.jsonl: %v", err)
			}
		}
		if err := result.WriteFileAtomic(filepath.Join(r.cfg.OutDir, "cells.jsonl"), buf.Bytes()); err != nil {
			return 0, exit.Infraf("rewriting cells.jsonl: %v", err)
		}
		if err := r.resumeCorrectness(); err != nil {
			return 0, err
		}
	}
	left := len(r.cfg.Plan.Searches)
	for _, ref := range r.cfg.Plan.Cells() {
		if r.measuredRefs[ref] {
			r.cellsDone++
		} else {
			left++
		}
	}
	return left, nil
}

// resumeCorrectness keeps the correctness blocks the resumed run measured
// in full, with the spec's settings and dataset (results.json's record and
// its outputs in correctness.jsonl): they are not measured again. A block
// that was interrupted, changed or whose outputs are gone is measured
// again, and the run says why. correctness.jsonl is rewritten with the
// kept blocks' outputs only.
func (r *run) resumeCorrectness() error {
	p := r.cfg.Previous
	if p == nil {
		return nil
	}
	for _, c := range r.cfg.Plan.Correctness {
		prev := p.CorrectnessBlock(c.Name)
		if prev == nil {
			continue
		}
		if again, changed := correctnessChanged(prev, c); changed {
			again.Server, again.Block = r.cfg.Server.Name, c.Name
			r.note(again)
			continue
		}
		r.results.Correctness = append(r.results.Correctness, *prev)
		r.note(event.CorrectnessKept{Server: r.cfg.Server.Name, Block: c.Name, Outputs: len(prev.Outputs), File: result.CorrectnessFile})
	}
	if len(r.results.Correctness) == 0 {
		if err := os.Remove(filepath.Join(r.cfg.OutDir, result.CorrectnessFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return exit.Infraf("-resume: removing %s: %v", result.CorrectnessFile, err)
		}
		return nil
	}
	if err := r.results.WriteCorrectness(r.cfg.OutDir); err != nil {
		return exit.Infraf("-resume: rewriting %s: %v", result.CorrectnessFile, err)
	}
	return nil
}

// correctnessChanged says why block prev, as a resumed run recorded it,
// cannot stand for spec block c (the note that says so, its server and
// block left to fill); changed is false when it can (measured to its end,
// with c's settings, an output for each of c's dataset lines).
func correctnessChanged(prev *result.Correctness, c *spec.Correctness) (again event.CorrectnessRemeasured, changed bool) {
	switch {
	case prev.Unfinished:
		return event.CorrectnessRemeasured{Why: event.RemeasureUnfinished}, true
	case prev.Dataset != c.DatasetText || prev.MaxOutput != c.MaxOutput || prev.Logprobs != c.Logprobs ||
		prev.Concurrency != c.Concurrency || prev.Scorer != c.Scorer || prev.MaxMismatch != c.MaxMismatch ||
		prev.Margin != c.Margin || prev.NearTieGap != c.NearTieGap:
		return event.CorrectnessRemeasured{Why: event.RemeasureSettingsChanged}, true
	case len(prev.Outputs) != prev.Prompts || prev.Prompts != len(c.Items.Items):
		return event.CorrectnessRemeasured{Why: event.RemeasureOutputsMissing, Outputs: len(prev.Outputs), Prompts: len(c.Items.Items)}, true
	}
	for i, o := range prev.Outputs {
		if it := c.Items.Items[i]; o.Line != it.Line || o.Prompt != it.Prompt || o.Answer != it.Answer {
			return event.CorrectnessRemeasured{Why: event.RemeasureDatasetChanged, Line: it.Line}, true
		}
	}
	return event.CorrectnessRemeasured{}, false
}
