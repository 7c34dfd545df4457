package measure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
	"github.com/slogate/slogate/internal/workload"
)

// workloadOptions is the spec's workload block, which the workload
// package takes as it is.
func workloadOptions(w *spec.Workload) workload.Options {
	if w == nil { // a Spec built without Load (tests): the default workload
		return workload.Options{Prompt: workload.Article, Seed: spec.DefaultSeed}
	}
	return w.Options
}

// WorkloadRecord is what results.json records of the spec's workload
// (docs/method.md#workload).
func WorkloadRecord(w *spec.Workload) *workload.Record {
	rec := requests.NewBuilder(nil, workloadOptions(w)).Record() // Record asks the tokenizer nothing
	return &rec
}

// requestFields are what every generation request of a run carries besides
// its prompt and lengths: the model, the endpoint's shape, and the
// workload's sampling fields and chat_template_kwargs, encoded once.
type requestFields struct {
	model string
	chat  bool   // /v1/chat/completions: messages and max_completion_tokens
	extra []byte // `,"temperature":0.6,…` and on chat `,"chat_template_kwargs":{…}`
	// uncached is the engine's member that makes a request evaluate its
	// whole prompt (engine.Engine.UncachedField: llama-server's
	// "cache_prompt":false), "" where a fresh cache_salt does.
	uncached string
}

// newRequestFields encodes w's sampling fields exactly as written (sorted
// by name; a field the spec leaves out is not sent, so the server's default
// applies) and, on the chat endpoint, its chat_template_kwargs.
func newRequestFields(model string, chat bool, w *spec.Workload) requestFields {
	f := requestFields{model: model, chat: chat}
	if w == nil {
		return f
	}
	keys := make([]string, 0, len(w.Sampling))
	for k := range w.Sampling {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		f.extra = append(f.extra, ',')
		f.extra = strconv.AppendQuote(f.extra, k)
		f.extra = append(f.extra, ':')
		f.extra = append(f.extra, w.Sampling[k].String()...)
	}
	if len(w.LogitBias) > 0 {
		b, err := json.Marshal(w.LogitBias)
		if err != nil { // token IDs to json.Numbers: always encodes
			panic(err)
		}
		f.extra = append(f.extra, `,"logit_bias":`...)
		f.extra = append(f.extra, b...)
	}
	if chat && w.ChatTemplateKwargs != nil {
		b, err := json.Marshal(w.ChatTemplateKwargs)
		if err != nil { // decoded from JSON-compatible HCL values: always encodes
			panic(err)
		}
		f.extra = append(f.extra, `,"chat_template_kwargs":`...)
		f.extra = append(f.extra, b...)
	}
	return f
}

// body encodes a streaming request for prompt p: its token IDs on
// /v1/completions (for an article, the chat template's rendering exactly as
// /tokenize returned it: no second template pass), its messages on
// /v1/chat/completions. A body is built once per prompt and reused for
// every request with that prompt. go-openai's request types are not used:
// they have no ignore_eos, min_tokens, continuous_usage_stats or
// cache_salt, drop zero values (omitempty), and would re-encode a
// 250K-token prompt for every request.
func (f requestFields) body(p requests.Prompt, maxTokens, minTokens int, salt string) []byte {
	b := make([]byte, 0, len(p.Tokens)*7+len(f.extra)+512)
	b = append(b, `{"model":`...)
	b = strconv.AppendQuote(b, f.model)
	if f.chat {
		msgs, err := json.Marshal(p.Messages)
		if err != nil { // plain string messages always encode
			panic(err)
		}
		b = append(b, `,"messages":`...)
		b = append(b, msgs...)
		b = append(b, `,"max_completion_tokens":`...)
	} else {
		b = appendTokenIDs(append(b, `,"prompt":`...), p.Tokens)
		b = append(b, `,"max_tokens":`...)
	}
	b = strconv.AppendInt(b, int64(maxTokens), 10)
	if minTokens > 0 {
		b = append(b, `,"min_tokens":`...)
		b = strconv.AppendInt(b, int64(minTokens), 10)
	}
	b = append(b, `,"ignore_eos":true`...)
	return f.appendTail(b, salt)
}

// coldBody is body for a cold prefill request: also the engine's member
// that keeps the server from reusing a cached prefix, where a fresh
// cache_salt does not (llama-server's "cache_prompt":false).
func (f requestFields) coldBody(p requests.Prompt, salt string) []byte {
	b := f.body(p, 1, 0, salt)
	if f.uncached == "" {
		return b
	}
	b = append(b[:len(b)-1], ',')
	b = append(b, f.uncached...)
	return append(b, '}')
}

// appendTokenIDs appends ids as a JSON array of integers.
func appendTokenIDs(b []byte, ids []int) []byte {
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(id), 10)
	}
	return append(b, ']')
}

// appendTail ends a generation request's body the same way on every
// endpoint: the workload's sampling fields, streaming with usage on every
// chunk, and the cell's cache_salt when it has one.
func (f requestFields) appendTail(b []byte, salt string) []byte {
	b = append(b, f.extra...)
	b = append(b, `,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}`...)
	if salt != "" {
		b = append(b, `,"cache_salt":`...)
		b = strconv.AppendQuote(b, salt)
	}
	return append(b, '}')
}

// Prompts builds a run's prompts over the server's POST /tokenize and
// encodes its generation requests: on the endpoint measure.endpoint names,
// with the workload's fields.
type Prompts struct {
	chat      bool // measure.endpoint = "chat": requests send messages, not token IDs
	fields    requestFields
	tokenizer *lifecycle.Tokenizer
	builder   *requests.Builder
	// planners are the named workloads' planners, made on first use and
	// kept, so a traffic block's next cell reuses the requests planned.
	planners map[*spec.Workload]*requests.Scheduler
}

// plan plans cfg's requests of named workload w (cfg.Endpoint is the
// run's).
func (p *Prompts) plan(ctx context.Context, w *spec.Workload, cfg requests.ScheduleConfig) (*requests.Schedule, error) {
	pl, ok := p.planners[w]
	if !ok {
		if p.planners == nil {
			p.planners = map[*spec.Workload]*requests.Scheduler{}
		}
		pl = requests.NewScheduler(p.tokenizer, w.Options, w.Dataset)
		p.planners[w] = pl
	}
	cfg.Endpoint = "completions"
	if p.chat {
		cfg.Endpoint = "chat"
	}
	return pl.Schedule(ctx, cfg)
}

// fieldsFor is the request fields of named workload w: the run's model
// and endpoint, w's sampling fields and chat_template_kwargs.
func (p *Prompts) fieldsFor(w *spec.Workload) requestFields {
	f := newRequestFields(p.fields.model, p.chat, w)
	f.uncached = p.fields.uncached
	return f
}

// NewPrompts prepares the run's prompt builder over c's POST /tokenize for
// workload w (chat: measure.endpoint = "chat") and checks that /tokenize
// answers the way the workload needs (an article renders through the chat
// template; random prompts learn the vocabulary from plain text). It
// returns the max_model_len /tokenize reported (0 when it did not say).
func NewPrompts(ctx context.Context, c *lifecycle.Client, w *spec.Workload, chat bool) (*Prompts, int, error) {
	opts := workloadOptions(w)
	tok := lifecycle.NewTokenizer(c)
	p := &Prompts{chat: chat, fields: newRequestFields(c.Model(), chat, w), tokenizer: tok, builder: requests.NewBuilder(tok, opts)}
	p.fields.uncached = engine.UncachedField(c.Engine())
	var err error
	if opts.Prompt == workload.Random {
		_, err = tok.TokenizeText(ctx, "Hello")
	} else {
		_, err = tok.TokenizeChat(ctx, []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Hello"}}, true, opts.ChatTemplateKwargs)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, context.Cause(ctx)
		}
		var se *lifecycle.StatusError
		if errors.As(err, &se) && se.Code == 404 {
			err = errors.New("the server does not serve it")
		}
		if opts.Prompt == workload.Random {
			return nil, 0, exit.Infraf("workload prompt = \"random\" learns the vocabulary's range through POST /tokenize, which failed at %s: %v", c.Base(), err)
		}
		return nil, 0, exit.Infraf("workload prompt = \"article\" sizes its prompts through POST /tokenize with messages (the server's chat template), which failed at %s: %v; a server without a chat template can be measured with workload { prompt = \"random\" } on measure.endpoint = \"completions\"", c.Base(), err)
	}
	return p, tok.MaxModelLen, nil
}

// cappedPromptTokens is the prompt length of a context: ctxLen, capped one
// token below max_model_len so that the prefill request can still emit its
// token.
func (m *Meter) cappedPromptTokens(ctxLen int) int {
	if m.MaxModelLen > 0 && ctxLen > m.MaxModelLen-1 {
		return m.MaxModelLen - 1
	}
	return ctxLen
}

// ContextPrompts are the prompts of one context, by stream (one when the
// workload is not distinct), and their decode request bodies.
type ContextPrompts struct {
	ctxLen  int
	Prompts []requests.Prompt
	// Warnings say how the prompts differ from the context (the workload's
	// prompt warnings, by stream: their codes and figures, the prompt
	// named in the summary); cells measured with them
	// carry them too.
	Warnings []warning.Warning
	bodies   [][]byte // decode bodies by stream, built on first use
}

// BuildPrompts builds the prompts of a context for streams streams
// (requests.Builder.Prompts: one per stream when distinct) at the capped
// length, logs what building them cost, and warns when they differ from
// the context.
func (m *Meter) BuildPrompts(ctx context.Context, ctxLen, streams int) (*ContextPrompts, error) {
	n := m.cappedPromptTokens(ctxLen)
	tok := m.Prompts.tokenizer
	calls, bytes, t0 := tok.Calls, tok.Bytes, time.Now()
	ps, err := m.Prompts.builder.Prompts(ctx, n, streams)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		// A server that exited is the cause, not the prompt it could not
		// size.
		if m.Server != nil {
			if gone := m.Server.Gone(ctx); gone != nil {
				return nil, gone
			}
		}
		return nil, exit.Infraf("building the prompts of context %s: %v", vocab.FormatTokens(ctxLen), err)
	}
	m.note(event.PromptsBuilt{Context: ctxLen, Prompts: len(ps), Tokens: n, Took: time.Since(t0), TokenizeCalls: tok.Calls - calls, Exchanged: tok.Bytes - bytes})
	cp := &ContextPrompts{ctxLen: ctxLen, Prompts: ps}
	for i, p := range ps {
		for _, w := range p.Warnings {
			at := "prompt at " + vocab.FormatTokens(ctxLen)
			if len(ps) > 1 {
				at = fmt.Sprintf("prompt at %s, stream %d", vocab.FormatTokens(ctxLen), i+1)
			}
			pw := warning.New(w.Code, at, w.String(), w.Figures)
			m.warn(pw)
			cp.Warnings = append(cp.Warnings, pw)
		}
	}
	return cp, nil
}

// DecodeBodies returns the decode request bodies of the context's prompts
// (max_tokens = min_tokens = max_output, the context's cache_salt), encoded
// on first use and then reused by every cell of the context.
func (m *Meter) DecodeBodies(cp *ContextPrompts, salt string) [][]byte {
	if cp.bodies == nil {
		mo := m.MaxOutput
		for _, p := range cp.Prompts {
			cp.bodies = append(cp.bodies, m.Prompts.fields.body(p, mo, mo, salt))
		}
	}
	return cp.bodies
}

// Path is the streaming endpoint measure.endpoint names.
func (p *Prompts) Path() string {
	if p.chat {
		return "/v1/chat/completions"
	}
	return "/v1/completions"
}
