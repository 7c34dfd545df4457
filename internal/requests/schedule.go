package requests

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	openai "github.com/sashabaranov/go-openai"

	"github.com/slogate/slogate/internal/warning"
	"github.com/slogate/slogate/internal/workload"
)

// ScheduleConfig is what a schedule needs besides the workload.
type ScheduleConfig struct {
	// Requests is how many requests to plan (≥ 1). Request i of a schedule
	// does not depend on Requests: a longer schedule extends a shorter one.
	Requests int
	// Context is the prompt length of Random and Article prompts when the
	// workload sets no input_tokens (a traffic block's context).
	Context int
	// MaxOutput is the output length of generated prompts when the
	// workload sets no output_tokens (measure.max_output).
	MaxOutput int
	// Endpoint is the run's, "chat" or "completions". No plan differs by it
	// today: an article is sized through the chat template on both (the
	// completions endpoint sends the rendered token IDs), a dataset prompt
	// is counted as text on both (as vLLM's benchmark counts it).
	Endpoint string
	// MaxModelLen is the server's max_model_len (0: unknown). A request
	// whose prompt and output exceed it is an error naming its dataset
	// line, before any request is sent.
	MaxModelLen int
}

// Request is one planned request.
type Request struct {
	// Index is the request's place in the schedule (0-based).
	Index int
	// Text is the prompt as text (dataset prompts, and a shared prefix
	// followed by one): what /v1/completions sends, raw and untemplated as
	// vLLM's ShareGPT benchmark sends it, when Tokens is nil. "" for
	// token-ID prompts.
	Text string
	// Tokens are the prompt's token IDs for /v1/completions (random
	// prompts; article prompts as the chat template rendered them; a
	// dataset prompt behind a shared prefix, so the prefix is the same
	// tokens on every request of its group); nil when Text is sent.
	Tokens []int
	// Messages is the prompt for /v1/chat/completions: one user message
	// holding the prompt, or a messages dataset's turn. For a turn after a
	// conversation's first (Turn > 0) it holds only the turn's new
	// messages: the caller sends the conversation's history before them,
	// the server's own answers included. Nil for random prompts.
	Messages []openai.ChatCompletionMessage
	// PromptTokens is the prompt's length in tokens as planned: exact for
	// generated prompts (the server's /tokenize decided it), the text's
	// count for dataset prompts (without special tokens or chat template);
	// for Turn > 0 only the new messages' text. The server's usage reports
	// what it fed the model.
	PromptTokens int
	// OutputTokens is the output length asked: max_tokens, and min_tokens
	// too when the workload ignores EOS.
	OutputTokens int
	// ReferenceTokens is the token count of the dataset's reference output
	// (ShareGPT's second turn, the assistant message after a turn), 0 when
	// there is none or it was not needed.
	ReferenceTokens int
	// Entry is the dataset entry's index in file order (Entry.Index) and
	// Line its line; -1 and 0 without a dataset.
	Entry, Line int
	// PrefixGroup is the shared prefix the prompt begins with (0-based),
	// -1 without prefixes.
	PrefixGroup int
	// Conversation identifies the request's conversation: the Index of
	// its first turn. Turn is the request's turn within it (0-based). A
	// single-turn request is its own conversation: Conversation = Index,
	// Turn = 0. A schedule lists a
	// conversation's turns in order, one conversation after the other; a
	// turn is sent only after the previous turn's answer.
	Conversation, Turn int
	// Call is an agentic trace's call (its session's times); nil
	// otherwise. Its prompt holds the session's history as recorded, so
	// it is sent alone, without the server's answers before it.
	Call *AgentCall
}

// Dropped counts the dataset entries left out of a schedule, by reason.
type Dropped struct {
	// TooFewTurns are ShareGPT entries without two conversation turns,
	// dropped while reading (Dataset.Skipped).
	TooFewTurns int
	// The is_valid_sequence reasons, each entry counted once under the
	// first that applies in this order.
	PromptTooShort, OutputTooShort, PromptTooLong, TotalTooLong int
	// ZeroLength are trace lines without input or output tokens, left out
	// while reading (Dataset.ZeroLength); OverLength trace requests longer
	// than the server's max_model_len, dropped by drop_over_length.
	ZeroLength, OverLength int
}

// Total is the number of entries dropped.
func (d Dropped) Total() int {
	return d.TooFewTurns + d.PromptTooShort + d.OutputTooShort + d.PromptTooLong + d.TotalTooLong + d.ZeroLength + d.OverLength
}

// Schedule is a workload's planned requests.
type Schedule struct {
	Requests []Request
	// Dropped counts the dataset entries the filter left out, among the
	// entries examined (a schedule examines entries in shuffled order until it
	// has enough, as vLLM does, and all of them when it has too few).
	Dropped Dropped
	// Examined is how many dataset entries were examined; Usable how many
	// of them were kept (Examined = Usable + the filter's drops).
	Examined, Usable int
	// Reused is how many requests send an entry already sent earlier in
	// the schedule: there were fewer usable entries than requests, and the
	// plan reuses them in order (Warnings says so).
	Reused int
	// Warnings say how the schedule differs from what was asked
	// (warning.DatasetReused of the requests planned, worded so; a
	// prompt's warnings, request by request).
	Warnings []warning.Warning
	// DatasetSHA256 is the hex SHA-256 of the dataset file the requests
	// were drawn from, as read (workload.Dataset.SHA256); "" without one.
	DatasetSHA256 string
	// Arrivals are a trace's arrival times, request by request, in seconds
	// since the replay's start (its slice, at its speed); nil when the
	// workload is no trace. TraceSHA256 is the hex SHA-256 of what the
	// replay sends: each request's time, lengths and prefix blocks, and
	// the seed ("" without a trace), so two replays of one trace and seed
	// have the same.
	Arrivals    []float64
	TraceSHA256 string

	reuse reuseInfo // what SentReuseWarning says of the dataset
}

// reuseInfo is what the reuse warning names of a schedule's dataset.
type reuseInfo struct {
	path    string
	units   int // usable entries, or turns of a messages dataset; 0: no dataset
	turns   bool
	dropped int
}

// reuseWarning is the warning.DatasetReused of requests requests, repeats
// of them repeating an earlier one; sent says they were sent (a cell's
// count, warm-up and cool-down requests included), not planned.
func (r reuseInfo) reuseWarning(requests, repeats int, sent bool) warning.Warning {
	unit := plural(r.units, "entry", "entries", r.turns)
	summary := fmt.Sprintf("%s has %d usable %s for %d planned requests (%d dropped by the filter)", r.path, r.units, unit, requests, r.dropped)
	detail := fmt.Sprintf("the %d are reused in order, so %d planned requests repeat an earlier one", r.units, repeats)
	if sent {
		summary = fmt.Sprintf("%s has %d usable %s for the %d requests the cell sent, warm-up and cool-down ones included (%d dropped by the filter)", r.path, r.units, unit, requests, r.dropped)
		detail = fmt.Sprintf("the %d are reused in order, so %d requests repeated an earlier one", r.units, repeats)
	}
	return warning.New(warning.DatasetReused, summary, detail,
		map[string]float64{warning.FigKept: float64(r.units), warning.FigRequests: float64(requests),
			warning.FigDropped: float64(r.dropped), warning.FigReused: float64(repeats)})
}

// SentReuseWarning is the warning.DatasetReused of a cell that sent sent
// of the schedule's requests (warm-up and cool-down ones included),
// repeats of them sending a dataset entry (a conversation's turn) the
// cell had sent already; false when none repeated or the schedule has no dataset. A
// cell reports it in place of the planned one Warnings holds: a cell
// stops sending when its window closes, far short of the plan at times.
func (s *Schedule) SentReuseWarning(sent, repeats int) (warning.Warning, bool) {
	if s.reuse.units == 0 || repeats <= 0 {
		return warning.Warning{}, false
	}
	return s.reuse.reuseWarning(sent, repeats, true), true
}

// Scheduler plans the requests of one named workload against one server's
// tokenizer. It keeps the dataset, the token counts and the prompts it
// has built between calls, so a second Schedule (a traffic block's next cell)
// costs no Tokenizer call for the requests already planned. It is not safe
// for concurrent use.
type Scheduler struct {
	opts workload.Options
	tok  Tokenizer
	b    *Builder
	data *workload.Dataset

	order []int       // dataset entry positions in shuffled order
	next  int         // the next position of order to examine
	kept  []keptEntry // the usable entries, in shuffled order
	turns []turnRef   // messages datasets: the kept conversations' turns, flattened
	drops Dropped

	prefixText map[int]prefixRef
	articles   map[articleKey]Prompt
	blocks     map[int64][]int // a trace's prefix blocks by ID
	trace      *tracePlan      // a trace's plan, made once
	warnings   []warning.Warning
	dialBase   []int // the dial's shared token IDs, as long as needed so far
	// sessionStarts are an agentic trace's sessions' starts (s), in the
	// order planned (planAgent).
	sessionStarts []float64
	// agentCalls are the calls of the sessions an agentic trace's slice
	// selects, agentOverLength those of the sessions drop_over_length left
	// out (planAgent).
	agentCalls, agentOverLength int
}

// keptEntry is a dataset entry the filter kept, with its counts.
type keptEntry struct {
	e         *workload.Entry
	prompt    int   // prompt tokens (text)
	reference int   // reference tokens, when counted
	ids       []int // prompt IDs, kept only behind a shared prefix
}

// turnRef is turn t of kept conversation k.
type turnRef struct{ k, t int }

// prefixRef is one shared prefix: its text and IDs.
type prefixRef struct {
	text string
	ids  []int
}

type articleKey struct{ n, group, reader int }

// NewScheduler returns a Scheduler for opts over tok. data is the workload's
// dataset when the caller has read it already (as spec validation does);
// nil reads opts.DatasetPath at the first Schedule.
func NewScheduler(tok Tokenizer, opts workload.Options, data *workload.Dataset) *Scheduler {
	if opts.Filter == (workload.Filter{}) {
		opts.Filter = workload.DefaultFilter
	}
	return &Scheduler{opts: opts, tok: tok, b: NewBuilder(tok, opts), data: data,
		prefixText: map[int]prefixRef{}, articles: map[articleKey]Prompt{}}
}

// RNG streams of a request: each draw has its own, seeded by the workload's
// seed and the request's index, so request i is the same in every schedule.
const (
	streamInput = iota + 1
	streamOutput
	streamTokens
	streamShuffle
	streamPrefix
	streamDial
)

func (p *Scheduler) rng(i, stream int) *rand.Rand {
	return rand.New(rand.NewPCG(p.opts.Seed, uint64(i)<<4|uint64(stream)))
}

// Schedule returns cfg.Requests requests. An error says what cannot be planned:
// a dataset that cannot be read (a *DatasetError), a dataset none of whose
// entries passes the filter, a request longer than cfg.MaxModelLen (naming
// the dataset line), a tokenizer failure.
func (p *Scheduler) Schedule(ctx context.Context, cfg ScheduleConfig) (*Schedule, error) {
	if cfg.Requests < 1 {
		return nil, fmt.Errorf("a plan needs at least one request; asked for %d", cfg.Requests)
	}
	var reqs []Request
	var err error
	var tp *tracePlan
	if p.opts.Prompt == workload.DatasetPrompt && p.data == nil {
		// Read first: a detected format decides how the file is planned.
		if err := p.load(); err != nil {
			return nil, err
		}
	}
	switch {
	case p.isAgent():
		reqs, err = p.planAgent(ctx, cfg)
	case p.isTrace():
		tp, err = p.planTrace(ctx, cfg)
		if tp != nil {
			reqs = tp.reqs
		}
	case p.opts.Prompt == workload.DatasetPrompt:
		reqs, err = p.planDataset(ctx, cfg)
	default:
		reqs, err = p.planGenerated(ctx, cfg)
	}
	if err != nil {
		return nil, err
	}
	plan := &Schedule{Requests: reqs, Dropped: p.drops, Warnings: append([]warning.Warning(nil), p.warnings...)}
	if p.data != nil {
		plan.Dropped.TooFewTurns = p.data.Skipped
		plan.Examined, plan.Usable = p.next, len(p.kept)
		plan.DatasetSHA256 = p.data.SHA256
		units := len(p.kept)
		switch {
		case p.data.Format == workload.FormatMessages:
			units = len(p.turns)
		case p.data.Format == workload.FormatCopilotAgent:
			units = len(reqs) // every call once: a trace is not reused
			plan.Arrivals, plan.TraceSHA256 = p.sessionStarts, agentSHA256(reqs, p.opts.Seed)
			plan.Examined, plan.Usable, plan.Dropped.OverLength = p.agentCalls, len(reqs), p.agentOverLength
		case tp != nil:
			units, plan.Examined, plan.Usable = len(reqs), tp.examined, len(reqs)
			plan.Dropped.ZeroLength, plan.Dropped.OverLength = p.data.ZeroLength, tp.overLength
			plan.Arrivals, plan.TraceSHA256 = tp.arrivals, tp.sha256
		}
		plan.reuse = reuseInfo{path: p.data.Path, units: units, turns: p.data.Format == workload.FormatMessages, dropped: plan.Dropped.Total()}
		if units < len(reqs) {
			plan.Reused = len(reqs) - units
			plan.Warnings = append(plan.Warnings, plan.reuse.reuseWarning(len(reqs), plan.Reused, false))
		}
	}
	return plan, nil
}

func plural(n int, one, many string, turns bool) string {
	if turns {
		one, many = "turn", "turns"
	}
	if n == 1 {
		return one
	}
	return many
}

// load reads the dataset and shuffles its order once.
func (p *Scheduler) load() error {
	if p.data == nil {
		d, err := ReadDataset(p.opts.DatasetPath, p.opts.DatasetFormat)
		if err != nil {
			return err
		}
		p.data = d
	}
	if p.order == nil {
		p.order = make([]int, len(p.data.Entries))
		for i := range p.order {
			p.order[i] = i
		}
		rand.New(rand.NewPCG(p.opts.Seed, streamShuffle)).Shuffle(len(p.order), func(i, j int) {
			p.order[i], p.order[j] = p.order[j], p.order[i]
		})
	}
	return nil
}

// units is how many requests the kept entries give before reuse.
func (p *Scheduler) units() int {
	if p.data.Format == workload.FormatMessages {
		return len(p.turns)
	}
	return len(p.kept)
}

// examine counts the next entry in shuffled order and keeps it when the
// filter does.
func (p *Scheduler) examine(ctx context.Context, cfg ScheduleConfig) error {
	e := &p.data.Entries[p.order[p.next]]
	p.next++
	k := keptEntry{e: e}
	if p.data.Format == workload.FormatMessages {
		// Conversations are not filtered (vLLM's multi-turn benchmark
		// sends them as they are); each user message is a turn.
		t := 0
		for _, m := range e.Messages {
			if m.Role == "user" {
				if p.opts.Turns > 0 && t >= p.opts.Turns {
					break
				}
				p.turns = append(p.turns, turnRef{len(p.kept), t})
				t++
			}
		}
		p.kept = append(p.kept, k)
		return nil
	}
	ids, err := p.tok.TokenizeText(ctx, e.Prompt)
	if err != nil {
		return fmt.Errorf("counting the tokens of %s:%d: %w", p.data.Path, e.Line, err)
	}
	k.prompt = len(ids)
	if p.opts.Prefix.IsSet() {
		k.ids = ids
	}
	fixedOutput := p.opts.OutputTokens.IsSet()
	if p.data.Format == workload.FormatShareGPT {
		out := 0
		if !fixedOutput {
			ref, err := p.tok.TokenizeText(ctx, e.Reference)
			if err != nil {
				return fmt.Errorf("counting the tokens of %s:%d: %w", p.data.Path, e.Line, err)
			}
			k.reference, out = len(ref), len(ref)
		} else {
			out = p.opts.OutputTokens.Max
		}
		f := p.opts.Filter
		switch {
		case k.prompt < f.MinPromptTokens:
			p.drops.PromptTooShort++
			return nil
		case !fixedOutput && out < f.MinOutputTokens:
			p.drops.OutputTooShort++
			return nil
		case k.prompt > f.MaxPromptTokens:
			p.drops.PromptTooLong++
			return nil
		case k.prompt+out > f.MaxTotalTokens:
			p.drops.TotalTooLong++
			return nil
		}
	}
	p.kept = append(p.kept, k)
	return nil
}

// planDataset plans dataset requests: the kept entries in shuffled order,
// reused in order when there are fewer than requests.
func (p *Scheduler) planDataset(ctx context.Context, cfg ScheduleConfig) ([]Request, error) {
	if err := p.load(); err != nil {
		return nil, err
	}
	for p.units() < cfg.Requests && p.next < len(p.order) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := p.examine(ctx, cfg); err != nil {
			return nil, err
		}
	}
	if p.units() == 0 {
		return nil, &workload.DatasetError{Path: p.data.Path, Format: p.data.Format, Err: p.noneKept(), Empty: true}
	}
	reqs := make([]Request, cfg.Requests)
	for i := range reqs {
		var err error
		if p.data.Format == workload.FormatMessages {
			reqs[i], err = p.turnRequest(ctx, cfg, i)
		} else {
			reqs[i], err = p.entryRequest(ctx, cfg, i)
		}
		if err != nil {
			return nil, err
		}
		if cfg.MaxModelLen > 0 && reqs[i].PromptTokens+reqs[i].OutputTokens > cfg.MaxModelLen {
			// Only ShareGPT is filtered: a JSONL or messages line is sent as
			// written, so the remedy is the line itself.
			remedy := "shorten or remove the line, lower output_tokens, or raise max_model_len"
			if p.data.Format == workload.FormatShareGPT {
				remedy = "lower max_total_tokens to drop such entries, or raise max_model_len"
			}
			return nil, &workload.DatasetError{Path: p.data.Path, Format: p.data.Format, Line: reqs[i].Line, Err: fmt.Errorf("the prompt (%d tokens) and its output (%d tokens) exceed the server's max_model_len %d: %s",
				reqs[i].PromptTokens, reqs[i].OutputTokens, cfg.MaxModelLen, remedy)}
		}
	}
	return reqs, nil
}

// noneKept is why no entry of the dataset passes the filter: the entries
// and the drops by reason.
func (p *Scheduler) noneKept() error {
	d := p.drops
	return fmt.Errorf("no entry passes the filter (%d entries: %d with fewer than %d prompt tokens, %d with fewer than %d output tokens, %d with more than %d prompt tokens, %d with more than %d tokens in all, %d with fewer than two turns)",
		len(p.order), d.PromptTooShort, p.opts.Filter.MinPromptTokens, d.OutputTooShort, p.opts.Filter.MinOutputTokens,
		d.PromptTooLong, p.opts.Filter.MaxPromptTokens, d.TotalTooLong, p.opts.Filter.MaxTotalTokens, p.data.Skipped)
}

// outputTokens is request i's output length: the workload's draw, else
// fallback.
func (p *Scheduler) outputTokens(i, fallback int) int {
	if p.opts.OutputTokens.IsSet() {
		return p.opts.OutputTokens.Sample(p.rng(i, streamOutput))
	}
	return fallback
}

// entryRequest is request i of a ShareGPT or JSONL prompt dataset.
func (p *Scheduler) entryRequest(ctx context.Context, cfg ScheduleConfig, i int) (Request, error) {
	k := p.kept[i%len(p.kept)]
	fallback := k.reference
	if p.data.Format == workload.FormatJSONL {
		fallback = workload.DefaultJSONLOutputTokens
		if k.e.OutputTokens > 0 {
			fallback = k.e.OutputTokens
		}
	}
	r := Request{Index: i, Text: k.e.Prompt, PromptTokens: k.prompt, OutputTokens: p.outputTokens(i, fallback),
		ReferenceTokens: k.reference, Entry: k.e.Index, Line: k.e.Line, PrefixGroup: -1, Conversation: i}
	if p.opts.Prefix.IsSet() {
		g := i % p.opts.Prefix.Groups
		pre, err := p.prefix(ctx, g)
		if err != nil {
			return Request{}, err
		}
		r.PrefixGroup = g
		r.Text = pre.text + k.e.Prompt
		r.Tokens = append(append(make([]int, 0, len(pre.ids)+len(k.ids)), pre.ids...), k.ids...)
		r.PromptTokens += len(pre.ids)
	}
	r.Messages = userMessage(r.Text)
	return r, nil
}

// turnRequest is request i of a messages dataset: a turn of a kept
// conversation, its new messages (a system message and the user message
// for the first turn; the user message for later ones: the server's
// answers replace the dataset's assistant messages in the history).
func (p *Scheduler) turnRequest(ctx context.Context, cfg ScheduleConfig, i int) (Request, error) {
	ref := p.turns[i%len(p.turns)]
	k := p.kept[ref.k]
	var msgs []openai.ChatCompletionMessage
	user, reference := -1, ""
	for j, t := 0, 0; j < len(k.e.Messages); j++ {
		m := k.e.Messages[j]
		if m.Role == "user" {
			if t == ref.t {
				user = j
				msgs = append(msgs, openai.ChatCompletionMessage{Role: m.Role, Content: m.Content})
				if j+1 < len(k.e.Messages) && k.e.Messages[j+1].Role == "assistant" {
					reference = k.e.Messages[j+1].Content
				}
				break
			}
			t++
			msgs = nil
			continue
		}
		if m.Role == "system" && t == ref.t {
			msgs = append(msgs, openai.ChatCompletionMessage{Role: m.Role, Content: m.Content})
		}
	}
	r := Request{Index: i, Messages: msgs, Text: k.e.Messages[user].Content, Entry: k.e.Index, Line: k.e.Line,
		PrefixGroup: -1, Conversation: i - ref.t, Turn: ref.t}
	n := 0
	for _, m := range msgs {
		ids, err := p.tok.TokenizeText(ctx, m.Content)
		if err != nil {
			return Request{}, fmt.Errorf("counting the tokens of %s:%d: %w", p.data.Path, k.e.Line, err)
		}
		n += len(ids)
	}
	r.PromptTokens = n
	fallback := workload.DefaultJSONLOutputTokens
	if reference != "" && !p.opts.OutputTokens.IsSet() {
		ids, err := p.tok.TokenizeText(ctx, reference)
		if err != nil {
			return Request{}, fmt.Errorf("counting the tokens of %s:%d: %w", p.data.Path, k.e.Line, err)
		}
		r.ReferenceTokens, fallback = len(ids), max(len(ids), 1)
	}
	r.OutputTokens = p.outputTokens(i, fallback)
	return r, nil
}

// prefix returns shared prefix g: for random prompts Tokens random IDs
// from the group's own generator; otherwise a text of exactly Tokens
// tokens (a "Shared context G:" header and the document), so that groups
// differ from their first tokens.
func (p *Scheduler) prefix(ctx context.Context, g int) (prefixRef, error) {
	if pre, ok := p.prefixText[g]; ok {
		return pre, nil
	}
	n := p.opts.Prefix.Tokens
	var pre prefixRef
	if p.opts.Prompt == workload.Random {
		if err := p.b.learnVocab(ctx); err != nil {
			return prefixRef{}, err
		}
		pre.ids = p.b.randomIDs(rand.New(rand.NewPCG(p.opts.Seed, uint64(g)<<4|streamPrefix)), n)
	} else {
		text, ids, err := p.b.fitText(ctx, fmt.Sprintf("Shared context %d:\n\n", g+1), n)
		if err != nil {
			return prefixRef{}, fmt.Errorf("building shared prefix %d: %w", g+1, err)
		}
		pre.text, pre.ids = text+separator, ids
	}
	p.prefixText[g] = pre
	return pre, nil
}

// dial makes a random prompt's k leading tokens (Prefix.SharedTokens)
// the dial's shared ones, taken from one sequence of IDs every request of
// the workload begins with, so that an earlier request of at least as
// many shared tokens has put them in the prefix cache. The token after
// them is made to differ from the sequence's, so that no cache, per block
// or per token, matches further.
func (p *Scheduler) dial(ids []int, k int) {
	if k == 0 {
		return
	}
	if len(p.dialBase) <= k {
		// randomIDs draws one ID after the other: a longer draw from the
		// same seed begins with the shorter one.
		p.dialBase = p.b.randomIDs(rand.New(rand.NewPCG(p.opts.Seed, streamDial)), 2*k+1)
	}
	copy(ids, p.dialBase[:k])
	if k < len(ids) && ids[k] == p.dialBase[k] {
		ids[k] = p.b.otherID(ids[k])
	}
}

// planGenerated plans Random and Article requests: lengths drawn per
// request, prompts built to them exactly.
func (p *Scheduler) planGenerated(ctx context.Context, cfg ScheduleConfig) ([]Request, error) {
	in := p.opts.InputTokens
	if !in.IsSet() {
		if cfg.Context < 1 {
			return nil, fmt.Errorf("the workload sets no input_tokens and the plan no context")
		}
		in = workload.FixedLength(cfg.Context)
	}
	turns := max(p.opts.Turns, 1)
	reqs := make([]Request, cfg.Requests)
	var dialTotal, dialShared int // the dial's prompt tokens and shared ones so far
	for i := range reqs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		conv, turn := i/turns, i%turns
		n := in.Sample(p.rng(i, streamInput))
		r := Request{Index: i, Entry: -1, PrefixGroup: -1, Conversation: i - turn, Turn: turn,
			OutputTokens: p.outputTokens(i, cfg.MaxOutput)}
		if r.OutputTokens < 1 {
			return nil, fmt.Errorf("the workload sets no output_tokens and the plan no max_output")
		}
		var pre prefixRef
		if p.opts.Prefix.IsSet() && turn == 0 {
			r.PrefixGroup = conv % p.opts.Prefix.Groups
			var err error
			if pre, err = p.prefix(ctx, r.PrefixGroup); err != nil {
				return nil, err
			}
		}
		switch {
		case p.opts.Prompt == workload.Random:
			if err := p.b.learnVocab(ctx); err != nil {
				return nil, err
			}
			r.Tokens = append(append(make([]int, 0, len(pre.ids)+n), pre.ids...), p.b.randomIDs(p.rng(i, streamTokens), n)...)
			if p.opts.Prefix.IsDial() {
				k := p.opts.Prefix.SharedTokens(dialTotal, dialShared, n)
				p.dial(r.Tokens, k)
				dialTotal, dialShared = dialTotal+n, dialShared+k
			}
			r.PromptTokens = len(r.Tokens)
		case turn > 0:
			// A later turn is text of n tokens: the chat template's tokens
			// around it belong to the history the caller sends.
			text, ids, err := p.b.fitText(ctx, fmt.Sprintf("Question %d:\n\n", turn+1), n)
			if err != nil {
				return nil, err
			}
			r.Text, r.Messages, r.PromptTokens = text, userMessage(text), len(ids)
		default:
			reader := -1
			if p.opts.Distinct || turns > 1 {
				reader = conv
			}
			pr, err := p.article(ctx, pre, r.PrefixGroup, reader, len(pre.ids)+n)
			if err != nil {
				return nil, err
			}
			r.Messages, r.Tokens, r.PromptTokens = pr.Messages, pr.Tokens, len(pr.Tokens)
			if len(r.Messages) == 1 {
				r.Text = r.Messages[0].Content
			}
			for _, w := range pr.Warnings {
				p.warn(warning.New(w.Code, fmt.Sprintf("request %d", i), w.String(), w.Figures))
			}
		}
		reqs[i] = r
	}
	return reqs, nil
}

// article is an article prompt of n tokens (chat template included)
// behind shared prefix pre (group g, -1: none), with reader's header when
// reader ≥ 0; prompts are cached by length, group and reader.
func (p *Scheduler) article(ctx context.Context, pre prefixRef, g, reader, n int) (Prompt, error) {
	key := articleKey{n, g, reader}
	if pr, ok := p.articles[key]; ok {
		return pr, nil
	}
	header := pre.text
	if reader >= 0 {
		header += streamHeader(reader)
	}
	pr, err := p.b.article(ctx, n, header)
	if err != nil {
		return Prompt{}, err
	}
	p.articles[key] = pr
	return pr, nil
}

// warn records a warning once.
func (p *Scheduler) warn(w warning.Warning) {
	p.warnings = warning.AppendNew(p.warnings, w)
}

// fitText returns header followed by the document cut so that the text is
// exactly n tokens as plain text (no chat template), with its IDs: the
// closest count below n, with an error, when no cut gives n.
func (b *Builder) fitText(ctx context.Context, header string, n int) (string, []int, error) {
	if err := b.learn(ctx); err != nil {
		return "", nil, err
	}
	count := func(cut int) (string, []int, error) {
		text := header + b.doc.prefix(cut)
		b.calls++
		ids, err := b.tok.TokenizeText(ctx, text)
		return text, ids, err
	}
	text, ids, err := count(0)
	if err != nil {
		return "", nil, err
	}
	if len(ids) >= n {
		if len(ids) == n {
			return text, ids, nil
		}
		return "", nil, fmt.Errorf("the header %q alone is %d tokens, more than the %d asked for", header, len(ids), n)
	}
	lo, hi := 0, -1 // cuts known to give fewer / more than n tokens
	cut := int(math.Round(float64(n-len(ids)) * b.charsPerToken))
	for round := 0; round < maxFitRounds; round++ {
		cut = b.doc.boundary(max(cut, lo+1))
		text, ids, err = count(cut)
		if err != nil {
			return "", nil, err
		}
		switch k := len(ids); {
		case k == n:
			return text, ids, nil
		case k < n:
			lo = cut
			cut += max(1, int(math.Round(float64(n-k)*b.charsPerToken)))
		default:
			hi = cut
			cut -= max(1, int(math.Round(float64(k-n)*b.charsPerToken)))
		}
		if hi >= 0 && (cut <= lo || cut >= hi) {
			cut = lo + (hi-lo)/2
		}
		if hi >= 0 && b.doc.boundary(hi-1) <= lo {
			break
		}
	}
	return "", nil, fmt.Errorf("no cut of the document is exactly %d tokens of text", n)
}
