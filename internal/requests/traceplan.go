package requests

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"

	"github.com/slogate/slogate/internal/workload"
)

// streamBlock is the RNG stream of a trace's prefix block.
const streamBlock = streamPrefix + 1

// tracePlan is a trace's requests as a Scheduler plans them once: the
// selected lines (Trace.Select), without those dropped, at their times.
type tracePlan struct {
	reqs     []Request
	arrivals []float64
	// examined is how many lines the slice selected; overLength how many
	// of them drop_over_length dropped.
	examined, overLength int
	sha256               string
}

// isTrace reports whether the workload replays a trace.
func (p *Scheduler) isTrace() bool {
	if p.opts.Prompt != workload.DatasetPrompt {
		return false
	}
	if p.data != nil {
		return workload.IsTrace(p.data.Format)
	}
	return workload.IsTrace(p.opts.DatasetFormat)
}

// planTrace plans a trace's replay (docs/spec.md#traces): every line
// the slice selects, in arrival order, at its time since the slice's
// start divided by the speed. A prompt is exactly the line's input tokens
// of token IDs: its hash_ids blocks in order (a block's tokens drawn from
// the block ID and the seed, so requests naming one block share its
// tokens; the last block cut short when the line's length ends inside
// it), then tokens of its own. The plan is the same for every cell: a
// cell whose arrivals are not the trace's reuses its requests in order.
func (p *Scheduler) planTrace(ctx context.Context, cfg ScheduleConfig) (*tracePlan, error) {
	if p.trace != nil {
		return p.trace, nil
	}
	if err := p.load(); err != nil {
		return nil, err
	}
	f, _ := workload.TraceFormatOf(p.data.Format)
	if err := p.b.learnVocab(ctx); err != nil {
		return nil, err
	}
	tr := p.opts.Trace
	sel := tr.Select(p.data.Entries)
	tp := &tracePlan{examined: len(sel)}
	h := sha256.New()
	h.Write([]byte("slogate/trace/v1 " + p.data.SHA256 + "\n"))
	var num [8]byte
	put := func(v int64) {
		binary.LittleEndian.PutUint64(num[:], uint64(v))
		h.Write(num[:])
	}
	put(int64(p.opts.Seed))
	put(int64(f.BlockTokens))
	for _, idx := range sel {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		e := p.data.Entries[idx]
		t := e.Trace
		i := len(tp.reqs)
		out := p.outputTokens(e.Index, t.OutputTokens)
		if cfg.MaxModelLen > 0 && t.InputTokens+out > cfg.MaxModelLen {
			if tr.DropOverLength {
				tp.overLength++
				continue
			}
			return nil, &workload.DatasetError{Path: p.data.Path, Format: p.data.Format, Line: e.Line, Err: fmt.Errorf("the request's %d input and %d output tokens exceed the server's max_model_len %d: set drop_over_length = true to drop such requests (counted), or raise max_model_len",
				t.InputTokens, out, cfg.MaxModelLen)}
		}
		at := tr.Offset(p.data.Entries, e)
		r := Request{Index: i, Tokens: p.traceTokens(e.Index, t, f.BlockTokens), OutputTokens: out, Entry: e.Index, Line: e.Line,
			PrefixGroup: -1, Conversation: i}
		r.PromptTokens = len(r.Tokens)
		tp.reqs = append(tp.reqs, r)
		tp.arrivals = append(tp.arrivals, at)
		put(int64(at * 1e9))
		put(int64(r.PromptTokens))
		put(int64(out))
		put(int64(len(t.HashIDs)))
		for _, id := range t.HashIDs {
			put(id)
		}
	}
	if len(tp.reqs) == 0 {
		return nil, &workload.DatasetError{Path: p.data.Path, Format: p.data.Format, Empty: true,
			Err: fmt.Errorf("the trace's slice holds no request to send (%d selected, %d over max_model_len dropped, %d without tokens)", tp.examined, tp.overLength, p.data.ZeroLength)}
	}
	tp.sha256 = hex.EncodeToString(h.Sum(nil))
	p.trace = tp
	return tp, nil
}

// traceTokens is the prompt of trace line index (file order): n =
// t.InputTokens token IDs, t.HashIDs' blocks of size block first.
func (p *Scheduler) traceTokens(index int, t *workload.TraceRequest, block int) []int {
	n := t.InputTokens
	ids := make([]int, 0, n)
	if block > 0 {
		for _, id := range t.HashIDs {
			if len(ids) >= n {
				break
			}
			ids = append(ids, p.block(id, block)[:min(block, n-len(ids))]...)
		}
	}
	if rest := n - len(ids); rest > 0 {
		ids = append(ids, p.b.randomIDs(p.rng(index, streamTokens), rest)...)
	}
	return ids
}

// block is prefix block id's tokens, size of them, the same for every
// request naming it.
func (p *Scheduler) block(id int64, size int) []int {
	if b, ok := p.blocks[id]; ok {
		return b
	}
	if p.blocks == nil {
		p.blocks = map[int64][]int{}
	}
	b := p.b.randomIDs(rand.New(rand.NewPCG(p.opts.Seed^0x626c6f636b, uint64(id)<<4|streamBlock)), size)
	p.blocks[id] = b
	return b
}
