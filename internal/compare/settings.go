package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/engine/registry"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/workload"
)

// Difference is one setting that differs between run A and run B.
type Difference struct {
	// Setting names it: "window", "max_output", "workload.prompt",
	// "vLLM", "--max-num-seqs", "env VLLM_USE_V1".
	Setting string
	// A and B are the values; "" with HasA (HasB) false when the run does
	// not have the setting at all, and "" with HasA true for a flag without
	// a value.
	A, B       string
	HasA, HasB bool
}

// String is "window: 3s → 1s" (a value missing on one side reads "unset").
func (d Difference) String() string {
	return d.Setting + ": " + d.value(d.A, d.HasA) + " → " + d.value(d.B, d.HasB)
}

// Short is the difference without a colon, as in a header line: "vLLM 0.26.1
// → 0.27.2", "--max-num-seqs 32 → 64", "--enforce-eager added",
// "--kv-cache-dtype fp8 removed".
func (d Difference) Short() string {
	flag := strings.HasPrefix(d.Setting, "-") || strings.HasPrefix(d.Setting, "env ")
	switch {
	case !flag:
	case d.HasA && !d.HasB:
		return strings.TrimSpace(d.Setting+" "+d.A) + " removed"
	case !d.HasA && d.HasB:
		return strings.TrimSpace(d.Setting+" "+d.B) + " added"
	}
	return d.Setting + " " + d.value(d.A, d.HasA) + " → " + d.value(d.B, d.HasB)
}

func (d Difference) value(v string, has bool) string {
	switch {
	case !has:
		return "unset"
	case v == "":
		return `""`
	}
	return v
}

func changed(setting, a, b string) []Difference {
	if a == b {
		return nil
	}
	return []Difference{{Setting: setting, A: a, B: b, HasA: true, HasB: true}}
}

// Settings lists the measurement settings in which b differs from a: the
// window (measure.duration as run, -duration included), max_output, the
// endpoint, repeat (unless either side is repeat = "auto"), the workload,
// whether the server was simulated, and the engine. Two
// runs are only comparable when the list is empty: a 1 s window is not a
// 3 s window measured again (docs/method.md#comparing-runs).
func Settings(a, b *result.Results) []Difference {
	return settingsDiff(measuredSettings(a), measuredSettings(b))
}

// trafficSettings are the differences of the schedules of the traffic
// cells a and b both measured, as settings (refused unless
// -allow-settings-change): "traffic/replay/rate=4 seed: 1 → 2".
func trafficSettings(a, b *result.Results) []Difference {
	var out []Difference
	for i := range a.Traffic {
		ca := &a.Traffic[i]
		cb, ok := b.TrafficCell(ca.Ref())
		if !ok || ca.Schedule == nil || cb.Schedule == nil || !ca.Status.Measured() || !cb.Status.Measured() {
			continue
		}
		for _, d := range ca.Schedule.Differences(cb.Schedule) {
			out = append(out, scheduleDifference(ca.Ref(), d))
		}
	}
	return out
}

// scheduleDifference is one phrase of Schedule.Differences ("seed 1 vs 2")
// as a Difference of the cell's schedule.
func scheduleDifference(ref vocab.CellRef, phrase string) Difference {
	x, y, ok := strings.Cut(phrase, " vs ")
	if i := strings.LastIndexByte(x, ' '); ok && i > 0 {
		return Difference{Setting: ref.Name() + " " + x[:i], A: x[i+1:], B: y, HasA: true, HasB: true}
	}
	return Difference{Setting: ref.Name() + " schedule", A: phrase, HasA: true, HasB: true}
}

// settings are what Settings compares, of a run measured or about to be
// (Planned).
type settings struct {
	measure   result.Measure
	simulated bool
	engine    string
	// workload is the record as results.json writes it; known is false
	// before a run, which records it itself.
	workload json.RawMessage
	known    bool
}

func measuredSettings(r *result.Results) settings {
	return settings{measure: r.Measure, simulated: r.Server.Simulated, engine: r.Server.EngineName(), workload: workloadJSON(r.Workload), known: true}
}

// settingsDiff lists the settings in which b differs from a; a workload is
// compared only when both are known.
func settingsDiff(a, b settings) []Difference {
	var out []Difference
	if a.measure.DurationS != b.measure.DurationS {
		out = append(out, changed("window", window(a.measure), window(b.measure))...)
	}
	out = append(out, changed("max_output", strconv.Itoa(a.measure.MaxOutput), strconv.Itoa(b.measure.MaxOutput))...)
	out = append(out, changed("endpoint", a.measure.Endpoint, b.measure.Endpoint)...)
	if !a.measure.RepeatAuto && !b.measure.RepeatAuto {
		// repeat = "auto" takes as many repeats as each cell needs: its
		// counts are not a setting to match (docs/method.md#repeat-auto).
		out = append(out, changed("repeat", strconv.Itoa(max(a.measure.Repeat, 1)), strconv.Itoa(max(b.measure.Repeat, 1)))...)
	}
	if a.known && b.known {
		out = append(out, workloadDiff(a.workload, b.workload)...)
	}
	out = append(out, changed("server", serverKind(a.simulated), serverKind(b.simulated))...)
	out = append(out, changed("engine", a.engine, b.engine)...)
	return out
}

// EngineChanged reports whether a and b measured different engines: their
// comparison is a settings change, and it informs, never gates
// (docs/method.md#comparing-engines).
func EngineChanged(a, b *result.Results) bool {
	return a.Server.EngineName() != b.Server.EngineName()
}

// window is the measurement window as written ("3s"), or its seconds.
func window(m result.Measure) string {
	if m.Duration != "" {
		return m.Duration
	}
	return strconv.FormatFloat(m.DurationS, 'f', -1, 64) + "s"
}

func serverKind(simulated bool) string {
	if simulated {
		return "simulated"
	}
	return "real"
}

// workloadJSON is the record as results.json writes it; nil when absent.
func workloadJSON(w *workload.Record) json.RawMessage {
	if w == nil {
		return nil
	}
	b, err := json.Marshal(w)
	if err != nil { // a Record always marshals; compared as absent otherwise
		return nil
	}
	return b
}

// workloadDiff compares two workload records as JSON values; an absent
// record equals an absent one. Two objects are compared key by key
// ("workload.prompt: article → random"); anything else as a whole.
func workloadDiff(a, b json.RawMessage) []Difference {
	va, okA := decodeJSON(a)
	vb, okB := decodeJSON(b)
	if !okA && !okB {
		return nil
	}
	if !okA || !okB {
		return []Difference{{Setting: "workload", A: compactJSON(a), B: compactJSON(b), HasA: okA, HasB: okB}}
	}
	if reflect.DeepEqual(va, vb) {
		return nil
	}
	ma, objA := va.(map[string]any)
	mb, objB := vb.(map[string]any)
	if !objA || !objB {
		return changed("workload", compactJSON(a), compactJSON(b))
	}
	var keys []string
	for k := range ma {
		keys = append(keys, k)
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []Difference
	for _, k := range keys {
		xa, inA := ma[k]
		xb, inB := mb[k]
		if inA && inB && reflect.DeepEqual(xa, xb) {
			continue
		}
		out = append(out, Difference{Setting: "workload." + k, A: marshalJSON(xa), B: marshalJSON(xb), HasA: inA, HasB: inB})
	}
	return out
}

// decodeJSON reads a raw JSON value; ok is false when it is absent or null.
func decodeJSON(raw json.RawMessage) (v any, ok bool) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return string(raw), true // not JSON: compared as text
	}
	return normalize(v), v != nil
}

// normalize makes equal numbers equal values (0.7 = 0.70, 1 = 1.0): a
// number becomes a float64 unless it is an integer too large for one to
// hold exactly (a 64-bit seed), which stays as written.
func normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil || math.Abs(f) > 1<<53 {
			return x
		}
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	}
	return v
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func marshalJSON(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// unmeasured says whether a flag differs between two runs without
// changing what is measured on either side's engine: where the server
// listens, and its (redacted) key (engine.Syntax.UnmeasuredFlags).
func unmeasured(a, b *result.Results, flag string) bool {
	return slices.Contains(registry.For(a.Server.EngineName()).Syntax().UnmeasuredFlags, flag) ||
		slices.Contains(registry.For(b.Server.EngineName()).Syntax().UnmeasuredFlags, flag)
}

// Server lists how b's server differs from a's: the model, the vLLM
// version, every command-line flag added, removed or changed (--host,
// --port and --api-key aside), and every environment variable. These are
// what an upgrade changes, so they are shown, never refused.
func Server(a, b *result.Results) []Difference {
	var out []Difference
	out = append(out, changed("model", a.Server.Model, b.Server.Model)...)
	if va, vb := a.Server.Version, b.Server.Version; va != vb {
		setting := registry.Title(a.Server.EngineName())
		if !EngineChanged(a, b) {
			out = append(out, Difference{Setting: setting, A: va, B: vb, HasA: va != "", HasB: vb != ""})
		} else {
			out = append(out, Difference{Setting: "version", A: setting + " " + va, B: registry.Title(b.Server.EngineName()) + " " + vb, HasA: true, HasB: true})
		}
	}
	fa, fb := flags(a.Server.Argv), flags(b.Server.Argv)
	for _, name := range unionKeys(fa.order, fb.order) {
		va, inA := fa.values[name]
		vb, inB := fb.values[name]
		if unmeasured(a, b, name) || (inA && inB && va == vb) {
			continue
		}
		out = append(out, Difference{Setting: name, A: va, B: vb, HasA: inA, HasB: inB})
	}
	var envs []string
	for k := range a.Server.Env {
		envs = append(envs, k)
	}
	for k := range b.Server.Env {
		envs = append(envs, k)
	}
	sort.Strings(envs)
	envs = slices.Compact(envs)
	for _, k := range envs {
		va, inA := a.Server.Env[k]
		vb, inB := b.Server.Env[k]
		if inA && inB && va == vb {
			continue
		}
		out = append(out, Difference{Setting: "env " + k, A: va, B: vb, HasA: inA, HasB: inB})
	}
	return out
}

// JoinDifferences joins the differences' "setting: a → b" with sep.
func JoinDifferences(ds []Difference, sep string) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, d.String())
	}
	return strings.Join(parts, sep)
}

// ServerHeader is the server differences on one line, or "" when there are
// none: "vLLM 0.26.1 → 0.27.2; --max-num-seqs 32 → 64".
func ServerHeader(diffs []Difference) string {
	var parts []string
	for _, d := range diffs {
		parts = append(parts, d.Short())
	}
	return strings.Join(parts, "; ")
}

// flagSet is a server's command-line flags: name → value ("" for a flag
// without one), in order of appearance.
type flagSet struct {
	values map[string]string
	order  []string
}

// flags reads the flags of a server command line ("vllm serve MODEL
// --max-num-seqs 32 --enforce-eager --kv-cache-dtype=fp8"): a flag takes the
// next word as its value unless that word is itself a flag. Positional
// words (the program, "serve", the model) are not flags.
func flags(argv []string) flagSet {
	fs := flagSet{values: map[string]string{}}
	set := func(name, v string) {
		if _, seen := fs.values[name]; !seen {
			fs.order = append(fs.order, name)
		}
		fs.values[name] = v
	}
	for i := 0; i < len(argv); i++ {
		w := argv[i]
		if !isFlag(w) {
			continue
		}
		if name, v, ok := strings.Cut(w, "="); ok {
			set(name, v)
			continue
		}
		if i+1 < len(argv) && !isFlag(argv[i+1]) {
			set(w, argv[i+1])
			i++
			continue
		}
		set(w, "")
	}
	return fs
}

// isFlag reports whether a word is a flag: it starts with "-" and is not a
// negative number.
func isFlag(w string) bool {
	if len(w) < 2 || w[0] != '-' {
		return false
	}
	_, err := strconv.ParseFloat(w, 64)
	return err != nil
}

// unionKeys is a's names then b's names not in a.
func unionKeys(a, b []string) []string {
	out := slices.Clone(a)
	for _, k := range b {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// PlannedTraffic is a traffic block about to be measured, as far as its
// cells' schedules are known before the run (result.Schedule): the
// seed, the arrival process, the warm-up, the window and the named
// workload. What its prompts are (the workload's settings, a dataset
// file's SHA-256) the run records itself, and Build compares them.
type PlannedTraffic struct {
	Label      string
	Seed       int64
	Arrivals   string
	Burstiness float64
	WarmUp     time.Duration
	Window     time.Duration
	Workload   string
}

// plannedTrafficSettings are the differences between the schedules of
// base's traffic cells and those planned for their blocks, as settings:
// each of base's cells with a schedule whose block is planned, compared on
// what PlannedTraffic knows.
func plannedTrafficSettings(base *result.Results, planned []PlannedTraffic) []Difference {
	var out []Difference
	for i := range base.Traffic {
		c := &base.Traffic[i]
		if c.Schedule == nil || !c.Status.Measured() {
			continue
		}
		for _, t := range planned {
			if t.Label != c.Traffic {
				continue
			}
			s := *c.Schedule // what the plan cannot know stays the baseline's
			s.Seed, s.Arrivals, s.Burstiness, s.WarmUpS, s.WindowS, s.Workload = t.Seed, t.Arrivals, t.Burstiness, t.WarmUp.Seconds(), t.Window.Seconds(), t.Workload
			for _, d := range c.Schedule.Differences(&s) {
				out = append(out, scheduleDifference(c.Ref(), d))
			}
		}
	}
	return out
}
