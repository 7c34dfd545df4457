package measure

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/result"
)

// This file is what a traffic cell sends (docs/method.md#traffic): units
// of work, each one request or a conversation's turns sent one after the
// other, every turn once the previous one's answer is in.

// trafficWork is the requests of a traffic cell, by unit: unit i of a cell
// is the i-th launched (an arrival in an open loop, the next free slot in a
// closed one).
type trafficWork interface {
	// turns is how many requests unit i sends, in order.
	turns(i int) int
	// body encodes unit i's request of turn t; answers are the texts the
	// server answered the unit's earlier turns.
	body(i, t int, answers []string) []byte
	// wantsAnswers reports whether later turns need the answers' text.
	wantsAnswers() bool
	// describe fills what the record of unit i's turn t says of where the
	// request came from (dataset entry, conversation, turn, prefix group)
	// and its prompt length as planned.
	describe(i, t int, rec *result.RequestRecord) (promptTokens int64)
	// turnOf is the 1-based conversation turn of unit i's turn t (0: the
	// work has no conversations).
	turnOf(i, t int) int
	// exact is the output tokens unit i's turn t asks for with ignore_eos
	// (0: the model may stop sooner); a stream that finishes with fewer is
	// an error (errShortStream).
	exact(i, t int) int64
}

// bodiesWork is a context's prompt bodies: unit i is one request sending
// bodies[i mod len(bodies)].
type bodiesWork struct {
	bodies       [][]byte
	promptTokens int64
	exactTokens  int64 // the bodies' max_tokens = min_tokens with ignore_eos; 0: unchecked
}

func (w bodiesWork) turns(int) int                                  { return 1 }
func (w bodiesWork) body(i, _ int, _ []string) []byte               { return w.bodies[i%len(w.bodies)] }
func (w bodiesWork) wantsAnswers() bool                             { return false }
func (w bodiesWork) turnOf(int, int) int                            { return 0 }
func (w bodiesWork) describe(int, int, *result.RequestRecord) int64 { return w.promptTokens }
func (w bodiesWork) exact(int, int) int64                           { return w.exactTokens }

// planWork is a named workload's plan: unit i is conversation i mod the
// plan's conversations (a single request is a conversation of one turn),
// reused in order past the plan's end.
type planWork struct {
	f         requestFields
	ignoreEOS bool
	convs     [][]requests.Request // the plan's requests by conversation, turns in order
	repeat    []bool               // convs[c] repeats an earlier conversation of the plan (the same dataset entry)
	bodies    [][]byte             // single requests' bodies, encoded on first send (they never change)
	bodiesMu  sync.Mutex
	multi     bool // some conversation has more than one turn
	agent     bool // the plan is an agentic trace's sessions (requests.Request.Call)
	datasetID func(r requests.Request) string
	// dialSalt, set for a workload that dials its prefix-cache hit rate,
	// starts the cache_salt of every request: the cell's own, so that no
	// request hits what an earlier cell left, with the lap through the
	// plan after it, so that a request sent again past the plan's end
	// hits only the shared tokens, as the first lap's did.
	dialSalt string

	sentMu sync.Mutex
	sent   int            // requests sent (body calls)
	seen   map[[2]int]int // the dataset entries' turns sent: (entry, turn) → times
}

// newPlanWork groups plan's requests by conversation. datasetID names a
// request's dataset entry in its record ("" without a dataset).
func newPlanWork(f requestFields, plan *requests.Schedule, ignoreEOS bool, datasetID func(requests.Request) string) (*planWork, error) {
	w := &planWork{f: f, ignoreEOS: ignoreEOS, datasetID: datasetID}
	for _, r := range plan.Requests {
		if r.Turn == 0 || len(w.convs) == 0 {
			w.convs = append(w.convs, nil)
		}
		c := len(w.convs) - 1
		w.convs[c] = append(w.convs[c], r)
		w.multi = w.multi || r.Turn > 0
		w.agent = w.agent || r.Call != nil
	}
	if len(w.convs) == 0 {
		return nil, fmt.Errorf("the workload's plan has no request")
	}
	seen := map[int]bool{}
	for _, c := range w.convs {
		e := c[0].Entry
		w.repeat = append(w.repeat, e >= 0 && seen[e])
		seen[e] = true
	}
	if w.multi && !w.agent && !f.chat {
		return nil, fmt.Errorf("a conversation resends its history as chat messages: it needs measure.endpoint = \"chat\" (/v1/chat/completions)")
	}
	return w, nil
}

func (w *planWork) conv(i int) []requests.Request { return w.convs[i%len(w.convs)] }
func (w *planWork) turns(i int) int               { return len(w.conv(i)) }
func (w *planWork) wantsAnswers() bool            { return w.multi && !w.agent }

func (w *planWork) turnOf(i, t int) int {
	if !w.multi {
		return 0
	}
	return t + 1
}

// body is unit i's turn t. A conversation sent again (the dataset had
// fewer than the cell sends) carries a cache_salt of its own, the same on
// all its turns: its turns hit their own history, as a new user's would,
// not the cache an earlier send of the same words left (which would make
// its first turn warm and hide what later turns gain).
func (w *planWork) body(i, t int, answers []string) []byte {
	w.count(w.conv(i)[t])
	if w.agent {
		// A call's prompt holds its session's history as recorded.
		return w.f.planBody(w.conv(i)[t], nil, w.ignoreEOS, "")
	}
	if !w.multi {
		k := i % len(w.convs)
		if w.dialSalt != "" && i >= len(w.convs) {
			return w.f.planBody(w.convs[k][0], nil, w.ignoreEOS, w.dialSalt+"-"+strconv.Itoa(i/len(w.convs)))
		}
		w.bodiesMu.Lock()
		defer w.bodiesMu.Unlock()
		if w.bodies == nil {
			w.bodies = make([][]byte, len(w.convs))
		}
		if w.bodies[k] == nil {
			salt := ""
			if w.dialSalt != "" {
				salt = w.dialSalt + "-0"
			}
			w.bodies[k] = w.f.planBody(w.convs[k][0], nil, w.ignoreEOS, salt)
		}
		return w.bodies[k]
	}
	c := w.conv(i)
	var history []openai.ChatCompletionMessage
	for k := 0; k < t; k++ {
		history = append(history, c[k].Messages...)
		history = append(history, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: answers[k]})
	}
	salt := ""
	if w.multi && (i >= len(w.convs) || w.repeat[i]) {
		salt = "slogate-conversation-" + strconv.Itoa(i)
	}
	return w.f.planBody(c[t], history, w.ignoreEOS, salt)
}

// count records that r is being sent.
func (w *planWork) count(r requests.Request) {
	w.sentMu.Lock()
	defer w.sentMu.Unlock()
	w.sent++
	if r.Entry >= 0 {
		if w.seen == nil {
			w.seen = map[[2]int]int{}
		}
		w.seen[[2]int{r.Entry, r.Turn}]++
	}
}

// sentCounts is how many requests were sent, and how many of them sent a
// dataset entry's turn sent before (a conversation sent again counts each
// of its turns).
func (w *planWork) sentCounts() (sent, repeats int) {
	w.sentMu.Lock()
	defer w.sentMu.Unlock()
	for _, n := range w.seen {
		repeats += n - 1
	}
	return w.sent, repeats
}

// exact is the request's planned output with ignore_eos, 0 without.
func (w *planWork) exact(i, t int) int64 {
	if !w.ignoreEOS {
		return 0
	}
	return int64(w.conv(i)[t].OutputTokens)
}

func (w *planWork) describe(i, t int, rec *result.RequestRecord) int64 {
	r := w.conv(i)[t]
	if w.datasetID != nil {
		rec.DatasetEntry = w.datasetID(r)
	}
	if w.multi {
		rec.Conversation = strconv.Itoa(i)
		rec.Turn = t + 1
	}
	if r.PrefixGroup >= 0 {
		rec.PrefixGroup = strconv.Itoa(r.PrefixGroup)
	}
	return int64(r.PromptTokens)
}

// promptForm says how planBody sends the plan's prompts, for the cell's
// record and report (docs/method.md#named-workloads-in-traffic): on chat
// the server templates them, on completions text goes raw and untemplated
// and token IDs as they are.
func promptForm(f requestFields, plan *requests.Schedule) string {
	conversations := slices.ContainsFunc(plan.Requests, func(r requests.Request) bool { return r.Turn > 0 })
	agent := len(plan.Requests) > 0 && plan.Requests[0].Call != nil
	switch {
	case agent && f.chat:
		return "each call's recorded prompt as one user message on /v1/chat/completions, templated by the server"
	case f.chat && conversations:
		return "each conversation's messages so far on /v1/chat/completions, templated by the server"
	case f.chat:
		return "one user message on /v1/chat/completions, templated by the server"
	case len(plan.Requests) > 0 && plan.Requests[0].Tokens != nil:
		return "token IDs on /v1/completions (no template)"
	}
	return "raw text on /v1/completions, untemplated"
}

// planBody encodes a planned request: on chat its messages after history
// (the conversation so far, the server's answers included), one user
// message holding the prompt for a dataset's prompt; on completions its
// token IDs, or its text raw and untemplated (as vLLM's ShareGPT benchmark
// sends a dataset prompt). max_tokens is the planned output length; with
// ignoreEOS the request asks the server to ignore EOS and sets min_tokens
// to the same length, so the output is exactly that long; without, the
// model may stop sooner and the output length is what the server reports.
// No cache_salt but a repeated conversation's (body): requests sharing a
// prefix share its cached blocks, as the workload means them to.
func (f requestFields) planBody(r requests.Request, history []openai.ChatCompletionMessage, ignoreEOS bool, salt string) []byte {
	b := make([]byte, 0, len(r.Tokens)*7+len(r.Text)+len(f.extra)+512)
	b = append(b, `{"model":`...)
	b = strconv.AppendQuote(b, f.model)
	switch {
	case f.chat:
		msgs := append(history, r.Messages...)
		if len(r.Messages) == 0 {
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: r.Text})
		}
		raw, err := json.Marshal(msgs)
		if err != nil { // plain string messages always encode
			panic(err)
		}
		b = append(b, `,"messages":`...)
		b = append(b, raw...)
		b = append(b, `,"max_completion_tokens":`...)
	case r.Tokens != nil:
		b = appendTokenIDs(append(b, `,"prompt":`...), r.Tokens)
		b = append(b, `,"max_tokens":`...)
	default:
		raw, _ := json.Marshal(r.Text) // a string always encodes
		b = append(b, `,"prompt":`...)
		b = append(b, raw...)
		b = append(b, `,"max_tokens":`...)
	}
	b = strconv.AppendInt(b, int64(r.OutputTokens), 10)
	if ignoreEOS {
		b = append(b, `,"min_tokens":`...)
		b = strconv.AppendInt(b, int64(r.OutputTokens), 10)
		b = append(b, `,"ignore_eos":true`...)
	} else {
		b = append(b, `,"ignore_eos":false`...)
	}
	return f.appendTail(b, salt)
}

// chunkDetails is what a traffic request reads of a chunk beyond sse.Chunk:
// the generated text (a conversation's answer) and the final usage's
// cached prompt tokens. Decoded with encoding/json, only for the chunks
// that need it.
type chunkDetails struct {
	Choices []struct {
		Text  string `json:"text"`
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		Details *struct {
			CachedTokens *int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

// text is the chunk's generated text.
func (d *chunkDetails) text() string {
	s := ""
	for _, c := range d.Choices {
		s += c.Text + c.Delta.Content
	}
	return s
}

// cached is the final usage's prompt_tokens_details.cached_tokens, if sent.
func (d *chunkDetails) cached() (int64, bool) {
	if d.Usage == nil || d.Usage.Details == nil || d.Usage.Details.CachedTokens == nil {
		return 0, false
	}
	return *d.Usage.Details.CachedTokens, true
}
