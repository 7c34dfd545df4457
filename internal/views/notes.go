package views

// This file is the run view's lines of what a server's run tells outside
// its cells (event.Note): the launch, readiness, the server's facts,
// prompts built, correctness blocks, what -resume carries over, and the
// run's warnings as they happen.

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/plan"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/shellcmd"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// Note streams the line of a note of the run (event.Observer).
func (o *RunObserver) Note(n event.Note) { o.stream.Log(NoteLine(n)) }

// WriteResumeNote writes on w the line of a note -resume gives before
// the run starts (runner.Resumed.MatchFlags, MatchPrevious), as slogate
// says it: "slogate: -resume: …".
func WriteResumeNote(w io.Writer, n event.Note) {
	fmt.Fprintln(w, "slogate: "+NoteLine(n))
}

// NoteLine is the console line of note n (one of event.Note's types); a
// value of another type is shown as Go prints it.
func NoteLine(n event.Note) string {
	switch n := n.(type) {
	case warning.Warning:
		return "warning: " + n.String()
	case event.Warned:
		return "warning: " + n.Warning.String()
	case event.Starting:
		return "starting server: " + shellcmd.Line(n.Env, n.Argv)
	case event.SimNoContainer:
		return "-sim: the simulator runs as a process; the container block is not used"
	case event.StillWaiting:
		return fmt.Sprintf("still %s (%.0fs)", n.Stage, n.Waited.Seconds())
	case event.PromptsBuilt:
		return fmt.Sprintf("prompts at %s: %d of %d tokens built in %v with %d POST /tokenize calls (%s exchanged)",
			vocab.FormatTokens(n.Context), n.Prompts, n.Tokens, n.Took.Round(time.Millisecond), n.TokenizeCalls, byteSize(n.Exchanged))
	case event.PromptsWarmed:
		return fmt.Sprintf("prompts at %s: warmed the prompts of streams 2–%d in %v", vocab.FormatTokens(n.Context), n.Streams, n.Took.Round(time.Millisecond))
	case event.Rebooting:
		return fmt.Sprintf("boot %d of %d: restarting the server (measure.boots = %d)", n.Boot, n.Boots, n.Boots)
	case event.AttemptLogKept:
		return "-resume: the resumed run's server log is kept as " + n.Path
	case event.MeasuringEndpoint:
		return fmt.Sprintf("measuring the running server at %s (no boot, no stop)", n.Base)
	case event.ServerReady:
		return fmt.Sprintf("server ready in %.1fs (log: %s)", n.Startup.Seconds(), n.LogPath)
	case event.ServerFact:
		return fmt.Sprintf("server %s: %s %s (from the spec; the server did not say)", n.Server, n.Fact, n.Asked)
	case event.ServerFacts:
		return serverFactsLine(n)
	case event.CheckWindowDone:
		return checkWindowLine(n)
	case event.CorrectnessStarting:
		return fmt.Sprintf("%s: correctness %q: %d prompts, greedy, %d at a time", n.Server, n.Block, n.Prompts, n.Concurrency)
	case event.CorrectnessDone:
		cost := "GPU-s"
		if n.CPU {
			cost = "server-s on a CPU server, no GPU"
		}
		return fmt.Sprintf("%s: correctness %q: %d outputs in %ss (%s %s)", n.Server, n.Block, n.Outputs,
			numfmt.Fixed(n.ElapsedS, 1), numfmt.Fixed(n.Spent, 1), cost)
	case event.CorrectnessRemeasured:
		return fmt.Sprintf("%s: -resume: correctness %q is measured again: %s", n.Server, n.Block, remeasureText(n))
	case event.CorrectnessKept:
		return fmt.Sprintf("%s: -resume: correctness %q is kept: %d outputs in %s", n.Server, n.Block, n.Outputs, n.File)
	case event.RepeatMeasured:
		return repeatLine(n)
	case event.NothingLeft:
		return fmt.Sprintf("%s: nothing left to measure: every cell of the plan is in %s", n.Server, n.CellsFile)
	case event.FlagCarried:
		return fmt.Sprintf("-resume: -%s %s, as the interrupted run was given", n.Flag, shellcmd.Quote(n.Value))
	case event.VarsCarried:
		vars := make([]string, len(n.Vars))
		for i, v := range n.Vars {
			vars[i] = v.Name + "=" + shellcmd.Quote(v.Value)
		}
		return "-resume: -var " + strings.Join(vars, " -var ") + ", as the interrupted run was given"
	case event.WindowCarried:
		return fmt.Sprintf("-resume: measuring with the interrupted run's window of %v", n.Window)
	case event.EndpointCarried:
		return fmt.Sprintf("-resume: measuring the running server at %s (-endpoint) as the interrupted run did", n.Endpoint)
	case event.SimCarried:
		return "-resume: launching the simulator (-sim) as the interrupted run did"
	}
	return fmt.Sprint(n)
}

// repeatLine is the line of one repeat of a cell measured more than once,
// its own figures, before the cell's test gives their median:
//
//	q/decode/ctx=1K/conc=1: repeat 1 of 2: 246.4 tok/s total · 200.0 tok/s/request · TTFT 27 ms · TBT 5.2 ms · valid
//	q/decode/ctx=1K/conc=1: repeat 5 (auto, 4 to 20): error: stream stalled
func repeatLine(n event.RepeatMeasured) string {
	of := fmt.Sprintf("of %d", n.Of)
	if n.Max > n.Of {
		of = fmt.Sprintf("(auto, %d to %d)", n.Of, n.Max)
	}
	head := fmt.Sprintf("%s: repeat %d %s: ", n.Cell.Ref().TestName(n.Server), n.Repeat, of)
	switch {
	case n.Cell.Status == vocab.StatusError:
		return head + "error: " + n.Cell.Reason
	case n.Cell.Status == vocab.StatusUnmeasurable:
		return head + "unmeasurable, left out of the cell: " + n.Cell.Reason
	case n.Excluded != "":
		return head + report.DecodeLine(&n.Cell) + "; left out of the cell: " + n.Excluded
	}
	return head + report.DecodeLine(&n.Cell)
}

// remeasureText words why a resumed run measures a correctness block
// again (event.RemeasureReason).
func remeasureText(n event.CorrectnessRemeasured) string {
	switch n.Why {
	case event.RemeasureUnfinished:
		return "the run it continues was stopped while measuring it"
	case event.RemeasureSettingsChanged:
		return "its settings changed since that run"
	case event.RemeasureOutputsMissing:
		return fmt.Sprintf("%s holds %d of its %d outputs", result.CorrectnessFile, n.Outputs, n.Prompts)
	case event.RemeasureDatasetChanged:
		return fmt.Sprintf("its dataset changed since that run (line %d)", n.Line)
	}
	return string(n.Why)
}

// serverFactsLine is the line of what the run read of the server:
//
//	server qwen: version 0.11.0, max_model_len 32768, KV cache 120000 tokens (from the log: 7.3 GiB), 60000 per engine over 2 data-parallel engines
func serverFactsLine(n event.ServerFacts) string {
	version := n.Version
	if version == "" {
		version = "unknown"
	}
	kv := "unknown"
	if p := (plan.KVPool{Tokens: n.KVTokens, Engines: n.KVEngines, Slots: n.KVSlots}); p.Tokens > 0 {
		kv = fmt.Sprintf("%d tokens (from %s)", p.Tokens, n.KVSource)
		if read := KVReadText(n.KVRead); read != "" {
			kv = fmt.Sprintf("%d tokens (from %s: %s)", p.Tokens, n.KVSource, read)
		}
		if p.Slots > 0 {
			kv += fmt.Sprintf(", %d per slot over %d slots", p.PerSlot(), p.Slots)
		}
		if p.Engines > 1 {
			kv += fmt.Sprintf(", %d per engine over %d data-parallel engines", p.PerEngine(), p.Engines)
		}
	}
	return fmt.Sprintf("server %s: version %s, max_model_len %d, KV cache %s", n.Server, version, n.MaxModelLen, kv)
}

// byteSize formats a byte count in KB/MB.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// checkWindowLine is the line of a paired check's window
// (docs/method.md#paired-capacity-check): "search capacity: check window 3
// of 24 at 5 req/s: goodput_share 0.96 (1m12s)".
func checkWindowLine(n event.CheckWindowDone) string {
	kind := "check"
	if n.Replay {
		kind = "replay"
	}
	head := fmt.Sprintf("search %s: %s window %d of %d at %s req/s", n.Search, kind, n.Window, n.Windows, numfmt.Value(n.Rate))
	if n.Stop != nil {
		return head + " not measured, which ends the check: " + report.CheckStopText(n.Stop)
	}
	names := slices.Sorted(maps.Keys(n.Values))
	parts := make([]string, 0, len(names))
	for _, name := range names {
		parts = append(parts, name+" "+numfmt.Value(n.Values[name]))
	}
	if len(parts) == 0 {
		parts = append(parts, "no metric of the objective had a value")
	}
	return fmt.Sprintf("%s: %s (%s)", head, strings.Join(parts, ", "), n.Elapsed.Round(time.Second))
}
