package report

import (
	"encoding/json"
	"fmt"
	"math"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/shellcmd"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
	"github.com/slogate/slogate/internal/workload"
)

// view.go builds the presentation model the Markdown and HTML reports share;
// metric.go formats the numbers in it.

// statusWord is a cell status as the seeds word it.
func statusWord(s vocab.Status) string {
	switch s {
	case vocab.StatusValid:
		return "Valid"
	case vocab.StatusQueued:
		return "Requests queued"
	case vocab.StatusOverCapacity:
		return "Over capacity"
	case vocab.StatusError:
		return "Error"
	case vocab.StatusUnmeasurable:
		return "Unmeasurable"
	}
	if s == "" {
		return "Not measured"
	}
	return string(s)
}

// outcomeWord is a verdict outcome as go test prints it.
func outcomeWord(o vocab.Outcome) string { return strings.ToUpper(o.String()) }

// Legend lines, worded as in the seed reports.
const (
	legendQueued       = "Requests queued: the server could not run all requests at once, so some waited in a queue."
	legendRefused      = "Some it refused instead: see Rejected requests."
	legendOverCapacity = "Over capacity: not run because this many requests at this context would exceed the server's KV cache."
	legendError        = "Error: the cell could not be measured; the reason is listed under Errors."
	legendUnmeasurable = "Unmeasurable: the client could not measure the cell (docs/method.md#unmeasurable); the reason is listed under Unmeasurable, and it is never gated."
	legendTTFT         = "TTFT is measured after the benchmark warms the server's prompt cache, so it mostly excludes prefill."
	legendMedians      = "Latencies are medians. Total tok/s is output across all simultaneous requests."
	legendMatrix       = "total tok/s · rows are context length, columns are simultaneous requests"
)

// view is the presentation model shared by the Markdown and HTML reports:
// every string the reports show, computed once from Results.
type view struct {
	Res      *result.Results
	Title    string // "Qwen3.5-4B on H200 NVL 141GB"
	Summary  string // "vllm · 0.26.1… · BF16 · 6 contexts (8K–251K) × …"
	Measured string // "Measured Sep 3, 2026, 17:22 UTC"
	Hardware []kv
	Engine   []kv
	Run      []kv
	Launch   string
	Prefill  []prefillRow
	Matrices []matrixView
	All      [][]string // All measurements rows (without header)
	// Legend flags: which statuses occur anywhere.
	AnyQueued, AnyOver, AnyError bool
	Errors                       []string // "decode ctx=8K conc=64: reason"
	// Unmeasurable are the cells the client could not measure, as Errors
	// ("decode ctx=1K conc=1: reason"; docs/method.md#unmeasurable).
	Unmeasurable []string
	Verdicts     []verdictRow
	Warnings     []string
	cellWarnings []cellWarning // the cells' warnings, grouped into Warnings
	Outcome      string        // PASS / FAIL / ERROR / SKIP
	// Head is what the reports open with: the tests by outcome and what
	// failed and why (outcome.go).
	Head verdictHead
	// Noise is the Noise section (docs/method.md#noise); nil when no cell
	// was repeated.
	Noise *noiseView
	// Traffic are the traffic blocks' tables; blocks the blocks in
	// words, which report.html's charts draw.
	Traffic []trafficTable
	blocks  []trafficBlock
	// searches are the searches' sections, each with its chart drawn.
	searches []searchView
	// Correctness are the correctness blocks' sections.
	Correctness []correctnessView
	// Latency is the Latency statistics table (no rows without the
	// statistics).
	Latency latencyTable
	// Comparison is the -baseline comparison's table; nil without a
	// baseline.
	Comparison *comparisonTable
	// Rejections are the Rejected requests section's lines
	// (rejectionLines), RejectionsLegend its heading text.
	Rejections       []string
	RejectionsLegend string
	// hardware is the run's hardware as the title names it
	// (runHardwareTitle); cellLines each prefill, decode and traffic
	// cell of Res in one line, as JUnit's output shows it (junitLines).
	hardware  string
	cellLines cellLines
}

// noiseView is the Noise section: the table of noiseTable.
type noiseView struct {
	Header []string
	Rows   [][]string
	Note   string
}

type kv struct{ Key, Value string }

type prefillRow struct {
	Context, TPS, TTFT, Status string
}

// matrixView is one decode matrix: rows are contexts, columns concurrency.
type matrixView struct {
	Label       string // "decode"
	Title       string // "Sustained decode"
	Contexts    []int
	Concurrency []int
	Cells       [][]*result.DecodeCell // [row][col]; nil when not recorded
	// Rows are the rows in words, built once for every rendering of the
	// matrix: the Markdown and HTML tables, the heat map and the chart.
	Rows []matrixRow
}

// matrixRow is one row of a decode matrix in words.
type matrixRow struct {
	Context string // "8K"
	Cells   []cellWords
}

// cellWords is a decode matrix cell in words (cellParts): its total
// tok/s, whether its requests queued and its TTFT, or the word that
// stands for it; Line is all of it on one line, Class its HTML class and
// Status its status as the tables word it ("" for a cell not recorded).
type cellWords struct {
	TPS, TTFT, Word, Line, Class, Status string
	Queued                               bool
}

// wordsOf is c in words.
func wordsOf(c *result.DecodeCell) cellWords {
	tps, queued, ttft, word := cellParts(c)
	w := cellWords{TPS: tps, Queued: queued, TTFT: ttft, Word: word, Class: "none"}
	if c != nil {
		w.Class, w.Status = string(c.Status), statusWord(c.Status)
	}
	switch {
	case word != "":
		w.Line = word
	case queued:
		w.Line = tps + " · Requests queued · " + ttft
	default:
		w.Line = tps + " · " + ttft
	}
	return w
}

type verdictRow struct {
	Test, Outcome, Rule, Measured, Message, Where string
}

// AnyCells reports whether a view has any decode cells.
func (v *view) AnyCells() bool { return len(v.Matrices) > 0 }

// shortModel is the model's last path element, as the seed titles show it.
func shortModel(m string) string {
	if m == "" {
		return "unknown model"
	}
	return path.Base(strings.TrimRight(m, "/"))
}

// gpuFacts gathers the GPU description from nvidia-smi (Server.GPUs), else
// from the spec's labels (gpu, gpu_memory_gb, gpu_count).
type gpuFacts struct {
	Name     string // "H200 NVL"
	MemoryGB int    // per device; 0 when unknown
	Count    int
}

func gpus(s *result.Server) (gpuFacts, bool) {
	if len(s.GPUs) > 0 {
		g := gpuFacts{Name: strings.TrimPrefix(s.GPUs[0].Name, "NVIDIA "), Count: len(s.GPUs)}
		g.MemoryGB = int(math.Round(float64(s.GPUs[0].MemoryMiB) / 1024))
		return g, true
	}
	name := s.Labels["gpu"]
	if name == "" {
		return gpuFacts{}, false
	}
	g := gpuFacts{Name: name, Count: 1}
	if n, err := strconv.Atoi(s.Labels["gpu_count"]); err == nil && n > 0 {
		g.Count = n
	}
	if n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(s.Labels["gpu_memory_gb"]), "GB")); err == nil && n > 0 {
		g.MemoryGB = n
	}
	return g, true
}

// hardwareTitle is "H200 NVL 141GB ×2", "simulator" or "unknown GPU". A
// simulated run that names hardware (a seed spec's gpu label) says so,
// "H200 (simulated)", so that no title, summary or JUnit property passes a
// simulator's numbers off as that hardware's.
func hardwareTitle(s *result.Server) string {
	g, ok := gpus(s)
	if !ok {
		if s.Simulated {
			return "simulator"
		}
		return "unknown GPU"
	}
	t := g.Name
	if g.MemoryGB > 0 {
		t += fmt.Sprintf(" %dGB", g.MemoryGB)
	}
	if g.Count > 1 {
		t += fmt.Sprintf(" ×%d", g.Count)
	}
	if s.Simulated && !strings.Contains(strings.ToLower(g.Name), "simulat") {
		t += " (simulated)" // once: a label that says so already is not repeated
	}
	return t
}

// cpuRun says the run's server ran without GPUs (result.GPUTime.CPU: an
// engine with CPU builds where no GPU was found), so that the report
// calls it a CPU server, not an unknown GPU (docs/method.md#gpu-time).
func cpuRun(res *result.Results) bool {
	return res.GPUTime != nil && res.GPUTime.CPU && len(res.Server.GPUs) == 0
}

// runHardwareTitle is hardwareTitle, or "CPU (no GPU)" for a CPU server
// whose spec names no GPU.
func runHardwareTitle(res *result.Results) string {
	if _, ok := gpus(&res.Server); !ok && cpuRun(res) {
		return "CPU (no GPU)"
	}
	return hardwareTitle(&res.Server)
}

// uniqueInts returns the distinct values in first-seen order.
func uniqueInts(xs []int) []int {
	seen := map[int]bool{}
	var out []int
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// redactArgv hides the value after --api-key even if a caller forgot to
// redact it before saving (defence in depth: reports get shared widely).
func redactArgv(argv []string) []string {
	out := append([]string(nil), argv...)
	for i := 0; i < len(out); i++ {
		switch {
		case out[i] == "--api-key" && i+1 < len(out):
			out[i+1] = shellcmd.Redacted
			i++
		case strings.HasPrefix(out[i], "--api-key="):
			out[i] = "--api-key=" + shellcmd.Redacted
		}
	}
	return out
}

// newView computes everything the Markdown and HTML reports, the CI
// summary and the rate searches' chart files show, section by section in
// the order they appear, so that their writers only lay it out.
func newView(res *result.Results) *view {
	s := &res.Server
	hardware := runHardwareTitle(res)
	v := &view{
		Res:      res,
		hardware: hardware,
		Title:    shortModel(s.Model) + " on " + hardware,
		Summary:  summaryLine(res),
		Measured: measuredLine(res),
		Hardware: hardwareFacts(s, cpuRun(res)),
		Engine:   engineFacts(s),
		Run:      runFacts(res),
		Launch:   launchCommand(s),
		Outcome:  outcomeWord(runOutcome(res)),
	}
	v.addPrefill(res.Prefill)
	v.addMatrices(res)
	for i := range res.Traffic { // a dataset's counts, its reuse in order, …
		c := &res.Traffic[i]
		if c.Status == vocab.StatusUnmeasurable { // the client fell behind
			v.Unmeasurable = append(v.Unmeasurable, c.Ref().Name()+": "+c.Reason)
		}
		for _, w := range c.Warnings {
			v.cellWarnings = append(v.cellWarnings, cellWarning{c.Ref().Name(), w.String()})
		}
	}
	v.All = allMeasurements(res.Prefill, v.Prefill, v.Matrices)
	if v.Rejections = rejectionLines(res); len(v.Rejections) > 0 {
		v.RejectionsLegend = legendRejections
	}
	v.addVerdicts(res.Verdicts)
	v.Head = newVerdictHead(res, v)
	v.Warnings = runWarnings(res, groupCellWarnings(v.cellWarnings))
	v.Noise = noiseSection(res)
	v.blocks = newTrafficBlocks(res)
	v.cellLines = junitLines(res, v)
	v.Traffic = trafficTables(v.blocks)
	v.searches = newSearchViews(res)
	v.Correctness = newCorrectnessViews(res)
	v.Latency = newLatencyTable(res)
	v.Comparison = newComparisonTable(res.Comparison)
	return v
}

// engineName is the run's engine: the server block's ("sglang"), else the
// engine label of results that predate the field, else "vllm".
func engineName(s *result.Server) string {
	if s.Engine != "" {
		return s.Engine
	}
	return labelOr(s, "engine", "vllm")
}

// engineHeader is the run's engine and version as every report heads it
// (report.md, report.html, the CI summary and each run of a merged
// report): "sglang · 0.5.5", or the engine alone when the server stated
// no version.
func engineHeader(s *result.Server) string {
	if s.Version == "" {
		return engineName(s)
	}
	return engineName(s) + " · " + s.Version
}

// summaryLine is the line under the title: engine · version · quantization
// · matrix shape · prefill contexts.
func summaryLine(res *result.Results) string {
	s := &res.Server
	var sum []string
	sum = append(sum, engineHeader(s))
	if q := s.Labels["quantization"]; q != "" {
		sum = append(sum, q)
	}
	var ctxs, concs []int
	for _, c := range res.Decode {
		ctxs = append(ctxs, c.Context)
		concs = append(concs, c.Concurrency)
	}
	ctxs, concs = uniqueInts(ctxs), uniqueInts(concs)
	if len(ctxs) > 0 {
		sort.Ints(concs)
		sum = append(sum, fmt.Sprintf("%d %s (%s) × %d concurrency %s (%s)",
			len(ctxs), plural(len(ctxs), "context", "contexts"), span(ctxs, vocab.FormatTokens),
			len(concs), plural(len(concs), "level", "levels"), span(concs, strconv.Itoa)))
	}
	if len(res.Prefill) > 0 {
		var pc []int
		for _, c := range res.Prefill {
			pc = append(pc, c.Context)
		}
		sum = append(sum, "prefill at "+numfmt.List(uniqueInts(pc), vocab.FormatTokens))
	}
	return strings.Join(sum, " · ")
}

// measuredLine is "Measured Sep 3, 2026, 17:22 UTC"; "" when the start is
// unknown.
func measuredLine(res *result.Results) string {
	if res.Started.IsZero() {
		return ""
	}
	return "Measured " + res.Started.UTC().Format("Jan 2, 2006, 15:04 UTC")
}

// hardwareFacts is the Hardware table: the GPUs (nvidia-smi, else the
// spec's labels), or what stands in for them (cpu: a CPU server), and the
// OS.
func hardwareFacts(s *result.Server, cpu bool) []kv {
	var facts []kv
	if g, ok := gpus(s); ok {
		typ := "Discrete GPU"
		if s.Simulated {
			typ = "Simulated by slogate sim (no GPU)"
		}
		facts = append(facts, kv{"Type", labelOr(s, "gpu_type", typ)}, kv{"GPU", g.Name})
		if g.Count > 1 {
			facts = append(facts, kv{"GPU count", strconv.Itoa(g.Count)})
		}
		if g.MemoryGB > 0 {
			vram := fmt.Sprintf("%d GB", g.MemoryGB)
			if g.Count > 1 {
				vram = fmt.Sprintf("%d GB (%d × %d GB)", g.MemoryGB*g.Count, g.Count, g.MemoryGB)
			}
			facts = append(facts, kv{"VRAM", vram})
		}
	} else if s.Simulated {
		facts = append(facts, kv{"Type", "slogate simulator (no GPU)"})
	} else if cpu && s.Device == engine.DeviceCPU {
		facts = append(facts, kv{"Type", "CPU build (device = \"cpu\"), so its cost is server time, not GPU time (docs/method.md#gpu-time)"})
	} else if cpu {
		facts = append(facts, kv{"Type", "CPU server: no GPU found (nvidia-smi), so its cost is server time, not GPU time (docs/method.md#gpu-time)"})
	} else {
		facts = append(facts, kv{"Type", "unknown (nvidia-smi not found; set labels.gpu in the spec)"})
	}
	return appendLabel(facts, s, "OS", "os")
}

// engineFacts is the Engine table: the engine and its build from the
// labels, then the settings the server reports (engineSettings).
func engineFacts(s *result.Server) []kv {
	facts := []kv{{"Engine", engineName(s)}}
	if s.Version != "" {
		facts = append(facts, kv{"Version", s.Version})
	}
	facts = appendLabel(facts, s, "Quantization", "quantization")
	facts = appendLabel(facts, s, "Backend", "backend")
	facts = appendLabel(facts, s, "Repository", "repository")
	facts = appendLabel(facts, s, "Build", "build")
	facts = appendLabel(facts, s, "Commit", "commit")
	if s.TensorParallelSize > 0 {
		facts = append(facts, kv{"Tensor parallel size", strconv.Itoa(s.TensorParallelSize)})
	}
	return append(facts, engineSettings(s)...)
}

// engineSettings are the server settings the Engine table shows, each as
// the server stated it beside what the spec asked (statedFact), and the KV
// capacity with its source.
func engineSettings(s *result.Server) []kv {
	var facts []kv
	if s.Speculative != "" {
		asked := ""
		if s.Asked != nil && s.Asked.Speculative != "on" { // "on": a block naming no method
			asked = s.Asked.Speculative
		}
		facts = append(facts, kv{"Speculative decoding", statedFact(s, "speculative", s.Speculative, asked)})
	}
	if s.KVCacheDtype != "" {
		facts = append(facts, kv{"KV cache dtype", statedFact(s, "kv_cache_dtype", s.KVCacheDtype, askedDtype(s))})
	}
	if s.PrefixCaching != nil {
		asked := ""
		if s.Asked != nil && s.Asked.PrefixCaching != nil {
			asked = onOff(*s.Asked.PrefixCaching)
		}
		facts = append(facts, kv{"Prefix caching", statedFact(s, "enable_prefix_caching", onOff(*s.PrefixCaching), asked)})
	}
	if s.KVCacheTokens > 0 {
		kvText := numfmt.Int(s.KVCacheTokens) + " tokens"
		if s.KVCacheSource != "" {
			kvText += " (from " + s.KVCacheSource + ")"
		}
		facts = append(facts, kv{"KV cache", kvText})
	}
	return facts
}

// runFacts is the Run table: what was served, by which tool, and how the
// cells were measured.
func runFacts(res *result.Results) []kv {
	s := &res.Server
	served := s.ServedModel
	if served == "" {
		served = s.Model
	}
	facts := []kv{{"Served model", served}}
	facts = appendLabel(facts, s, "Revision", "revision")
	tool := "slogate"
	if res.Tool != "" {
		tool += " " + res.Tool
	}
	facts = append(facts, kv{"Benchmark tool", tool})
	// The decode and prefill rows say how those cells were measured: a
	// run of traffic cells alone has none, and its named workloads' cells
	// send their own prompts (their sections say which).
	decode := len(res.Decode) > 0 || slices.ContainsFunc(res.Search, func(s result.Search) bool { return !s.IsRate() })
	if decode {
		facts = append(facts, kv{"Decode test", "Fixed duration"})
	}
	if decode || len(res.Prefill) > 0 {
		facts = append(facts, kv{"Prefill mode", "Measured during decode warm-up"})
	}
	facts = append(facts, measureFacts(res)...)
	if g := res.GPUTime; g != nil {
		facts = append(facts, kv{"GPU time", GPUTimeText(g)})
	}
	if s.Endpoint != "" {
		facts = append(facts, kv{"Endpoint", s.Endpoint})
	}
	if res.Workload != nil && sendsMeasureWorkload(res) {
		facts = append(facts, kv{"Workload", workloadText(res.Workload)})
	}
	return facts
}

// sendsMeasureWorkload reports whether some cell of res sent the prompts
// of the spec's workload block (res.Workload): a decode, prefill or
// search cell, or a traffic cell without a named workload.
func sendsMeasureWorkload(res *result.Results) bool {
	if len(res.Decode) > 0 || len(res.Prefill) > 0 || len(res.Search) > 0 {
		return true
	}
	for _, c := range res.Traffic {
		if c.Workload == "" {
			return true
		}
	}
	return false
}

// measureFacts are the Run table's rows of the measure block: the window,
// the output cap, the repeats and the boots.
func measureFacts(res *result.Results) []kv {
	var facts []kv
	m := res.Measure
	if m.DurationS > 0 {
		facts = append(facts, kv{"Time per measurement", numfmt.Shortest(m.DurationS) + " s"})
	}
	if m.MaxOutput > 0 {
		facts = append(facts, kv{"Max output", numfmt.Int(int64(m.MaxOutput)) + " tokens"})
	}
	switch {
	case m.RepeatAuto:
		facts = append(facts, kv{"Repeats per cell", fmt.Sprintf("auto, %d to %d (medians shown; %s)", m.Repeat, m.MaxRepeat, repeatsTaken(res))})
	case m.Repeat > 1:
		facts = append(facts, kv{"Repeats per cell", strconv.Itoa(m.Repeat) + " (medians shown)"})
	}
	if m.Boots > 1 {
		facts = append(facts, kv{"Server boots", strconv.Itoa(m.Boots) + " (repeats split over them)"})
	}
	return facts
}

// launchCommand is the server's command line as a shell would take it,
// with the API key hidden; "" when slogate did not launch it.
func launchCommand(s *result.Server) string {
	if len(s.Argv) == 0 {
		return ""
	}
	return shellcmd.Line(s.Env, redactArgv(s.Argv))
}

// addPrefill fills the Prefill table and notes each cell's status.
func (v *view) addPrefill(cells []result.PrefillCell) {
	for _, c := range cells {
		r := prefillRow{Context: vocab.FormatTokens(c.Context), TPS: dash, TTFT: dash, Status: statusWord(c.Status)}
		if c.Status.Measured() {
			r.TPS, r.TTFT = prefillTPSText(c.TPS, 0), prefillTTFTText(&c)
		}
		v.Prefill = append(v.Prefill, r)
		v.noteStatus(c.Status, "prefill ctx="+r.Context, c.Reason)
	}
}

// addMatrices lays out the decode matrices, in order of first appearance,
// and notes each recorded cell's status and warnings, row by row.
func (v *view) addMatrices(res *result.Results) {
	v.Matrices = decodeMatrices(res)
	for _, m := range v.Matrices {
		for i, row := range m.Cells {
			for j, c := range row {
				if c == nil {
					continue
				}
				v.noteStatus(c.Status, fmt.Sprintf("%s ctx=%s conc=%d", m.Label, m.Rows[i].Context, m.Concurrency[j]), c.Reason)
				for _, w := range c.Warnings {
					v.cellWarnings = append(v.cellWarnings, cellWarning{c.Ref().Name(), w.String()})
				}
			}
		}
	}
}

// decodeMatrices groups the decode cells by matrix, in order of first
// appearance: rows are the contexts in order of first appearance, columns
// the concurrency levels in increasing order.
func decodeMatrices(res *result.Results) []matrixView {
	var labels []string
	byLabel := map[string][]*result.DecodeCell{}
	for i := range res.Decode {
		c := &res.Decode[i]
		l := c.Ref().MatrixLabel()
		if _, ok := byLabel[l]; !ok {
			labels = append(labels, l)
		}
		byLabel[l] = append(byLabel[l], c)
	}
	var out []matrixView
	for _, l := range labels {
		m := matrixView{Label: l, Title: "Sustained decode"}
		if l != "decode" {
			m.Title += " — " + l
		}
		var cx, cc []int
		for _, c := range byLabel[l] {
			cx, cc = append(cx, c.Context), append(cc, c.Concurrency)
		}
		m.Contexts, m.Concurrency = uniqueInts(cx), uniqueInts(cc)
		sort.Ints(m.Concurrency)
		m.Cells = make([][]*result.DecodeCell, len(m.Contexts))
		m.Rows = make([]matrixRow, len(m.Contexts))
		for i, ctx := range m.Contexts {
			m.Cells[i] = make([]*result.DecodeCell, len(m.Concurrency))
			m.Rows[i] = matrixRow{Context: vocab.FormatTokens(ctx), Cells: make([]cellWords, len(m.Concurrency))}
			for j, conc := range m.Concurrency {
				if c, ok := res.DecodeCell(l, ctx, conc); ok {
					m.Cells[i][j] = c
				}
				m.Rows[i].Cells[j] = wordsOf(m.Cells[i][j])
			}
		}
		out = append(out, m)
	}
	return out
}

// allMeasurements is the All measurements table's rows: the prefill cells,
// then every decode cell of every matrix with the metrics of allColumns
// (a dash for a cell not measured).
func allMeasurements(prefill []result.PrefillCell, rows []prefillRow, matrices []matrixView) [][]string {
	var all [][]string
	for i := range prefill {
		all = append(all, prefillAllRow(&prefill[i], rows[i]))
	}
	for _, m := range matrices {
		phase := "Sustained decode"
		if m.Label != "decode" {
			phase += " (" + m.Label + ")"
		}
		for i, row := range m.Cells {
			for j, c := range row {
				if c != nil {
					all = append(all, decodeAllRow(phase, m.Rows[i].Context, c, m.Rows[i].Cells[j].Status))
				}
			}
		}
	}
	return all
}

// decodeAllRow is one decode cell's row of All measurements (at context,
// in words; status, its status's word).
func decodeAllRow(phase, context string, c *result.DecodeCell, status string) []string {
	r := []string{phase, context, strconv.Itoa(c.Concurrency), status}
	for _, m := range allColumns() {
		if c.Status.Measured() {
			r = append(r, decodeText(c, m.Name))
		} else {
			r = append(r, dash)
		}
	}
	return r
}

// addVerdicts fills the Verdicts table.
func (v *view) addVerdicts(verdicts []result.Verdict) {
	for _, vd := range verdicts {
		row := verdictRow{Test: vd.Test, Outcome: outcomeWord(vd.Outcome), Rule: vd.Rule,
			Measured: strings.Join(vd.Details, "; "), Message: vd.Message}
		row.Where = vd.Where()
		v.Verdicts = append(v.Verdicts, row)
	}
}

// runOutcome is the outcome the report heads with: the worst verdict's,
// Error when the run ended early, and Pass when the worst was a Skip (a
// search probe that missed its objective, a correctness block with
// nothing to compare): such a run exits 0, as go test's package whose
// tests skipped is "ok", and the tally says what skipped.
func runOutcome(res *result.Results) vocab.Outcome {
	if res.Error != "" {
		return vocab.Error
	}
	if o := res.Outcome(); o != vocab.Skip {
		return o
	}
	return vocab.Pass
}

// cellWarning is one warning of one cell, the cell named as results.json
// names it ("traffic/chat/conc=4").
type cellWarning struct{ cell, text string }

// groupCellWarnings lists each warning once, in the order first seen,
// after the cells that carry it: "decode/ctx=8K/conc=1: text" for one
// cell, "traffic/chat/conc=4, traffic/chat/conc=8 (2 cells): text" for a
// warning several cells repeat word for word (a dataset's counts, which
// every cell of its block carried).
func groupCellWarnings(ws []cellWarning) []string {
	var order []string
	cells := map[string][]string{}
	for _, w := range ws {
		if _, seen := cells[w.text]; !seen {
			order = append(order, w.text)
		}
		if cs := cells[w.text]; len(cs) == 0 || cs[len(cs)-1] != w.cell {
			cells[w.text] = append(cs, w.cell)
		}
	}
	out := make([]string, 0, len(order))
	for _, text := range order {
		cs := cells[text]
		if len(cs) == 1 {
			out = append(out, cs[0]+": "+text)
			continue
		}
		out = append(out, fmt.Sprintf("%s (%d cells): %s", strings.Join(cs, ", "), len(cs), text))
	}
	return out
}

// runWarnings is the Warnings list: why the run ended early or was
// interrupted first, then the cells' warnings, then the run's.
func runWarnings(res *result.Results, cells []string) []string {
	w := cells
	// An interrupted run records why in Error too: said once.
	if res.Interrupted {
		w = append([]string{"The run was interrupted; cells not reached are missing."}, w...)
	} else if res.Error != "" {
		w = append([]string{"The run ended early: " + res.Error}, w...)
	}
	return append(w, warning.Strings(res.Warnings)...)
}

// noiseSection is the Noise section; nil when no cell was repeated.
func noiseSection(res *result.Results) *noiseView {
	rows := Noise(res, NoiseOptions{})
	if !repeated(rows) {
		return nil
	}
	head, body, note := noiseTable(rows, NoiseOptions{})
	return &noiseView{Header: head, Rows: body, Note: note}
}

func (v *view) noteStatus(s vocab.Status, where, reason string) {
	switch s {
	case vocab.StatusQueued:
		v.AnyQueued = true
	case vocab.StatusOverCapacity:
		v.AnyOver = true
	case vocab.StatusError:
		v.AnyError = true
		if reason == "" {
			reason = "no reason recorded"
		}
		v.Errors = append(v.Errors, where+": "+reason)
	case vocab.StatusUnmeasurable:
		v.Unmeasurable = append(v.Unmeasurable, where+": "+reason)
	}
}

// StatusLegend is the legend line for the statuses that occur, worded as
// the seeds word it (queued first, then over capacity).
func (v *view) StatusLegend() string {
	var parts []string
	if v.AnyQueued {
		parts = append(parts, legendQueued)
		if len(v.Rejections) > 0 {
			parts = append(parts, legendRefused)
		}
	}
	if v.AnyOver {
		parts = append(parts, legendOverCapacity)
	}
	if v.AnyError {
		parts = append(parts, legendError)
	}
	if len(v.Unmeasurable) > 0 {
		parts = append(parts, legendUnmeasurable)
	}
	return strings.Join(parts, " ")
}

// cellParts is a decode matrix cell as its pieces: total tok/s, whether the
// requests queued, and the TTFT ("6,018.4", false, "1,027 ms TTFT"); or a
// single word for cells without numbers ("Over capacity", "Error", "—").
func cellParts(c *result.DecodeCell) (tps string, queued bool, ttft string, word string) {
	switch {
	case c == nil:
		return "", false, "", dash
	case c.Status.Measured():
		return decodeText(c, metric.TotalTPS), c.Status == vocab.StatusQueued, decodeText(c, metric.TTFTMs) + " TTFT", ""
	default:
		return "", false, "", statusWord(c.Status)
	}
}

func labelOr(s *result.Server, key, def string) string {
	if v := s.Labels[key]; v != "" {
		return v
	}
	return def
}

func appendLabel(list []kv, s *result.Server, name, key string) []kv {
	if v := s.Labels[key]; v != "" {
		return append(list, kv{name, v})
	}
	return list
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func span(xs []int, f func(int) string) string {
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	if lo == hi {
		return f(lo)
	}
	return f(lo) + "–" + f(hi)
}

// prefillAllRow is a prefill cell's row of All measurements: its
// throughput under the decode throughput column, its TTFT under TTFT, one
// completed request, a dash elsewhere; w is its row of the Prefill table,
// whose words it shares.
func prefillAllRow(c *result.PrefillCell, w prefillRow) []string {
	row := []string{"Prefill", w.Context, "1", w.Status}
	tps := metric.Must(vocab.PhasePrefill, metric.TPS)
	for _, m := range allColumns() {
		text := dash
		if c.Status.Measured() {
			switch m.Name {
			case metric.TotalTPS:
				text = prefillTPSText(c.TPS, tps.Precision)
			case metric.TTFTMs:
				text = w.TTFT
			case metric.Completed:
				text = "1"
			}
		}
		row = append(row, text)
	}
	return row
}

// repeated says whether any noise row has the repeats to measure noise.
func repeated(rows []NoiseRow) bool {
	for _, r := range rows {
		if r.Repeats >= 2 {
			return true
		}
	}
	return false
}

// GPUTimeText is a run's GPU time in words: "0.015 GPU-hours (53.8 s of
// server time × 1 GPU, 3 boots)"; for a CPU server "none: a CPU server, no
// GPU found (53.8 s of server time)".
func GPUTimeText(g *result.GPUTime) string {
	if g.CPU {
		why := "a CPU server, no GPU found"
		if g.CPUBuild {
			why = "a CPU build, device = \"cpu\""
		}
		s := fmt.Sprintf("none: %s (%s s of server time", why, numfmt.Fixed(g.ServerS, 1))
		if g.Boots > 1 {
			s += fmt.Sprintf(", %d boots", g.Boots)
		}
		return s + ")"
	}
	s := fmt.Sprintf("%.3f GPU-hours (%s s of server time × %d GPU", g.GPUHours(), numfmt.Fixed(g.ServerS, 1), g.GPUs)
	if g.Boots > 1 {
		s += fmt.Sprintf(", %d boots", g.Boots)
	}
	return s + ")"
}

// repeatsTaken says how many repeats repeat = "auto" took over the
// measured decode and prefill cells: "mean 4.5, 4 to 8".
func repeatsTaken(res *result.Results) string {
	var n, sum, lo, hi int
	count := func(k int) {
		k = max(k, 1)
		if n == 0 || k < lo {
			lo = k
		}
		hi = max(hi, k)
		n++
		sum += k
	}
	for _, c := range res.Prefill {
		if c.Status.Measured() {
			count(c.Repeats)
		}
	}
	for _, c := range res.Decode {
		if c.Status.Measured() {
			count(c.Repeats)
		}
	}
	if n == 0 {
		return "no cell measured"
	}
	return fmt.Sprintf("took %s a cell on average, %d to %d", numfmt.Fixed(float64(sum)/float64(n), 1), lo, hi)
}

// workloadText is the Run section's "Workload" line: what the requests
// sent (docs/method.md#workload), e.g. "article (built-in corpus), shared
// prompt, server-default sampling".
func workloadText(w *workload.Record) string {
	var parts []string
	switch w.Prompt {
	case workload.Random:
		seed := ""
		if w.RandomSeed != nil {
			seed = fmt.Sprintf(" (seed %d)", *w.RandomSeed)
		}
		parts = append(parts, "random token IDs"+seed)
	default:
		var src []string
		if w.BuiltInDocument() {
			src = append(src, "built-in corpus")
		} else {
			src = append(src, "own document, sha256 "+short(w.DocumentSHA256))
		}
		if !w.BuiltInInstruction() {
			src = append(src, "own instruction, sha256 "+short(w.InstructionSHA256))
		}
		parts = append(parts, w.Prompt+" ("+strings.Join(src, ", ")+")")
	}
	if w.Distinct {
		parts = append(parts, "distinct prompt per stream")
	} else {
		parts = append(parts, "shared prompt")
	}
	if len(w.Sampling) == 0 && len(w.LogitBias) == 0 {
		parts = append(parts, "server-default sampling")
	} else {
		keys := make([]string, 0, len(w.Sampling))
		for k := range w.Sampling {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var kv []string
		for _, k := range keys {
			kv = append(kv, k+" "+w.Sampling[k].String())
		}
		if len(w.LogitBias) > 0 {
			b, _ := json.Marshal(w.LogitBias)
			kv = append(kv, "logit_bias "+string(b))
		}
		parts = append(parts, "sampling "+strings.Join(kv, ", "))
	}
	if len(w.ChatTemplateKwargs) > 0 {
		b, _ := json.Marshal(w.ChatTemplateKwargs)
		parts = append(parts, "chat_template_kwargs "+string(b))
	}
	return strings.Join(parts, ", ")
}

// short is the first 12 hex digits of a digest.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// statedFact shows a server fact as the server stated it, noting where the
// spec asked otherwise ("auto (the spec asked fp8)"); a fact the server
// did not state is the spec's and says so ("fp8 (from the spec; the server
// did not say)").
func statedFact(s *result.Server, fact, value, asked string) string {
	switch _, ok := s.Stated[fact]; {
	case !ok:
		return value + notStated
	case asked == "" || asked == value:
		return value
	}
	return value + " (the spec asked " + asked + ")"
}

// notStated follows a fact shown as the spec gave it because the server
// did not state it.
const notStated = " (from the spec; the server did not say)"

func askedDtype(s *result.Server) string {
	if s.Asked == nil {
		return ""
	}
	return s.Asked.KVCacheDtype
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
