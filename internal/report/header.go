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
	"time"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/shellcmd"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/workload"
)

// header.go builds the head of the report: its title, the line under
// it, the Hardware, Engine and Run tables and the launch command.
// newHeader gathers their figures from the Results; header's methods word
// them when a writer asks.

// header is the head of a run's report as figures: the server and the
// run's settings as the Results hold them, and what newHeader read off
// the cells (the GPUs, the decode matrix's shape, the repeats taken, the
// window time saturation saved, whether the spec's workload was sent).
// Its methods word them: Title, Summary, Measured, Hardware, Engine, Run
// and Launch.
type header struct {
	server  *result.Server
	measure *result.Measure
	tool    string
	started time.Time
	gpuTime *result.GPUTime
	// gpu are the GPUs as nvidia-smi or the spec's labels describe them,
	// hasGPU false when neither does; cpu says the server ran without
	// GPUs (cpuRun).
	gpu    gpuFacts
	hasGPU bool
	cpu    bool
	// contexts are the decode cells' distinct contexts in first-seen
	// order, concurrencies their distinct concurrency levels ascending,
	// prefill the prefill cells' distinct contexts.
	contexts, concurrencies, prefill []int
	// decodeTest says the run has decode cells (a matrix's or a
	// concurrency search's) and prefillMode that it has those or prefill
	// cells: the Run table says how they were measured. A run of traffic
	// cells alone has neither, and its named workloads' cells send their
	// own prompts (their sections say which).
	decodeTest, prefillMode bool
	// repeats is how many repeats the measured decode and prefill cells
	// took (repeat = "auto").
	repeats repeatCount
	// savedS is the window time stopping saturated cells saved
	// (SaturationSavedS).
	savedS float64
	// workload is the spec's workload block when some cell sent its
	// prompts (sendsMeasureWorkload); nil otherwise.
	workload *workload.Record
}

// newHeader gathers the figures of res's head.
func newHeader(res *result.Results) header {
	h := header{server: &res.Server, measure: &res.Measure, tool: res.Tool, started: res.Started, gpuTime: res.GPUTime,
		cpu: cpuRun(res), repeats: repeatsTaken(res), savedS: SaturationSavedS(res)}
	h.gpu, h.hasGPU = gpus(&res.Server)
	var ctxs, concs, pc []int
	for _, c := range res.Decode {
		ctxs = append(ctxs, c.Context)
		concs = append(concs, c.Concurrency)
	}
	h.contexts, h.concurrencies = uniqueInts(ctxs), uniqueInts(concs)
	sort.Ints(h.concurrencies)
	for _, c := range res.Prefill {
		pc = append(pc, c.Context)
	}
	h.prefill = uniqueInts(pc)
	h.decodeTest = len(res.Decode) > 0 || slices.ContainsFunc(res.Search, func(s result.Search) bool { return !s.IsRate() })
	h.prefillMode = h.decodeTest || len(res.Prefill) > 0
	if res.Workload != nil && sendsMeasureWorkload(res) {
		h.workload = res.Workload
	}
	return h
}

// Title is the report's title: "Qwen3.5-4B on H200 NVL 141GB".
func (h header) Title() string { return shortModel(h.server.Model) + " on " + h.hardwareName() }

// hardwareName is the run's hardware as the title and JUnit's hardware
// property name it: hardwareTitle, or "CPU (no GPU)" for a CPU server
// whose spec names no GPU.
func (h header) hardwareName() string {
	if !h.hasGPU && h.cpu {
		return "CPU (no GPU)"
	}
	return hardwareTitle(h.gpu, h.hasGPU, h.server.Simulated)
}

// Summary is the line under the title: engine · version · quantization
// · matrix shape · prefill contexts ("vllm · 0.26.1 · BF16 · 6 contexts
// (8K–251K) × 5 concurrency levels (1–64) · prefill at 8K, 32K").
func (h header) Summary() string {
	sum := []string{engineHeader(h.server)}
	if q := h.server.Labels["quantization"]; q != "" {
		sum = append(sum, q)
	}
	if ctxs, concs := h.contexts, h.concurrencies; len(ctxs) > 0 {
		sum = append(sum, fmt.Sprintf("%d %s (%s) × %d concurrency %s (%s)",
			len(ctxs), plural(len(ctxs), "context", "contexts"), span(ctxs, vocab.FormatTokens),
			len(concs), plural(len(concs), "level", "levels"), span(concs, strconv.Itoa)))
	}
	if len(h.prefill) > 0 {
		sum = append(sum, "prefill at "+numfmt.List(h.prefill, vocab.FormatTokens))
	}
	return strings.Join(sum, " · ")
}

// Measured is "Measured Sep 3, 2026, 17:22 UTC"; "" when the start is
// unknown.
func (h header) Measured() string {
	if h.started.IsZero() {
		return ""
	}
	return "Measured " + h.started.UTC().Format("Jan 2, 2006, 15:04 UTC")
}

// Hardware is the Hardware table (hardwareFacts).
func (h header) Hardware() []kv { return hardwareFacts(h.server, h.gpu, h.hasGPU, h.cpu) }

// Engine is the Engine table (engineFacts).
func (h header) Engine() []kv { return engineFacts(h.server) }

// Launch is the server's command line (launchCommand); "" when slogate
// did not launch it.
func (h header) Launch() string { return launchCommand(h.server) }

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

// hardwareTitle is GPUs g (known: gpus found some) as the title names
// them: "H200 NVL 141GB ×2", "simulator" or "unknown GPU". A simulated
// run that names hardware (a seed spec's gpu label) says so, "H200
// (simulated)", so that no title, summary or JUnit property passes a
// simulator's numbers off as that hardware's.
func hardwareTitle(g gpuFacts, known, simulated bool) string {
	if !known {
		if simulated {
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
	if simulated && !strings.Contains(strings.ToLower(g.Name), "simulat") {
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

// hardwareFacts is the Hardware table: GPUs g (known: gpus found some),
// or what stands in for them (cpu: a CPU server), and the OS.
func hardwareFacts(s *result.Server, g gpuFacts, known, cpu bool) []kv {
	var facts []kv
	if known {
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

type kv struct{ Key, Value string }

// Run is the Run table: what was served, by which tool, how the cells
// were measured and what the run cost.
func (h header) Run() []kv {
	s := h.server
	served := s.ServedModel
	if served == "" {
		served = s.Model
	}
	facts := []kv{{"Served model", served}}
	facts = appendLabel(facts, s, "Revision", "revision")
	tool := "slogate"
	if h.tool != "" {
		tool += " " + h.tool
	}
	facts = append(facts, kv{"Benchmark tool", tool})
	if h.decodeTest {
		facts = append(facts, kv{"Decode test", "Fixed duration"})
	}
	if h.prefillMode {
		facts = append(facts, kv{"Prefill mode", "Measured during decode warm-up"})
	}
	facts = append(facts, h.measureFacts()...)
	if g := h.gpuTime; g != nil {
		facts = append(facts, kv{"GPU time", GPUTimeText(g)})
		if h.savedS > 0 {
			facts = append(facts, kv{"Saved by saturation", SaturationSavedText(h.savedS, g)})
		}
	}
	if s.Endpoint != "" {
		facts = append(facts, kv{"Endpoint", s.Endpoint})
	}
	if h.workload != nil {
		facts = append(facts, kv{"Workload", workloadText(h.workload)})
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
func (h header) measureFacts() []kv {
	var facts []kv
	m := h.measure
	if m.DurationS > 0 {
		facts = append(facts, kv{"Time per measurement", numfmt.Shortest(m.DurationS) + " s"})
	}
	if m.MaxOutput > 0 {
		facts = append(facts, kv{"Max output", numfmt.Int(int64(m.MaxOutput)) + " tokens"})
	}
	switch {
	case m.RepeatAuto:
		facts = append(facts, kv{"Repeats per cell", fmt.Sprintf("auto, %d to %d (medians shown; %s)", m.Repeat, m.MaxRepeat, h.repeats.String())})
	case m.Repeat > 1:
		facts = append(facts, kv{"Repeats per cell", strconv.Itoa(m.Repeat) + " (medians shown)"})
	}
	if m.Boots > 1 {
		facts = append(facts, kv{"Server boots", strconv.Itoa(m.Boots) + " (repeats split over them)"})
	}
	return facts
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

// SaturationSavedS is the window time the run's saturated traffic cells
// and rate probes did not run, in seconds: the sum of their reasons'
// saved_s (docs/method.md#saturation).
func SaturationSavedS(res *result.Results) float64 {
	saved := 0.0
	add := func(c *result.TrafficCell) {
		if c == nil || c.Status != vocab.StatusSaturated {
			return
		}
		for _, r := range c.Reasons {
			if r.Code == result.ReasonSaturated {
				saved += r.Figures[result.FigSavedS]
			}
		}
	}
	for i := range res.Traffic {
		add(&res.Traffic[i])
	}
	for _, s := range res.Search {
		for _, p := range s.Probes {
			add(p.Traffic)
		}
	}
	return saved
}

// SaturationSavedText words the window time saved by stopping saturated
// cells, as GPU time on g's GPUs: "57.0 s of windows not run (0.032
// GPU-hours on 2 GPUs)"; on a CPU server, server time.
func SaturationSavedText(saved float64, g *result.GPUTime) string {
	if g.CPU || g.GPUs == 0 {
		return fmt.Sprintf("%s s of windows not run (server time; a CPU server)", numfmt.Fixed(saved, 1))
	}
	gpus := "1 GPU"
	if g.GPUs > 1 {
		gpus = strconv.Itoa(g.GPUs) + " GPUs"
	}
	return fmt.Sprintf("%s s of windows not run (%.3f GPU-hours on %s)", numfmt.Fixed(saved, 1), saved*float64(g.GPUs)/3600, gpus)
}

// repeatCount is how many repeats repeat = "auto" took over the measured
// decode and prefill cells: n cells, mean a cell, lo to hi. Its String
// words it: "took 4.5 a cell on average, 4 to 8".
type repeatCount struct {
	n, lo, hi int
	mean      float64
}

// String is "took 4.5 a cell on average, 4 to 8", or "no cell measured".
func (r repeatCount) String() string {
	if r.n == 0 {
		return "no cell measured"
	}
	return fmt.Sprintf("took %s a cell on average, %d to %d", numfmt.Fixed(r.mean, 1), r.lo, r.hi)
}

// repeatsTaken counts the repeats res's measured decode and prefill
// cells took (a cell that records none took one).
func repeatsTaken(res *result.Results) repeatCount {
	var r repeatCount
	sum := 0
	count := func(k int) {
		k = max(k, 1)
		if r.n == 0 || k < r.lo {
			r.lo = k
		}
		r.hi = max(r.hi, k)
		r.n++
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
	if r.n > 0 {
		r.mean = float64(sum) / float64(r.n)
	}
	return r
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

// launchCommand is the server's command line as a shell would take it,
// with the API key hidden; "" when slogate did not launch it.
func launchCommand(s *result.Server) string {
	if len(s.Argv) == 0 {
		return ""
	}
	return shellcmd.Line(s.Env, redactArgv(s.Argv))
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
