package measure

import (
	"context"
	"time"

	"github.com/slogate/slogate/internal/result"
)

// This file runs agentic sessions (docs/spec.md#agentic-sessions):
// sessions start open-loop at their recorded times, and within a session
// each call waits for the previous call's answer and its tool batch.

// sessionWork is work whose units are an agentic trace's sessions.
type sessionWork interface {
	// sessionStarts are the sessions' starts, seconds after the cell's
	// origin, in unit order; the cell sends each session once.
	sessionStarts() []float64
	// toolWait is the tool batch before unit i's call t.
	toolWait(i, t int) time.Duration
	// session is unit i's session as the trace recorded it: its id, and
	// its calls' recorded server times, tool batches (÷ speed) and cached
	// tokens.
	session(i int) recordedSession
}

// recordedSession is what a trace recorded of one session's calls.
type recordedSession struct {
	id               string
	serverMs, toolMs []float64
	cachedTokens     []int
}

// agentWork is w as sessionWork when w is an agentic trace's plan.
func agentWork(w trafficWork) (sessionWork, bool) {
	sw, ok := w.(sessionWork)
	if !ok || sw.sessionStarts() == nil {
		return nil, false
	}
	return sw, true
}

func (w *planWork) sessionStarts() []float64 {
	if !w.agent {
		return nil
	}
	starts := make([]float64, len(w.convs))
	for i, c := range w.convs {
		starts[i] = c[0].Call.StartMs / 1e3
	}
	return starts
}

func (w *planWork) toolWait(i, t int) time.Duration {
	r := w.conv(i)[t]
	if r.Call == nil {
		return 0
	}
	return time.Duration(r.Call.ToolMs * float64(time.Millisecond))
}

func (w *planWork) session(i int) recordedSession {
	c := w.conv(i)
	s := recordedSession{id: c[0].Call.Session}
	for _, r := range c {
		s.serverMs = append(s.serverMs, r.Call.RecordedMs)
		s.toolMs = append(s.toolMs, r.Call.ToolMs)
		s.cachedTokens = append(s.cachedTokens, r.Call.RecordedCachedTokens)
	}
	return s
}

// sleep waits d, false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// sessionFigures are the sessions of sw whose first call was launched in
// [windowStart, windowEnd), from the cell's requests, in unit order.
func sessionFigures(sw sessionWork, reqs []trafficRequest, windowStart, windowEnd int64) []result.AgentSession {
	byUnit := map[int][]trafficRequest{}
	for _, q := range reqs {
		byUnit[q.index] = append(byUnit[q.index], q)
	}
	var out []result.AgentSession
	for u := range len(sw.sessionStarts()) {
		calls, ok := byUnit[u]
		if !ok || calls[0].launch < windowStart || calls[0].launch >= windowEnd {
			continue
		}
		out = append(out, sessionOf(sw.session(u), calls))
	}
	return out
}

// sessionOf measures one session from its calls' requests, in order,
// beside rec.
func sessionOf(rec recordedSession, calls []trafficRequest) result.AgentSession {
	s := result.AgentSession{Session: rec.id, Calls: len(rec.serverMs), Sent: len(calls)}
	var cached int64
	reported := false
	last := calls[0].launch
	for k, q := range calls {
		if q.finished {
			s.Completed++
		}
		ttft := -1.0
		if q.first >= 0 {
			ttft = Round(float64(q.first-q.launch)/1e6, 1)
		}
		s.TTFTMs = append(s.TTFTMs, ttft)
		s.PromptTokens += q.promptTokens
		if q.cached >= 0 {
			cached += q.cached
			reported = true
		}
		s.RecordedServerMs += rec.serverMs[k]
		s.RecordedCachedTokens += int64(rec.cachedTokens[k])
		if k > 0 {
			s.RecordedToolMs += rec.toolMs[k]
			s.ToolMs += float64(q.launch-calls[k-1].end) / 1e6
		}
		if q.end >= 0 {
			s.ServerMs += float64(q.end-q.launch) / 1e6
			last = q.end
		}
	}
	s.DurationMs = Round(float64(last-calls[0].launch)/1e6, 1)
	s.ServerMs, s.ToolMs = Round(s.ServerMs, 1), Round(s.ToolMs, 1)
	s.RecordedMs = Round(s.RecordedServerMs+s.RecordedToolMs, 1)
	s.RecordedServerMs, s.RecordedToolMs = Round(s.RecordedServerMs, 1), Round(s.RecordedToolMs, 1)
	if reported {
		s.CachedTokens = &cached
	}
	return s
}
