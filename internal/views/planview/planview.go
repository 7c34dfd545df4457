// Package planview is the plan view (a view, so under internal/views): the
// plan as `slogate plan` shows it, per server, the launch command and env
// (API key redacted), the cells in measurement order, the cells each
// assertion reads, the correctness blocks, and the estimated measuring time, as a JSON document or
// as text. It renders plan's values and decides nothing.
package planview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/plan"
	"github.com/slogate/slogate/internal/shellcmd"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
)

// Document is the document `slogate plan -format json` prints.
type Document struct {
	Servers []Server `json:"servers"`
}

// Server is one server's plan: its launch (API key redacted), the
// cells in measurement order, what each assertion reads, and the estimate.
type Server struct {
	Name    string            `json:"name"`
	Spec    string            `json:"spec"`
	Argv    []string          `json:"argv"`
	Env     map[string]string `json:"env"`
	Command string            `json:"command"` // argv and env as one shell line
	// LaunchNotes say how the engine rendered a flag that is not an
	// attribute as written (llama.cpp's -c = max_model_len × --parallel).
	LaunchNotes []string `json:"launch_notes,omitempty"`
	// CPUBuilds says the engine has CPU-only builds (llama.cpp): without
	// a GPU the server uses none, and its cost is the estimated time.
	CPUBuilds bool `json:"cpu_builds,omitempty"`
	// Device is the server's device attribute, "cpu" for a CPU build
	// (which uses no GPU wherever it runs), "" when unset.
	Device     string      `json:"device,omitempty"`
	Cells      []Cell      `json:"cells"`
	Assertions []Assertion `json:"assertions"`
	Searches   []Search    `json:"searches,omitempty"`
	// Correctness are the kept correctness blocks, measured after the
	// cells and not in the estimate (docs/method.md#correctness).
	Correctness []Correctness `json:"correctness,omitempty"`
	Estimated   int64         `json:"estimated_s"`
	// EstimatedMax is the estimate at max_repeat (repeat = "auto"), the
	// same as Estimated otherwise.
	EstimatedMax int64 `json:"estimated_max_s"`
	// GPUs is plan.GPUs; the GPU-hours are the estimates × GPUs.
	GPUs        int     `json:"gpus"`
	GPUHours    float64 `json:"estimated_gpu_hours"`
	GPUHoursMax float64 `json:"estimated_max_gpu_hours"`
	Repeats     Repeats `json:"repeats"`
}

// Repeats is the repeat design of measure (docs/method.md#repeats).
type Repeats struct {
	// Auto is repeat = "auto": Min repeats a cell at least, Max at most,
	// within MaxGPUTimeS of GPU time (0: no bound).
	Auto        bool  `json:"auto"`
	Min         int   `json:"min"`
	Max         int   `json:"max"`
	MaxGPUTimeS int64 `json:"max_gpu_time_s,omitempty"`
	// Boots is how many times the server is started, the repeats split
	// over the starts.
	Boots int `json:"boots"`
}

// repeatsOf is the repeat design of m (nil: the defaults).
func repeatsOf(m *spec.Measure) Repeats {
	if m == nil {
		return Repeats{Min: 1, Max: 1, Boots: 1}
	}
	return Repeats{Auto: m.RepeatAuto, Min: max(m.Repeat, 1), Max: max(m.Repeat, m.MaxRepeat, 1),
		MaxGPUTimeS: int64(m.MaxGPUTime.Seconds()), Boots: max(m.Boots, 1)}
}

// String is the design in words: "5 a cell", "auto: 4 to 20 a cell within
// 2h0m0s of GPU time", with ", over 2 boots".
func (r Repeats) String() string {
	s := fmt.Sprintf("%d a cell", r.Min)
	if r.Auto {
		s = fmt.Sprintf("auto: %d to %d a cell, until each gated cell is decided", r.Min, r.Max)
		if r.MaxGPUTimeS > 0 {
			s += fmt.Sprintf(", within %s of GPU time", time.Duration(r.MaxGPUTimeS)*time.Second)
		}
	}
	if r.Boots > 1 {
		s += fmt.Sprintf(", over %d server boots", r.Boots)
	}
	return s
}

// gpuHours is d × gpus in hours, to 3 decimals.
func gpuHours(d time.Duration, gpus int) float64 {
	return math.Round(d.Hours()*float64(gpus)*1000) / 1000
}

// Cell is one cell of the plan and what the plan can tell of its status
// before the run (plan.CellOutlook): "over_capacity" (the run skips it) or
// "queued" (more requests than the server runs at once), with the
// arithmetic; both omitted when nothing is known.
type Cell struct {
	vocab.CellRef
	plan.Outlook
}

// Search is one search block: its probes are tests Test + "/conc=N"
// (docs/method.md#search), or Test + "/rate=R" for a rate search over
// traffic block Traffic (docs/method.md#rate-search), each of at most
// MaxWindows windows, then CheckWindows windows at its answer.
type Search struct {
	Name       string     `json:"name"`
	Test       string     `json:"test"`
	Context    int        `json:"context,omitzero"`
	Range      [2]int     `json:"range,omitzero"`
	Traffic    string     `json:"traffic,omitempty"`
	RateRange  [2]float64 `json:"rate_range,omitzero"`
	Precision  float64    `json:"precision,omitempty"`
	MaxProbes  int        `json:"max_probes"`
	MaxWindows int        `json:"max_windows,omitempty"`
	// CheckWindows is a rate search's check_windows: the windows it
	// measures at its answer for a later run's paired check of capacity
	// lost (docs/method.md#paired-capacity-check); 0 when none.
	CheckWindows int `json:"check_windows,omitempty"`
	// Estimated, EstimatedLow and EstimatedHigh are a rate search's
	// measuring time in seconds, expected and its range, and Windows the
	// windows each counts (plan.EstimateSearch,
	// docs/method.md#rate-search-time).
	Estimated     int64  `json:"estimated_s,omitempty"`
	EstimatedLow  int64  `json:"estimated_low_s,omitempty"`
	EstimatedHigh int64  `json:"estimated_high_s,omitempty"`
	Windows       [3]int `json:"windows,omitzero"`
}

// Correctness is one correctness block (docs/spec.md#correctness): its
// test, the dataset's lines sent once each, greedy, to the completions or
// the chat API, the tokens asked of each, the top-k logprobs kept, the
// requests in flight, and the scorer ("" without one).
type Correctness struct {
	Name        string `json:"name"`
	Test        string `json:"test"`
	Dataset     string `json:"dataset"`
	Prompts     int    `json:"prompts"`
	API         string `json:"api"` // "completions" or "chat"
	MaxOutput   int    `json:"max_output"`
	Logprobs    int    `json:"logprobs"`
	Concurrency int    `json:"concurrency"`
	Scorer      string `json:"scorer,omitempty"`
}

// Assertion is one assert or expect block and the cells it reads.
type Assertion struct {
	Name  string          `json:"name"`
	Kind  string          `json:"kind"` // "assert" or "expect"
	Test  string          `json:"test"` // full test name, as -run matches it
	Cells []vocab.CellRef `json:"cells"`
	// Searches are the search blocks an assert reads (search["NAME"]).
	Searches []string `json:"searches,omitempty"`
	// Correctness are the correctness blocks an assert reads
	// (correctness["NAME"]).
	Correctness []string `json:"correctness,omitempty"`
}

// New plans every server of every spec, keeping the cells and assertions
// whose test name keep matches (nil keeps all).
func New(specs []*spec.Spec, keep *regexp.Regexp) Document {
	doc := Document{Servers: []Server{}}
	for _, sp := range specs {
		for _, srv := range sp.Servers {
			doc.Servers = append(doc.Servers, newServer(sp, srv, plan.New(sp, srv, keep)))
		}
	}
	return doc
}

// newServer is one server's plan p, from spec sp.
func newServer(sp *spec.Spec, srv *spec.Server, p *plan.Plan) Server {
	env := srv.RedactedEnv()
	if env == nil {
		env = map[string]string{}
	}
	out := Server{
		Name:         srv.Name,
		Spec:         sp.Filename,
		Argv:         srv.RedactedArgv(),
		Env:          env,
		Command:      shellcmd.Line(env, srv.RedactedArgv()),
		LaunchNotes:  launchNotesText(srv.LaunchNotes()),
		CPUBuilds:    srv.SyntaxOf().CPUBuilds,
		Device:       srv.Device,
		Cells:        []Cell{},
		Assertions:   []Assertion{},
		Estimated:    int64(math.Round(p.Estimated.Seconds())),
		EstimatedMax: int64(math.Round(p.EstimatedMax.Seconds())),
		GPUs:         p.GPUs,
		GPUHours:     gpuHours(p.Estimated, p.GPUs),
		GPUHoursMax:  gpuHours(p.EstimatedMax, p.GPUs),
		Repeats:      repeatsOf(sp.Measure),
	}
	if srv.CPUBuild() { // no GPU whatever the machine has
		out.GPUs, out.GPUHours, out.GPUHoursMax = 0, 0, 0
	}
	maxOutput := spec.DefaultMaxOutput
	if sp.Measure != nil && sp.Measure.MaxOutput > 0 {
		maxOutput = sp.Measure.MaxOutput
	}
	for _, c := range p.Cells() {
		out.Cells = append(out.Cells, Cell{CellRef: c, Outlook: plan.CellOutlook(srv, maxOutput, c)})
	}
	for _, a := range p.Asserts {
		out.Assertions = append(out.Assertions, Assertion{
			Name: a.Name, Kind: "assert", Test: vocab.TestID{Server: srv.Name, Kind: vocab.KindAssert, Block: a.Name}.Name(), Cells: nonNil(a.Cells),
			Searches: a.Searches, Correctness: plan.CorrectnessRead(a),
		})
	}
	for _, c := range p.Correctness {
		api, prompts := "completions", 0
		if c.Chat {
			api = "chat"
		}
		if c.Items != nil {
			prompts = len(c.Items.Items)
		}
		out.Correctness = append(out.Correctness, Correctness{Name: c.Name, Test: vocab.TestID{Server: srv.Name, Kind: vocab.KindCorrectness, Block: c.Name}.Name(),
			Dataset: c.DatasetText, Prompts: prompts, API: api, MaxOutput: c.MaxOutput, Logprobs: c.Logprobs, Concurrency: c.Concurrency, Scorer: c.Scorer})
	}
	for _, x := range p.Searches {
		test := vocab.TestID{Server: srv.Name, Kind: vocab.KindSearch, Block: x.Name}.Name()
		if x.IsRate() {
			e := plan.EstimateSearch(sp, srv, x)
			out.Searches = append(out.Searches, Search{Name: x.Name, Test: test, Traffic: x.Traffic, RateRange: [2]float64{x.RateLo, x.RateHi},
				Precision: x.Precision, MaxProbes: plan.MaxRateProbes(x), MaxWindows: plan.MaxRateWindows(x), CheckWindows: x.CheckWindows,
				Estimated: seconds(e.Expected), EstimatedLow: seconds(e.Low), EstimatedHigh: seconds(e.High), Windows: e.Windows})
			continue
		}
		out.Searches = append(out.Searches, Search{Name: x.Name, Test: test,
			Context: x.Context, Range: [2]int{x.Lo, x.Hi}, MaxProbes: plan.MaxProbes(x.Lo, x.Hi)})
	}
	for _, e := range p.Expects {
		out.Assertions = append(out.Assertions, Assertion{
			Name: e.Name, Kind: "expect", Test: vocab.TestID{Server: srv.Name, Kind: vocab.KindExpect, Block: e.Name}.Name(), Cells: nonNil(plan.ExpectCells(sp, e)),
		})
	}
	return out
}

// nonNil is c, or an empty list: JSON shows [] rather than null.
func nonNil(c []vocab.CellRef) []vocab.CellRef {
	if c == nil {
		return []vocab.CellRef{}
	}
	return c
}

// WriteText prints the plan for a person, one paragraph per server.
func (d Document) WriteText(w io.Writer) {
	for i, s := range d.Servers {
		if i > 0 {
			fmt.Fprintln(w)
		}
		s.writeText(w)
	}
}

// writeText prints one server's plan.
func (s Server) writeText(w io.Writer) {
	fmt.Fprintf(w, "server %s (%s)\n", s.Name, s.Spec)
	fmt.Fprintf(w, "  launch: %s\n", s.Command)
	for _, n := range s.LaunchNotes {
		fmt.Fprintf(w, "          %s\n", n)
	}
	if len(s.Env) > 0 {
		fmt.Fprintf(w, "  env:   ")
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			fmt.Fprintf(w, " %s", shellcmd.Quote(k+"="+s.Env[k]))
		}
		fmt.Fprintln(w)
	}
	est := time.Duration(s.Estimated) * time.Second
	fmt.Fprintf(w, "  cells: %d, in order:\n", len(s.Cells))
	for _, c := range s.Cells {
		switch c.Status {
		case vocab.StatusOverCapacity:
			fmt.Fprintf(w, "    %s  over capacity, will not run: %s\n", c.TestName(s.Name), c.Reason)
		case vocab.StatusQueued:
			fmt.Fprintf(w, "    %s  will queue: %s\n", c.TestName(s.Name), c.Reason)
		default:
			fmt.Fprintf(w, "    %s\n", c.TestName(s.Name))
		}
	}
	for _, x := range s.Searches {
		if x.Traffic != "" {
			check := ""
			if x.CheckWindows > 0 {
				check = fmt.Sprintf(", then %d check windows at the answer", x.CheckWindows)
			}
			fmt.Fprintf(w, "  search: %s/rate=R  traffic %s, rate in [%s, %s] req/s to %s, at most %d probes of at most %d windows%s\n",
				x.Test, x.Traffic, vocab.FormatRate(x.RateRange[0]), vocab.FormatRate(x.RateRange[1]), numfmt.Percent(x.Precision), x.MaxProbes, x.MaxWindows, check)
			fmt.Fprintf(w, "          about %s measuring (%d windows), %s to %s (%d to %d windows: the range's bottom failing the objective in two, to every probe at max_windows past the capacity)\n",
				time.Duration(x.Estimated)*time.Second, x.Windows[1], time.Duration(x.EstimatedLow)*time.Second, time.Duration(x.EstimatedHigh)*time.Second, x.Windows[0], x.Windows[2])
			continue
		}
		fmt.Fprintf(w, "  search: %s/conc=N  ctx=%s, concurrency in [%d, %d], at most %d probes\n", x.Test, vocab.FormatTokens(x.Context), x.Range[0], x.Range[1], x.MaxProbes)
	}
	if len(s.Assertions) > 0 {
		fmt.Fprintln(w, "  assertions:")
		for _, a := range s.Assertions {
			var needs []string
			if len(a.Searches) > 0 {
				needs = append(needs, "search "+strings.Join(a.Searches, ", search "))
			}
			if len(a.Correctness) > 0 {
				needs = append(needs, "correctness "+strings.Join(a.Correctness, ", correctness "))
			}
			if len(a.Cells) > 0 || len(needs) == 0 {
				needs = append(needs, cellSummary(a.Cells))
			}
			fmt.Fprintf(w, "    %s  needs %s\n", a.Test, strings.Join(needs, ", "))
		}
	}
	if len(s.Correctness) > 0 {
		fmt.Fprintln(w, "  correctness: after the cells, outside every timed window (not in the estimate)")
		for _, c := range s.Correctness {
			scorer := ""
			if c.Scorer != "" {
				scorer = ", scored " + c.Scorer
			}
			fmt.Fprintf(w, "    %s  %d prompts of %s (%s API), %d tokens each, %d at a time, top-%d logprobs%s\n",
				c.Test, c.Prompts, c.Dataset, c.API, c.MaxOutput, c.Concurrency, c.Logprobs, scorer)
		}
	}
	fmt.Fprintf(w, "  repeats: %s\n", s.Repeats)
	if s.Device == engine.DeviceCPU {
		span := est.String()
		if s.Repeats.Auto {
			span += " to " + (time.Duration(s.EstimatedMax) * time.Second).String()
		}
		fmt.Fprintf(w, "  estimated: %s (measurements only; server start-up not included)\n", span)
		fmt.Fprintf(w, "  GPU time: none, a CPU build (device = \"cpu\"): the cost is %s of server time\n", span)
		return
	}
	if s.Repeats.Auto {
		fmt.Fprintf(w, "  estimated: %s at the minimum, %s at max_repeat (measurements only; server start-up not included)\n",
			est, time.Duration(s.EstimatedMax)*time.Second)
		fmt.Fprintf(w, "  GPU time: %.3f to %.3f GPU-hours (× %d GPU)%s\n", s.GPUHours, s.GPUHoursMax, s.GPUs,
			s.cpuNote(est.String()+" to "+(time.Duration(s.EstimatedMax)*time.Second).String()))
		return
	}
	fmt.Fprintf(w, "  estimated: %s (measurements only; server start-up not included)\n", est)
	fmt.Fprintf(w, "  GPU time: %.3f GPU-hours (× %d GPU)%s\n", s.GPUHours, s.GPUs, s.cpuNote(est.String()))
}

// cpuNote follows the GPU time of an engine with CPU builds: on a CPU the
// server uses no GPU and costs the estimated server time, est, only (which
// max_gpu_time then counts).
func (s Server) cpuNote(est string) string {
	if !s.CPUBuilds {
		return ""
	}
	return "; none on a CPU build (no GPU found at run time): then the cost is " + est + " of server time"
}

// cellSummary names up to four cells, else counts them.
func cellSummary(cells []vocab.CellRef) string {
	switch {
	case len(cells) == 0:
		return "no cells (reads the server only)"
	case len(cells) <= 4:
		names := make([]string, len(cells))
		for i, c := range cells {
			names[i] = c.Name()
		}
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%d cells (%s … %s)", len(cells), cells[0].Name(), cells[len(cells)-1].Name())
}

// MatrixEntry is one element of `slogate plan -format matrix`: one server of
// one spec, a job of a CI matrix (docs/ci.md#fan-out-over-a-fleet).
type MatrixEntry struct {
	Spec   string `json:"spec"`
	Server string `json:"server"`
	// Job names the CI job: <spec>/<server> ("qwen3.5-4b-h200-dflash/qwen"),
	// so that specs may share server names; <spec> is vocab.SpecNames of
	// the matrix's specs (the base name, with the folders that tell two
	// specs of one file name apart: "sglang/ling-3.0-flash-int4-h200x2/ling").
	Job string `json:"job"`
	// Dir is the run's name in a merge of the matrix (vocab.RunNames):
	// the server, or <spec>/<server> when another spec of the matrix has a
	// server of the same name. Its results folder, `-out out/<dir>`, and
	// its baseline, MERGED/<dir>/results.json, are named by it.
	Dir       string `json:"dir"`
	Estimated int64  `json:"estimated_s"`
	// GPUs is plan.GPUs: tp × pp × dp, or labels.gpu_count when larger.
	GPUs int `json:"gpus"`
}

// Matrix is the CI matrix of specs: one entry per server of each spec. Two
// entries with the same job name (the same server of one spec given twice)
// are an error: their runs could not be told apart.
func Matrix(specs []*spec.Spec, keep *regexp.Regexp) ([]MatrixEntry, error) {
	entries := []MatrixEntry{}
	var keys []vocab.RunKey
	paths := make([]string, len(specs))
	for i, sp := range specs {
		paths[i] = sp.Filename
	}
	specNames := vocab.SpecNames(paths)
	seen := map[string]string{} // job → spec
	for i, sp := range specs {
		for _, srv := range sp.Servers {
			job := specNames[i] + "/" + srv.Name
			if prev, dup := seen[job]; dup {
				return nil, fmt.Errorf("%s and %s both have server %q: their matrix jobs would both be %s; give each spec once", prev, sp.Filename, srv.Name, job)
			}
			seen[job] = sp.Filename
			keys = append(keys, vocab.RunKey{Spec: sp.Filename, Server: srv.Name})
			entries = append(entries, MatrixEntry{
				Spec:      sp.Filename,
				Server:    srv.Name,
				Job:       job,
				Estimated: int64(math.Round(plan.New(sp, srv, keep).Estimated.Seconds())),
				GPUs:      plan.GPUs(srv),
			})
		}
	}
	for i, name := range vocab.RunNames(keys) {
		entries[i].Dir = name
	}
	return entries, nil
}

// Render is the plan of specs as `slogate plan -format` prints it: "text",
// "json" (indented), or "matrix" (compact JSON on one line, so that a CI
// step can put it in an output variable as is). Its only error is Matrix's.
func Render(format string, specs []*spec.Spec, keep *regexp.Regexp) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	var err error
	switch format {
	case "matrix":
		var entries []MatrixEntry
		if entries, err = Matrix(specs, keep); err == nil {
			err = enc.Encode(entries)
		}
	case "json":
		enc.SetIndent("", "  ")
		err = enc.Encode(New(specs, keep))
	default:
		New(specs, keep).WriteText(&b)
	}
	return b.Bytes(), err
}

// seconds is d in whole seconds, rounded.
func seconds(d time.Duration) int64 { return int64(math.Round(d.Seconds())) }
