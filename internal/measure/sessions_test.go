package measure

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vllmfake"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/workload"
)

// replayAgent replays the agentic fixture (testdata/datasets/agent.jsonl:
// two sessions of 200 ms calls, 10 tokens each, tool batches of 300, 500
// and 250 ms, the second session 400 ms after the first) at speed against
// a server as fast as the trace's (2 chunks of 5 tokens 100 ms apart),
// and returns the sessions measured and the requests. The prompts are
// planned by a tokenizer whose IDs follow the text (the fake server's
// /tokenize gives every text of a length the same IDs), so that only a
// session's own prompts share a prefix.

func replayAgent(t *testing.T, speed float64) ([]result.AgentSession, []trafficRequest, map[[2]int]toolAsk) {
	t.Helper()
	f := &vllmfake.Server{Tokens: 10, PerChunk: 5, Gap: 100 * time.Millisecond, PrefixCache: true}
	srv := f.Start(t)
	client := lifecycle.NewClient(srv.URL, "", "qwen")
	opts := workload.Options{Prompt: workload.DatasetPrompt, DatasetPath: "../../testdata/datasets/agent.jsonl", IgnoreEOS: true, Trace: workload.Trace{Speed: speed}}
	plan, err := requests.NewScheduler(textTokenizer{}, opts, nil).Schedule(context.Background(), requests.ScheduleConfig{Requests: 1})
	if err != nil {
		t.Fatal(err)
	}
	work, err := newPlanWork(completionsFields, plan, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	window := int64(10 * time.Second)
	l := &trafficLoad{client: client, path: "/v1/completions", url: srv.URL + "/v1/completions", work: work, origin: time.Now(),
		firstChunkTimeout: 10 * time.Second, idleTimeout: 10 * time.Second, slots: make(chan struct{}, 64),
		windowEnd: window, failed: make(chan struct{}), times: plan.Arrivals}
	var mu sync.Mutex
	asks := map[[2]int]toolAsk{}
	l.toolSleep = func(ctx context.Context, i, t int, d time.Duration) bool {
		mu.Lock()
		asks[[2]int{i, t}] = toolAsk{at: l.now(), d: d}
		mu.Unlock()
		return sleep(ctx, d)
	}
	l.wg.Add(1)
	go l.dispatch(context.Background())
	l.wg.Wait()
	select {
	case <-l.failed:
		t.Fatalf("a request failed: %v", l.failErr)
	default:
	}
	reqs := l.copyRequests()
	return sessionFigures(work, reqs, 0, window), reqs, asks
}

// toolAsk is a tool batch the replay asked to wait: when (on the load's
// clock) and how long.
type toolAsk struct {
	at int64
	d  time.Duration
}

// textTokenizer makes a token of every two bytes of text, its ID the
// bytes'.
type textTokenizer struct{}

func (textTokenizer) TokenizeText(_ context.Context, text string) ([]int, error) {
	ids := make([]int, 0, (len(text)+1)/2)
	for i := 0; i < len(text); i += 2 {
		id := int(text[i]) << 8
		if i+1 < len(text) {
			id |= int(text[i+1])
		}
		ids = append(ids, 256+id)
	}
	return ids, nil
}

func (textTokenizer) TokenizeChat(context.Context, []openai.ChatCompletionMessage, bool, map[string]any) ([]int, error) {
	return nil, errors.New("no chat template")
}

// TestAgentSessionsReplay: at speed 1 against a server as fast as the
// trace's, each session is sent on the trace's schedule: its first call at
// its recorded start (the second session 400 ms after the first, open
// loop), each later call its recorded tool batch after the previous call
// ended (checkReplayTimes); its server and tool times are at least the
// recorded, its duration logged beside the recorded; each call gets a TTFT
// by its position, and a session's later calls hit the prefix cache on its
// earlier prompts (the fake server counts whole 16-token blocks, as the
// fixture's cached_tokens do).
func TestAgentSessionsReplay(t *testing.T) {
	sessions, reqs, asks := replayAgent(t, 1)
	want := []struct {
		name                   string
		calls                  int
		recorded, server, tool float64
		cached                 int64
	}{
		{name: "s-a", calls: 3, recorded: 1400, server: 600, tool: 800, cached: 288 + 416},
		{name: "s-b", calls: 2, recorded: 650, server: 400, tool: 250, cached: 192},
	}
	if len(sessions) != len(want) {
		t.Fatalf("%d sessions measured, want %d: %+v", len(sessions), len(want), sessions)
	}
	for i, w := range want {
		s := sessions[i]
		t.Logf("%s: %g ms (recorded %g), server %g ms (%g), tools %g ms (%g), TTFT by position %v ms, cached %v of %d",
			s.Session, s.DurationMs, s.RecordedMs, s.ServerMs, s.RecordedServerMs, s.ToolMs, s.RecordedToolMs, s.TTFTMs, *s.CachedTokens, s.PromptTokens)
		if s.Session != w.name || !s.Complete() || s.Calls != w.calls || len(s.TTFTMs) != w.calls {
			t.Errorf("session %d: %s, %d of %d calls completed, %d TTFTs; want %s complete with %d", i, s.Session, s.Completed, s.Calls, len(s.TTFTMs), w.name, w.calls)
		}
		if s.RecordedMs != w.recorded || s.RecordedServerMs != w.server || s.RecordedToolMs != w.tool {
			t.Errorf("%s recorded %g ms (server %g, tools %g), want %g (%g, %g)", s.Session, s.RecordedMs, s.RecordedServerMs, s.RecordedToolMs, w.recorded, w.server, w.tool)
		}
		checkSessionTimes(t, s)
		if s.CachedTokens == nil || *s.CachedTokens != w.cached || s.RecordedCachedTokens != w.cached {
			t.Errorf("%s: %v prompt tokens served from the cache (recorded %d), want %d", s.Session, s.CachedTokens, s.RecordedCachedTokens, w.cached)
		}
	}
	checkReplayTimes(t, 1, reqs, asks)
}

// TestAgentSessionsSpeed: at speed 2 the replay waits half the recorded
// tool batches and starts the sessions at half their recorded starts; the
// server's time is the server's.
func TestAgentSessionsSpeed(t *testing.T) {
	sessions, reqs, asks := replayAgent(t, 2)
	for _, s := range sessions {
		t.Logf("%s: %g ms (recorded %g), server %g ms (%g), tools %g ms (%g)", s.Session, s.DurationMs, s.RecordedMs, s.ServerMs, s.RecordedServerMs, s.ToolMs, s.RecordedToolMs)
		if want := s.RecordedServerMs + s.RecordedToolMs; s.RecordedMs != want {
			t.Errorf("%s recorded %g ms, want %g (its server and halved tool times)", s.Session, s.RecordedMs, want)
		}
		checkSessionTimes(t, s)
	}
	checkReplayTimes(t, 2, reqs, asks)
	if len(sessions) != 2 || sessions[0].RecordedToolMs != 400 {
		t.Errorf("sessions %+v, want two, the first's tool batches 800 ms ÷ 2", sessions)
	}
}

// TestAgentSessionsCell: a traffic cell over an agentic trace sends each
// session once from its recorded start, whatever the block's rate, ends
// with its last session (its window the trace's, not the 60 s asked), and
// keeps the sessions' figures in the cell (results.json's "sessions"),
// the calls' TTFTs by position also in the cell's turn metrics.
func TestAgentSessionsCell(t *testing.T) {
	f := &vllmfake.Server{Tokens: 10, PerChunk: 5, Gap: 100 * time.Millisecond}
	m := testMeter(f.Start(t).URL)
	m.MaxOutput = 8
	p, _, err := NewPrompts(context.Background(), m.Server.Client, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	m.Prompts = p
	path := "../../testdata/datasets/agent.jsonl.gz"
	d, err := requests.ReadDataset(path, "")
	if err != nil {
		t.Fatal(err)
	}
	w := &spec.Workload{Name: "agent", Options: workload.Options{Prompt: workload.DatasetPrompt, DatasetPath: path, IgnoreEOS: true}, Dataset: d, DatasetText: path}
	tr := &spec.Traffic{Label: "agentic", Workload: "agent", Rates: []float64{50}, Arrivals: vocab.ArrivalsPoisson,
		Duration: time.Minute, DurationText: "60s", MaxOutstanding: 64}
	start := time.Now()
	c, err := m.WorkloadTraffic(context.Background(), vocab.CellRef{Phase: vocab.PhaseTraffic, Matrix: tr.Label, Rate: 50}, tr, w)
	if err != nil {
		t.Fatal(err)
	}
	if c.Launched != 5 || c.Completed != 5 || len(c.Sessions) != 2 {
		t.Fatalf("cell %s (%s): %d launched, %d completed, %d sessions; want the trace's 5 calls in 2 sessions", c.Status, c.Reason, c.Launched, c.Completed, len(c.Sessions))
	}
	// The last session ends 1.4 s in, no earlier (no wait ends early), and
	// later only by what load adds: far from the 60 s window either way.
	if took := time.Since(start); took > 40*time.Second || c.MeasuredS < 1.4 || c.MeasuredS > 30 {
		t.Errorf("the cell took %s and measured %g s of its 60 s window, want it to end with the trace's last session, 1.4 s in (30 s at most on a stalled machine)", took, c.MeasuredS)
	}
	for _, s := range c.Sessions {
		t.Logf("%s: %g ms (recorded %g), server %g ms (%g), tools %g ms (%g)", s.Session, s.DurationMs, s.RecordedMs, s.ServerMs, s.RecordedServerMs, s.ToolMs, s.RecordedToolMs)
		if !s.Complete() {
			t.Errorf("session %s: %d of %d calls; want all", s.Session, s.Completed, s.Calls)
		}
		checkSessionTimes(t, s)
	}
	if v, ok := c.Value(metric.Must(vocab.PhaseTraffic, metric.TurnName(3))); !ok || v <= 0 {
		t.Errorf("no TTFT for the sessions' third calls in the cell: %v", c.Stats)
	}
}

// TestAgentWorkBodies: a call of an agentic session is sent alone, its
// recorded prompt holding the session's history: on chat one user message
// without the server's earlier answers, on completions its token IDs; the
// work wants no answers and waits each call's tool batch.
func TestAgentWorkBodies(t *testing.T) {
	opts := workload.Options{Prompt: workload.DatasetPrompt, DatasetPath: "../../testdata/datasets/agent.jsonl", IgnoreEOS: true}
	plan, err := requests.NewScheduler(textTokenizer{}, opts, nil).Schedule(context.Background(), requests.ScheduleConfig{Requests: 1})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		fields requestFields
		want   string // in the body of session 0's second call
	}{
		{name: "chat", fields: requestFields{model: "qwen", chat: true}, want: `"messages":[{"role":"user","content":"Session s-a:`},
		{name: "completions", fields: completionsFields, want: `"prompt":[`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := newPlanWork(tt.fields, plan, true, nil)
			if err != nil {
				t.Fatal(err)
			}
			body := string(w.body(0, 1, nil))
			if !strings.Contains(body, tt.want) || strings.Contains(body, `"assistant"`) || w.wantsAnswers() {
				t.Errorf("body %.120s…, wants answers %v; want %q alone, no answers", body, w.wantsAnswers(), tt.want)
			}
			if got := w.toolWait(0, 1); got != 300*time.Millisecond {
				t.Errorf("tool wait before session 0's second call %s, want 300ms", got)
			}
			if got := w.turnOf(0, 2); got != 3 {
				t.Errorf("turn of session 0's third call %d, want 3 (its TTFT by position)", got)
			}
		})
	}
}

// lateMargin is how late past its due instant a launch may come: what a
// 2-core machine loaded past its cores may add to one timer's wake-up (up
// to 870 ms measured at load average 19: stress --cpu 4 beside a CI run),
// with room. The exact checks are the waits the replay asked for, and
// that no launch came before its wait ended.
const lateMargin = 2 * time.Second

// checkReplayTimes holds the agentic fixture's replay at speed to its
// schedule (asks: the tool batches it asked to wait, by unit and call).
// Exactly: each session's first call planned at its recorded start (0 and
// 400 ms, ÷ speed) and launched no earlier; before each later call, the
// replay asked, once the previous call had ended, to wait its recorded
// tool batch (÷ speed), and launched it no earlier than that wait's end.
// What a loaded scheduler adds on top is held to lateMargin.
func checkReplayTimes(t *testing.T, speed float64, reqs []trafficRequest, asks map[[2]int]toolAsk) {
	t.Helper()
	recorded := []struct {
		startMs float64
		toolMs  []float64 // before each call
	}{
		{startMs: 0, toolMs: []float64{0, 300, 500}},
		{startMs: 400, toolMs: []float64{0, 250}},
	}
	scaled := func(ms float64) time.Duration { return time.Duration(ms / speed * float64(time.Millisecond)) }
	bySession := map[int][]trafficRequest{}
	for _, q := range reqs {
		bySession[q.index] = append(bySession[q.index], q)
	}
	for i, rec := range recorded {
		calls := bySession[i]
		if len(calls) != len(rec.toolMs) {
			t.Errorf("session %d: %d calls launched, want %d", i, len(calls), len(rec.toolMs))
			continue
		}
		for k, q := range calls {
			launch := time.Duration(q.launch)
			var planned time.Duration // the instant the launch was due
			if k == 0 {
				planned = time.Duration(q.planned)
				if want := scaled(rec.startMs); planned != want {
					t.Errorf("session %d planned at %s, want %s (its recorded start)", i, planned, want)
				}
			} else {
				ask, ok := asks[[2]int{i, k}]
				prevEnd := time.Duration(calls[k-1].end)
				if want := scaled(rec.toolMs[k]); !ok || ask.d != want || time.Duration(ask.at) < prevEnd {
					t.Errorf("session %d call %d: the replay asked to wait %s at %s (asked %v), the previous call ended at %s; want %s after it ended",
						i, k+1, ask.d, time.Duration(ask.at), ok, prevEnd, want)
				}
				planned = time.Duration(ask.at) + ask.d
			}
			t.Logf("session %d call %d: launched at %s, %s after it was due", i, k+1, launch, launch-planned)
			if launch < planned || launch > planned+lateMargin {
				t.Errorf("session %d call %d launched at %s, due at %s; want no earlier, and at most %s later", i, k+1, launch, planned, lateMargin)
			}
		}
	}
}

// checkSessionTimes holds a session's measured times to its recorded ones
// where the fake server is as fast as the trace's: neither the server's
// pauses nor the replay's waits end early, so its server and tool times
// are at least the recorded. What load adds on top is unbounded (a server
// stalled 9 s at load average 19 was seen): the caller logs it.
func checkSessionTimes(t *testing.T, s result.AgentSession) {
	t.Helper()
	if s.ServerMs < s.RecordedServerMs || s.ToolMs < s.RecordedToolMs || s.DurationMs < s.RecordedMs {
		t.Errorf("%s lasted %g ms (server %g, tools %g), want at least the recorded %g (%g, %g)", s.Session, s.DurationMs, s.ServerMs, s.ToolMs, s.RecordedMs, s.RecordedServerMs, s.RecordedToolMs)
	}
}
