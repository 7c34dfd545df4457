package gate

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// recordStream records TestStream calls as lines.
type recordStream struct{ lines []string }

func (r *recordStream) Run(test string)          { r.lines = append(r.lines, "RUN "+test) }
func (r *recordStream) Output(test, line string) { r.lines = append(r.lines, "  "+line) }
func (r *recordStream) End(test string, o vocab.Outcome, _ time.Duration) {
	r.lines = append(r.lines, "END "+o.String()+" "+test)
}
func (r *recordStream) Log(line string)                         { r.lines = append(r.lines, "LOG "+line) }
func (r *recordStream) Progress(report.Progress)                {}
func (r *recordStream) Finish(o vocab.Outcome, _ time.Duration) {}

func TestObserver(t *testing.T) {
	rs := &recordStream{}
	o := newObserver(rs, "q", false)
	pre := result.PrefillCell{Context: 8192, Status: vocab.StatusValid, TPS: 46712.3, TTFTMs: 175.4}
	o.CellStart(pre.Ref())
	o.PrefillDone(pre, time.Second)
	valid := result.DecodeCell{Matrix: "decode", Context: 8192, Concurrency: 64, Status: vocab.StatusValid,
		TotalTPS: 6018.4, PerRequestTPS: 95.9, TTFTMs: 1027, TBTMs: 10.4, Warnings: []warning.Warning{warning.Text("w")}}
	o.CellStart(valid.Ref())
	o.DecodeDone(valid, time.Second)
	over := result.DecodeCell{Matrix: "decode", Context: 257024, Concurrency: 128, Status: vocab.StatusOverCapacity, Reason: "too big"}
	o.CellStart(over.Ref())
	o.DecodeDone(over, 0)
	errCell := result.DecodeCell{Matrix: "decode", Context: 8192, Concurrency: 1, Status: vocab.StatusError, Reason: "stream stalled"}
	o.CellStart(errCell.Ref())
	o.DecodeDone(errCell, 0)
	o.CellStart(vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: "decode", Context: 1024, Concurrency: 2})
	o.Abort(exit.Infraf("the server exited during the run\nlog lines"))
	want := []string{
		"RUN q/prefill/ctx=8K", "  46,712.3 tok/s prefill · TTFT 175 ms (cold)", "END pass q/prefill/ctx=8K",
		"RUN q/decode/ctx=8K/conc=64", "  6,018.4 tok/s total · 95.9 tok/s/request · TTFT 1,027 ms · TBT 10.4 ms · valid", "  warning: w", "END pass q/decode/ctx=8K/conc=64",
		"RUN q/decode/ctx=251K/conc=128", "  over capacity, not run: too big", "END skip q/decode/ctx=251K/conc=128",
		"RUN q/decode/ctx=8K/conc=1", "  error: stream stalled", "END error q/decode/ctx=8K/conc=1",
		"RUN q/decode/ctx=1K/conc=2", "  not measured: the server exited during the run", "END error q/decode/ctx=1K/conc=2",
	}
	if diff := cmp.Diff(want, rs.lines); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
