package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sync"
)

// recorder appends one JSON line per generation request to the
// --sim-record file, so tests can check what a client sent.
type recorder struct {
	mu sync.Mutex
	f  *os.File
}

// recordLine is one --sim-record line. Fields the request left out are
// absent (sampling) or null; values are as sent.
type recordLine struct {
	Endpoint            string                     `json:"endpoint"` // /v1/completions or /v1/chat/completions
	Engine              int                        `json:"engine"`   // data-parallel rank that served it
	PromptTokens        int                        `json:"prompt_tokens"`
	PromptTokenIDsHead  []int                      `json:"prompt_token_ids_head"` // the first 64 prompt token IDs (chat: of the rendered template)
	PromptTokenIDsTail  []int                      `json:"prompt_token_ids_tail"` // the last 64 (the instruction and the generation prompt of an article)
	PromptDistinctIDs   int                        `json:"prompt_distinct_ids"`   // how many different token IDs the prompt holds
	PromptSHA256        string                     `json:"prompt_sha256"`         // over every prompt token ID, each as 4 bytes little-endian
	Sampling            map[string]json.RawMessage `json:"sampling"`              // temperature, top_p, top_k, min_p, repetition_penalty, … as sent
	ChatTemplateKwargs  map[string]json.RawMessage `json:"chat_template_kwargs"`
	MaxTokens           *int                       `json:"max_tokens"`
	MaxCompletionTokens *int                       `json:"max_completion_tokens"`
	MinTokens           *int                       `json:"min_tokens"`
	IgnoreEOS           *bool                      `json:"ignore_eos"`
	CacheSalt           bool                       `json:"cache_salt"` // a non-empty cache_salt was sent
	Stream              bool                       `json:"stream"`
	Messages            []recordMessage            `json:"messages,omitempty"` // chat: each message as sent
}

// recordMessage is what --sim-record keeps of one chat message: its role,
// its content's token count (without the template) and the SHA-256 of the
// content text.
type recordMessage struct {
	Role          string `json:"role"`
	ContentTokens int    `json:"content_tokens"`
	ContentSHA256 string `json:"content_sha256"`
}

// recordRequest writes one generation request's line to --sim-record (a
// no-op when it is off), for the vLLM and the SGLang imitation alike: what
// the engine was asked (prompt digest, sampling, lengths) and, on chat, each
// message of the history.
func (s *server) recordRequest(chat bool, eng *engine, prompt int, digest *promptDigest, req *genRequest) {
	if s.record == nil {
		return
	}
	endpoint := "/v1/completions"
	if chat {
		endpoint = "/v1/chat/completions"
	}
	s.record.write(&recordLine{Endpoint: endpoint, Engine: eng.p.index, PromptTokens: prompt,
		PromptTokenIDsHead: digest.head, PromptTokenIDsTail: digest.tail(), PromptDistinctIDs: digest.distinct, PromptSHA256: digest.hex(), Sampling: req.present(),
		ChatTemplateKwargs: req.ChatTemplateKwargs, MaxTokens: req.MaxTokens, MaxCompletionTokens: req.MaxCompletionTokens,
		MinTokens: req.MinTokens, IgnoreEOS: req.IgnoreEOS, CacheSalt: req.CacheSalt != "", Stream: req.Stream,
		Messages: recordMessages(req.Messages)})
}

func recordMessages(msgs []chatMessage) []recordMessage {
	var out []recordMessage
	for _, m := range msgs {
		text := m.text()
		sum := sha256.Sum256([]byte(text))
		out = append(out, recordMessage{Role: m.Role, ContentTokens: countTokens(text), ContentSHA256: hex.EncodeToString(sum[:])})
	}
	return out
}

func openRecorder(path string) (*recorder, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--sim-record: %w", err)
	}
	return &recorder{f: f}, nil
}

func (r *recorder) write(l *recordLine) {
	raw, _ := json.Marshal(l)
	raw = append(raw, '\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	r.f.Write(raw)
}

func (r *recorder) close() error { return r.f.Close() }
