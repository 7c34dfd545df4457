package requests

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/workload"
)

// This file reads and plans agentic traces (workload.FormatCopilotAgent,
// docs/spec.md#agentic-sessions): sessions of LLM calls, each call sent
// when the session's previous call has been answered and its tool batch
// (the recorded gap) has passed.

// gunzip is data decompressed when it is gzip (its magic bytes), nil when
// it is not.
func gunzip(data []byte) ([]byte, error) {
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		return nil, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("cannot decompress the gzip file: %w", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("cannot decompress the gzip file: %w", err)
	}
	return out, nil
}

// agentLine is a line of an agentic trace: one LLM call.
type agentLine struct {
	Session          *string  `json:"session_id"`
	Turn             *int     `json:"turn"`
	TimestampMs      *float64 `json:"timestamp_ms"`
	DurationMs       *float64 `json:"duration_ms"`
	PromptTokens     *int     `json:"prompt_tokens"`
	CompletionTokens *int     `json:"completion_tokens"`
	CachedTokens     *int     `json:"cached_tokens"`
}

// agentFields are an agentic trace line's required fields, in the order
// a missing one is named.
const agentFields = `{"session_id", "turn", "timestamp_ms", "duration_ms", "prompt_tokens", "completion_tokens"} and an optional "cached_tokens"`

// missing names the first required field l lacks, "" when it has them all.
func (l agentLine) missing() string {
	for _, f := range []struct {
		name string
		set  bool
	}{{"session_id", l.Session != nil}, {"turn", l.Turn != nil}, {"timestamp_ms", l.TimestampMs != nil},
		{"duration_ms", l.DurationMs != nil}, {"prompt_tokens", l.PromptTokens != nil}, {"completion_tokens", l.CompletionTokens != nil}} {
		if !f.set {
			return f.name
		}
	}
	return ""
}

// sessionEnd is where a session stands while its trace is read: its last
// call's line, turn and end (ms).
type sessionEnd struct {
	line, turn int
	endMs      float64
}

// readAgentCalls reads an agentic trace, one call a non-blank line. A
// session's calls come in time order: a call that starts before the
// session's previous call ended, or whose turn goes back, is an error at
// its line.
func readAgentCalls(d *workload.Dataset, data []byte, fail func(int, string, ...any) error) error {
	sessions := map[string]sessionEnd{}
	err := eachJSONLine(data, fail, func(n int, l agentLine) error {
		if f := l.missing(); f != "" {
			return fail(n, "no %q field (an agentic trace line is one LLM call: %s)", f, agentFields)
		}
		c := workload.AgentCall{Session: *l.Session, Turn: *l.Turn, StartMs: *l.TimestampMs, DurationMs: *l.DurationMs,
			PromptTokens: *l.PromptTokens, CompletionTokens: *l.CompletionTokens}
		if l.CachedTokens != nil {
			c.CachedTokens = *l.CachedTokens
		}
		if err := checkAgentCall(c, sessions[c.Session]); err != nil {
			return fail(n, "%v", err)
		}
		sessions[c.Session] = sessionEnd{line: n, turn: c.Turn, endMs: c.StartMs + c.DurationMs}
		// Trace places the call as the other traces' requests are placed
		// (a slice, max_requests): at its start, with its lengths.
		tr := &workload.TraceRequest{At: time.Duration(c.StartMs * float64(time.Millisecond)), InputTokens: c.PromptTokens, OutputTokens: c.CompletionTokens}
		d.Entries = append(d.Entries, workload.Entry{Index: len(d.Entries), Line: n, ID: c.Session, Call: &c, Trace: tr})
		return nil
	})
	if err != nil {
		return err
	}
	// A trace may list its calls session by session: the calls are put in
	// time order (each keeps its line), so that the trace's time zero is
	// its earliest call and a slice or max_requests counts in time.
	slices.SortStableFunc(d.Entries, func(a, b workload.Entry) int { return cmp.Compare(a.Trace.At, b.Trace.At) })
	for i := range d.Entries {
		d.Entries[i].Index = i
	}
	return nil
}

// checkAgentCall says what is wrong with call c after its
// session's previous call prev (line 0: none), nil when nothing is.
func checkAgentCall(c workload.AgentCall, prev sessionEnd) error {
	switch {
	case strings.TrimSpace(c.Session) == "":
		return errors.New("session_id is empty")
	case c.Turn < 1:
		return fmt.Errorf("turn is a whole number ≥ 1; got %d", c.Turn)
	case c.DurationMs < 0 || c.StartMs < 0:
		return fmt.Errorf("timestamp_ms and duration_ms are ≥ 0; got %g and %g", c.StartMs, c.DurationMs)
	case c.PromptTokens < 1 || c.CompletionTokens < 1:
		return fmt.Errorf("prompt_tokens and completion_tokens are whole numbers ≥ 1; got %d and %d", c.PromptTokens, c.CompletionTokens)
	case c.CachedTokens < 0 || c.CachedTokens > c.PromptTokens:
		return fmt.Errorf("cached_tokens is from 0 to prompt_tokens (%d); got %d", c.PromptTokens, c.CachedTokens)
	case prev.line == 0:
		return nil
	case c.StartMs < prev.endMs:
		return fmt.Errorf("the call starts at %g ms, before session %q's previous call (line %d) ended at %g ms: a session's calls are listed in time order, each after the previous one's answer", c.StartMs, c.Session, prev.line, prev.endMs)
	case c.Turn < prev.turn:
		return fmt.Errorf("turn %d comes after turn %d of session %q (line %d): a session's turns are listed in order", c.Turn, prev.turn, c.Session, prev.line)
	}
	return nil
}

// AgentCall is what a request of an agentic trace carries of its call
// (Request.Call): the times that place it, scaled by the workload's speed
// where they are the client's.
type AgentCall struct {
	// Session is the call's session; Position its place in the session
	// (0-based, = Request.Turn).
	Session  string
	Position int
	// StartMs is when the session starts, ms after the trace's first
	// call, ÷ speed (the same on all the session's calls).
	StartMs float64
	// ToolMs is the tool batch before the call, ÷ speed: the recorded gap
	// between the previous call's end and this call's start (0 for a
	// session's first call). RecordedToolMs is it unscaled.
	ToolMs, RecordedToolMs float64
	// RecordedMs is the recorded server's time to answer the call.
	RecordedMs float64
	// RecordedCachedTokens is the prompt tokens the recorded server's cache
	// served.
	RecordedCachedTokens int
}

// isAgent reports whether the workload replays an agentic trace.
func (p *Scheduler) isAgent() bool {
	if p.opts.Prompt != workload.DatasetPrompt {
		return false
	}
	if p.data != nil {
		return p.data.Format == workload.FormatCopilotAgent
	}
	return p.opts.DatasetFormat == workload.FormatCopilotAgent
}

// planAgent plans every call of an agentic trace once, session after
// session in the order they start (a session's calls in order): the
// call's prompt is the session's text cut at exactly its prompt_tokens, so
// that a later call's prompt begins with an earlier one's; its output
// length is the recorded completion_tokens unless the workload sets
// output_tokens.
func (p *Scheduler) planAgent(ctx context.Context, cfg ScheduleConfig) ([]Request, error) {
	if err := p.load(); err != nil {
		return nil, err
	}
	speed := p.opts.Trace.SpeedOrOne()
	// A session is replayed when its first call is in the trace's slice
	// and among its first max_requests calls.
	selected := map[int]bool{}
	for _, i := range p.opts.Trace.Select(p.data.Entries) {
		selected[i] = true
	}
	bySession := map[string][]*workload.Entry{}
	var order []string
	// Starts count from the slice's start, as the other traces' arrivals.
	first := p.data.Entries[0].Call.StartMs + float64(p.opts.Trace.From)/float64(time.Millisecond)
	for i := range p.data.Entries {
		e := &p.data.Entries[i]
		if _, ok := bySession[e.Call.Session]; !ok {
			if !selected[i] {
				bySession[e.Call.Session] = nil // a session left out
				continue
			}
			order = append(order, e.Call.Session)
		} else if bySession[e.Call.Session] == nil {
			continue
		}
		bySession[e.Call.Session] = append(bySession[e.Call.Session], e)
	}
	slices.SortStableFunc(order, func(a, b string) int {
		x, y := bySession[a][0].Call.StartMs, bySession[b][0].Call.StartMs
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	var reqs []Request
	p.sessionStarts = p.sessionStarts[:0]
	p.agentCalls, p.agentOverLength = 0, 0
	for _, s := range order {
		calls := bySession[s]
		p.agentCalls += len(calls)
		start := (calls[0].Call.StartMs - first) / speed
		conv := len(reqs)
		session, err := p.planSession(ctx, cfg, s, calls, start, conv)
		if err != nil {
			return nil, err
		}
		if session == nil {
			p.agentOverLength += len(calls) // drop_over_length: the session is left out whole
			continue
		}
		p.sessionStarts = append(p.sessionStarts, start/1e3)
		reqs = append(reqs, session...)
	}
	if len(reqs) == 0 {
		return nil, &workload.DatasetError{Path: p.data.Path, Format: p.data.Format, Empty: true,
			Err: fmt.Errorf("the trace's slice holds no session to send (%d calls selected, %d over max_model_len dropped)", p.agentCalls, p.agentOverLength)}
	}
	return reqs, nil
}

// planSession plans session s's calls, the first as request conv, the
// session starting at start (ms, scaled): nil when a call exceeds the
// server's max_model_len and drop_over_length drops the session, an error
// at the call's line when it does not.
func (p *Scheduler) planSession(ctx context.Context, cfg ScheduleConfig, s string, calls []*workload.Entry, start float64, conv int) ([]Request, error) {
	speed := p.opts.Trace.SpeedOrOne()
	var reqs []Request
	for k, e := range calls {
		c := e.Call
		text, ids, err := p.b.fitText(ctx, fmt.Sprintf("Session %s:\n\n", s), c.PromptTokens)
		if err != nil {
			return nil, &workload.DatasetError{Path: p.data.Path, Format: p.data.Format, Line: e.Line, Err: fmt.Errorf("building the call's prompt of %d tokens: %w", c.PromptTokens, err)}
		}
		ac := &AgentCall{Session: s, Position: k, StartMs: start, RecordedMs: c.DurationMs, RecordedCachedTokens: c.CachedTokens}
		if k > 0 {
			prev := calls[k-1].Call
			ac.RecordedToolMs = c.StartMs - (prev.StartMs + prev.DurationMs)
			ac.ToolMs = ac.RecordedToolMs / speed
		}
		r := Request{Index: conv + k, Text: text, Tokens: ids, Messages: userMessage(text), PromptTokens: len(ids),
			OutputTokens: p.outputTokens(conv+k, c.CompletionTokens), Entry: e.Index, Line: e.Line, PrefixGroup: -1,
			Conversation: conv, Turn: k, Call: ac}
		if cfg.MaxModelLen > 0 && r.PromptTokens+r.OutputTokens > cfg.MaxModelLen {
			if p.opts.Trace.DropOverLength {
				return nil, nil
			}
			return nil, &workload.DatasetError{Path: p.data.Path, Format: p.data.Format, Line: e.Line, Err: fmt.Errorf("the prompt (%d tokens) and its output (%d tokens) exceed the server's max_model_len %d: shorten or remove the call, or raise max_model_len",
				r.PromptTokens, r.OutputTokens, cfg.MaxModelLen)}
		}
		reqs = append(reqs, r)
	}
	return reqs, nil
}

// agentSHA256 is the hex SHA-256 of what an agentic trace's replay sends:
// each call's session start, tool batch, lengths and place, and the seed,
// so two replays of one trace and seed have the same.
func agentSHA256(reqs []Request, seed uint64) string {
	h := sha256.New()
	b := strconv.AppendUint([]byte("slogate/agent/v1 seed "), seed, 10)
	for _, r := range reqs {
		b = append(strconv.AppendQuote(append(b, '\n'), r.Call.Session), ' ')
		b = strconv.AppendInt(append(b, ' '), int64(r.Turn), 10)
		b = strconv.AppendFloat(append(b, ' '), r.Call.StartMs, 'g', -1, 64)
		b = strconv.AppendFloat(append(b, ' '), r.Call.ToolMs, 'g', -1, 64)
		b = strconv.AppendInt(append(b, ' '), int64(r.PromptTokens), 10)
		b = strconv.AppendInt(append(b, ' '), int64(r.OutputTokens), 10)
	}
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}
