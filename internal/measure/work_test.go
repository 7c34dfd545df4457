package measure

import (
	"encoding/json"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
	"github.com/slogate/slogate/internal/workload"
)

// TestPlanBody: a planned request on each endpoint and with and without
// ignore_eos, as sent.
func TestPlanBody(t *testing.T) {
	text := requests.Request{Text: "Why is the sky blue?", OutputTokens: 7, PrefixGroup: -1}
	ids := requests.Request{Tokens: []int{11, 12, 13}, OutputTokens: 5, PrefixGroup: -1}
	history := []openai.ChatCompletionMessage{{Role: "user", Content: "Hi"}, {Role: "assistant", Content: " a a"}}
	tests := []struct {
		name      string
		chat      bool
		r         requests.Request
		history   []openai.ChatCompletionMessage
		ignoreEOS bool
		salt      string
		want      string
		form      string // promptForm of a plan of r: what the report says was sent
	}{
		{name: "completions: dataset text raw, untemplated", r: text, ignoreEOS: true, form: "raw text on /v1/completions, untemplated",
			want: `{"model":"m","prompt":"Why is the sky blue?","max_tokens":7,"min_tokens":7,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}}`},
		{name: "completions: token IDs", r: ids, ignoreEOS: true, form: "token IDs on /v1/completions (no template)",
			want: `{"model":"m","prompt":[11,12,13],"max_tokens":5,"min_tokens":5,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}}`},
		{name: "chat: the prompt as one user message; the model may stop", chat: true, r: text, form: "one user message on /v1/chat/completions, templated by the server",
			want: `{"model":"m","messages":[{"role":"user","content":"Why is the sky blue?"}],"max_completion_tokens":7,"ignore_eos":false,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}}`},
		{name: "chat: a later turn after its history, salted", chat: true, history: history, salt: "s", form: "each conversation's messages so far on /v1/chat/completions, templated by the server",
			r:    requests.Request{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "More?"}}, OutputTokens: 3, Turn: 1},
			want: `{"model":"m","messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":" a a"},{"role":"user","content":"More?"}],"max_completion_tokens":3,"ignore_eos":false,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true},"cache_salt":"s"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(requestFields{model: "m", chat: tt.chat}.planBody(tt.r, tt.history, tt.ignoreEOS, tt.salt))
			if form := promptForm(requestFields{chat: tt.chat}, &requests.Schedule{Requests: []requests.Request{tt.r}}); form != tt.form {
				t.Errorf("prompt form %q, want %q", form, tt.form)
			}
			if got != tt.want {
				t.Errorf("body\n%s\nwant\n%s", got, tt.want)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("not JSON: %s", got)
			}
		})
	}
}

// TestPlanWork: a plan's requests grouped into conversations, the history
// built from the answers, a repeated conversation salted, the records'
// fields; and conversations refused on completions.
func TestPlanWork(t *testing.T) {
	turn := func(i, conv, turn, entry int, content string) requests.Request {
		return requests.Request{Index: i, Conversation: conv, Turn: turn, Entry: entry, PrefixGroup: -1, OutputTokens: 4,
			Messages: []openai.ChatCompletionMessage{{Role: "user", Content: content}}, PromptTokens: 10 + i}
	}
	plan := &requests.Schedule{Requests: []requests.Request{
		turn(0, 0, 0, 3, "q1"), turn(1, 0, 1, 3, "q2"),
		turn(2, 2, 0, 5, "r1"), turn(3, 2, 1, 5, "r2"),
		turn(4, 4, 0, 3, "q1"), turn(5, 4, 1, 3, "q2"), // entry 3 again
	}}
	w, err := newPlanWork(requestFields{model: "m", chat: true}, plan, true, func(r requests.Request) string { return "e" + string(rune('0'+r.Entry)) })
	if err != nil {
		t.Fatal(err)
	}
	if len(w.convs) != 3 || w.turns(0) != 2 || !w.wantsAnswers() || w.turnOf(1, 1) != 2 {
		t.Fatalf("%d conversations, %d turns, answers %v, turn %d; want 3, 2, true, 2", len(w.convs), w.turns(0), w.wantsAnswers(), w.turnOf(1, 1))
	}
	second := string(w.body(1, 1, []string{" a a a a"}))
	if !strings.Contains(second, `"messages":[{"role":"user","content":"r1"},{"role":"assistant","content":" a a a a"},{"role":"user","content":"r2"}]`) || strings.Contains(second, "cache_salt") {
		t.Errorf("second turn of unit 1: %s; want r1, the answer, r2 and no salt", second)
	}
	for _, i := range []int{2, 3} { // entry 3 sent again; unit 3 goes round the plan
		if b := string(w.body(i, 0, nil)); !strings.Contains(b, `"cache_salt":"slogate-conversation-`) {
			t.Errorf("unit %d repeats a conversation without a salt of its own: %s", i, b)
		}
	}
	var rec result.RequestRecord
	if n := w.describe(1, 1, &rec); n != 13 || rec.DatasetEntry != "e5" || rec.Conversation != "1" || rec.Turn != 2 || rec.PrefixGroup != "" {
		t.Errorf("record of unit 1 turn 2: %+v, prompt %d", rec, n)
	}
	if _, err := newPlanWork(requestFields{model: "m"}, plan, true, nil); err == nil || !strings.Contains(err.Error(), `measure.endpoint = "chat"`) {
		t.Errorf("conversations on completions: %v, want the chat endpoint asked for", err)
	}
}

// TestPlanWorkSentCounts: the requests a cell sent and how many of them
// sent a dataset entry's turn again, whether the plan repeats the entry or
// the cell goes round the plan.
func TestPlanWorkSentCounts(t *testing.T) {
	turn := func(i, turn, entry int) requests.Request {
		return requests.Request{Index: i, Turn: turn, Entry: entry, PrefixGroup: -1, OutputTokens: 4,
			Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "q"}}}
	}
	conversations := &requests.Schedule{Requests: []requests.Request{
		turn(0, 0, 3), turn(1, 1, 3), turn(2, 0, 5), turn(3, 1, 5),
		turn(4, 0, 3), turn(5, 1, 3), // entry 3 again in the plan
	}}
	singles := &requests.Schedule{Requests: []requests.Request{turn(0, 0, 1), turn(1, 0, 2)}}
	generated := &requests.Schedule{Requests: []requests.Request{turn(0, 0, -1), turn(1, 0, -1)}}
	tests := []struct {
		name          string
		plan          *requests.Schedule
		send          [][2]int // (unit, turn) in the order sent
		sent, repeats int
	}{
		{name: "first turns only", plan: conversations, send: [][2]int{{0, 0}, {1, 0}}, sent: 2},
		{name: "the plan's repeated conversation", plan: conversations, send: [][2]int{{0, 0}, {0, 1}, {1, 0}, {2, 0}, {2, 1}}, sent: 5, repeats: 2},
		{name: "round the plan", plan: conversations, send: [][2]int{{1, 0}, {1, 1}, {4, 0}}, sent: 3, repeats: 1},
		{name: "single requests round the plan", plan: singles, send: [][2]int{{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}}, sent: 5, repeats: 3},
		{name: "no dataset: no repeats counted", plan: generated, send: [][2]int{{0, 0}, {1, 0}, {2, 0}}, sent: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := newPlanWork(requestFields{model: "m", chat: true}, tt.plan, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.send {
				w.body(s[0], s[1], make([]string, s[1]))
			}
			if sent, repeats := w.sentCounts(); sent != tt.sent || repeats != tt.repeats {
				t.Errorf("sent %d, repeats %d; want %d, %d", sent, repeats, tt.sent, tt.repeats)
			}
		})
	}
}

// TestPlanWorkDialSalt: a dialled workload's requests carry the cell's
// salt and their lap through the plan, so that a request sent again past
// the plan's end hits only the shared tokens; without a dial no salt.
func TestPlanWorkDialSalt(t *testing.T) {
	plan := &requests.Schedule{Requests: []requests.Request{
		{Index: 0, Conversation: 0, Tokens: []int{1, 2, 3}, OutputTokens: 2, PrefixGroup: -1, Entry: -1},
		{Index: 1, Conversation: 1, Tokens: []int{1, 2, 4}, OutputTokens: 2, PrefixGroup: -1, Entry: -1},
	}}
	tests := []struct {
		name string
		salt string
		unit int
		want string // "" for no cache_salt
	}{
		{name: "no dial, first lap", unit: 0},
		{name: "no dial, second lap", unit: 3},
		{name: "dial, first lap", salt: "cell7", unit: 1, want: `"cache_salt":"cell7-0"`},
		{name: "dial, second lap", salt: "cell7", unit: 2, want: `"cache_salt":"cell7-1"`},
		{name: "dial, third lap", salt: "cell7", unit: 5, want: `"cache_salt":"cell7-2"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := newPlanWork(requestFields{model: "m"}, plan, true, nil)
			if err != nil {
				t.Fatal(err)
			}
			w.dialSalt = tt.salt
			b := string(w.body(tt.unit, 0, nil))
			if tt.want == "" && strings.Contains(b, "cache_salt") || tt.want != "" && !strings.Contains(b, tt.want) {
				t.Errorf("unit %d: %s; want %q", tt.unit, b, tt.want)
			}
		})
	}
}

// TestPrefixHitOffDial: a measured cell whose server-counted hit rate is
// more than PrefixHitDialBound from its dial warns with both figures; a
// cell within the bound, without a dial, without the counters or not
// measured does not.
func TestPrefixHitOffDial(t *testing.T) {
	tests := []struct {
		name     string
		dial     float64
		dialled  bool
		measured float64
		counted  bool
		status   vocab.Status
		warns    bool
	}{
		{name: "on the dial", dial: 0.5, dialled: true, measured: 0.48, counted: true, status: vocab.StatusValid},
		{name: "within the bound", dial: 0.5, dialled: true, measured: 0.41, counted: true, status: vocab.StatusValid},
		{name: "below: CPU blocks of 128 for a dial of 16", dial: 0.5, dialled: true, measured: 0.0625, counted: true, status: vocab.StatusValid, warns: true},
		{name: "above: cells hitting each other", dial: 0.2, dialled: true, measured: 0.66, counted: true, status: vocab.StatusQueued, warns: true},
		{name: "no dial", measured: 0.9, counted: true, status: vocab.StatusValid},
		{name: "no counters", dial: 0.5, dialled: true, status: vocab.StatusValid},
		{name: "an error cell", dial: 0.5, dialled: true, measured: 0, counted: true, status: vocab.StatusError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := result.TrafficCell{Status: tt.status}
			if tt.dialled {
				c.PrefixHitRateDial = &tt.dial
			}
			if tt.counted {
				c.SetValue(metric.Must(vocab.PhaseTraffic, metric.PrefixCacheHitRate), tt.measured)
			}
			w, ok := prefixHitOffDial(&c)
			if ok != tt.warns {
				t.Fatalf("warns %v, want %v (%+v)", ok, tt.warns, w)
			}
			if !ok {
				return
			}
			d, _ := w.Figure(warning.FigDialled)
			m, _ := w.Figure(warning.FigMeasured)
			b, _ := w.Figure(warning.FigBound)
			if w.Code != warning.PrefixHitOffDial || d != tt.dial || m != tt.measured || b != PrefixHitDialBound {
				t.Errorf("warning %s %v, want %s with dialled %v, measured %v, bound %v", w.Code, w.Figures, warning.PrefixHitOffDial, tt.dial, tt.measured, PrefixHitDialBound)
			}
		})
	}
}

// TestPrefixBlockMismatch: a dial in blocks that are not whole blocks of
// the server's stated KV block warns with both sizes; whole multiples, a
// server that states none, per-token servers and no dial do not.
func TestPrefixBlockMismatch(t *testing.T) {
	dial := func(block int) workload.Prefix { return workload.Prefix{HitRate: 0.5, Block: block} }
	tests := []struct {
		name    string
		prefix  workload.Prefix
		kvBlock int64
		warns   bool
	}{
		{name: "the GPU block on vLLM's CPU build", prefix: dial(16), kvBlock: 128, warns: true},
		{name: "a block not a multiple", prefix: dial(192), kvBlock: 128, warns: true},
		{name: "the server's block", prefix: dial(128), kvBlock: 128},
		{name: "a multiple of it", prefix: dial(1024), kvBlock: 16},
		{name: "no block stated", prefix: dial(16), kvBlock: 0},
		{name: "a per-token cache", prefix: dial(16), kvBlock: 1},
		{name: "no dial", prefix: workload.Prefix{Groups: 4, Tokens: 100}, kvBlock: 128},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, ok := prefixBlockMismatch(tt.prefix, tt.kvBlock)
			if ok != tt.warns {
				t.Fatalf("warns %v, want %v (%+v)", ok, tt.warns, w)
			}
			if !ok {
				return
			}
			b, _ := w.Figure(warning.FigBlock)
			s, _ := w.Figure(warning.FigServerBlock)
			if w.Code != warning.PrefixBlockMismatch || b != float64(tt.prefix.Block) || s != float64(tt.kvBlock) {
				t.Errorf("warning %s %v, want %s with block %d, server_block %d", w.Code, w.Figures, warning.PrefixBlockMismatch, tt.prefix.Block, tt.kvBlock)
			}
		})
	}
}
