package runner

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/measure"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

func (r *run) initialResults() *result.Results {
	srv, sp := r.cfg.Server, r.cfg.Spec
	rs := result.Server{
		Name: srv.Name, Engine: srv.Engine, Device: srv.Device, Model: srv.Model, ServedModel: srv.ServedName(), Argv: srv.RedactedArgv(),
		Env: srv.RedactedEnv(), Endpoint: srv.BaseURL(), KVCacheDtype: srv.KVCacheDtype, Labels: srv.Labels,
		Simulated: r.cfg.Sim, PricePerGPUHour: srv.PricePerGPUHour,
	}
	if r.cfg.Endpoint != "" {
		rs.Endpoint = strings.TrimRight(r.cfg.Endpoint, "/")
		rs.Argv = nil
	}
	if srv.TensorParallelSize != nil {
		rs.TensorParallelSize = *srv.TensorParallelSize
	}
	if srv.MaxNumSeqs != nil {
		rs.MaxNumSeqs = *srv.MaxNumSeqs
	}
	if srv.Speculative != nil {
		rs.Speculative = srv.SpeculativeMethod()
	}
	m := result.Measure{Duration: "30s", DurationS: 30, MaxOutput: 4096, Endpoint: "completions", Repeat: 1}
	if sp.Measure != nil {
		m = result.Measure{Duration: sp.Measure.DurationText, DurationS: sp.Measure.Duration.Seconds(),
			MaxOutput: sp.Measure.MaxOutput, Endpoint: sp.Measure.Endpoint, Repeat: max(sp.Measure.Repeat, 1),
			RepeatAuto: sp.Measure.RepeatAuto, MaxRepeat: sp.Measure.MaxRepeat, MaxGPUTimeS: sp.Measure.MaxGPUTime.Seconds(),
			Percentiles: sp.Measure.Percentiles}
		if sp.Measure.Boots > 1 {
			m.Boots = sp.Measure.Boots
		}
		if m.Duration == "" || parseDurS(m.Duration) != m.DurationS {
			m.Duration = sp.Measure.Duration.String()
		}
	}
	return &result.Results{Schema: result.Schema, Spec: sp.Filename, Tool: r.cfg.Tool, Server: rs, Measure: m, Flags: r.cfg.Flags,
		Workload: measure.WorkloadRecord(sp.Workload), Started: time.Now().UTC(), Prefill: []result.PrefillCell{}, Decode: []result.DecodeCell{}, Verdicts: []result.Verdict{}}
}

func parseDurS(s string) float64 {
	d, err := time.ParseDuration(s)
	if err != nil {
		return math.NaN()
	}
	return d.Seconds()
}

func (r *run) recordPrefill(c result.PrefillCell) error {
	r.results.Prefill = append(r.results.Prefill, c)
	r.cellsDone++
	r.observer.PrefillDone(c, time.Duration(c.ElapsedS*float64(time.Second)))
	return r.persist(result.CellRecord{Server: r.cfg.Server.Name, Phase: vocab.PhasePrefill, Prefill: &c})
}

func (r *run) recordDecode(c result.DecodeCell) error {
	r.results.Decode = append(r.results.Decode, c)
	r.cellsDone++
	r.observer.DecodeDone(c, time.Duration(c.ElapsedS*float64(time.Second)))
	return r.persist(result.CellRecord{Server: r.cfg.Server.Name, Phase: vocab.PhaseDecode, Decode: &c})
}

// persist writes out the requests of the cell (requests.jsonl, synced),
// appends the cell to cells.jsonl (synced) and rewrites results.json.
func (r *run) persist(rec result.CellRecord) error {
	if err := r.requests.sync(); err != nil {
		return exit.Infraf("writing requests.jsonl: %v", err)
	}
	if err := result.AppendCell(r.cellsFile, rec); err != nil {
		return exit.Infraf("writing cells.jsonl: %v", err)
	}
	if err := r.cellsFile.Sync(); err != nil {
		return exit.Infraf("syncing cells.jsonl: %v", err)
	}
	return r.writeResults()
}

func (r *run) writeResults() error {
	if err := r.results.Write(filepath.Join(r.cfg.OutDir, "results.json")); err != nil {
		return exit.Infraf("writing results.json: %v", err)
	}
	return nil
}

// sortCells puts the cells in plan order (a resumed run appends the
// missing ones after those measured before).
func (r *run) sortCells() {
	order := map[vocab.CellRef]int{}
	for i, ref := range r.cfg.Plan.Cells() {
		order[ref] = i
	}
	pos := func(ref vocab.CellRef) int {
		if i, ok := order[ref]; ok {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(r.results.Prefill, func(a, b result.PrefillCell) int { return pos(a.Ref()) - pos(b.Ref()) })
	slices.SortStableFunc(r.results.Decode, func(a, b result.DecodeCell) int { return pos(a.Ref()) - pos(b.Ref()) })
	slices.SortStableFunc(r.results.Traffic, func(a, b result.TrafficCell) int { return pos(a.Ref()) - pos(b.Ref()) })
}

// recordTraffic keeps a finished traffic cell.
func (r *run) recordTraffic(c result.TrafficCell) error {
	r.results.Traffic = append(r.results.Traffic, c)
	r.cellsDone++
	if o, ok := r.observer.(event.TrafficObserver); ok {
		o.TrafficDone(c, time.Duration(c.ElapsedS*float64(time.Second)))
	}
	return r.persist(result.CellRecord{Server: r.cfg.Server.Name, Phase: vocab.PhaseTraffic, Traffic: &c})
}
