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
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/shellcmd"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/workload"
)

// header.go builds the head of the report: its title, the line under
// it, and the Hardware, Engine and Run tables.

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

type kv struct{ Key, Value string }

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
		if saved := SaturationSavedS(res); saved > 0 {
			facts = append(facts, kv{"Saved by saturation", SaturationSavedText(saved, g)})
		}
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
