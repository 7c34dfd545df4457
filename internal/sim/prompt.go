package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash"
	"math"
	"strconv"
	"strings"
)

// The simulator's tokenizer is deliberately trivial and reversible: every
// two bytes of ordinary text are one token (ID 256 + the 16-bit pair), a
// trailing odd byte is its byte value, so ordinary tokens are the IDs
// [0, ordinaryVocab). The chat template's special tokens are single tokens
// with Qwen's IDs (specialTokens), far above that range, as real
// vocabularies keep their special tokens apart. Text is split at special
// token strings first (as Hugging Face tokenizers do), each piece between
// them paired from its start. /detokenize inverts /tokenize exactly.
//
// vLLM exposes no vocabulary size over HTTP, so a client learns the
// ordinary range from /tokenize of text; IDs up to vocabSize-1 are accepted
// in prompts, larger ones are out of vocabulary (HTTP 400, as vLLM).
const (
	pairBase      = 256
	ordinaryVocab = pairBase + 1<<16 // 65,792: ordinary tokens are [0, ordinaryVocab)
	vocabSize     = 151936           // Qwen3's embedding size: prompt IDs must be below it
)

// specialTokens are the chat template's special tokens with Qwen's IDs.
var specialTokens = []struct {
	text string
	id   int
}{
	{"<|endoftext|>", 151643},
	{"<|im_start|>", 151644},
	{"<|im_end|>", 151645},
	{"<think>", 151667},
	{"</think>", 151668},
}

// specialAt reports the special token text starts with, if any.
func specialAt(text string) (id, n int) {
	if len(text) < 7 || text[0] != '<' {
		return 0, 0
	}
	for _, sp := range specialTokens {
		if len(text) >= len(sp.text) && text[:len(sp.text)] == sp.text {
			return sp.id, len(sp.text)
		}
	}
	return 0, 0
}

// eachToken calls fn with every token ID of text, in order.
func eachToken(text string, fn func(id int)) {
	start := 0 // first byte of the current ordinary piece
	flush := func(end int) {
		for i := start; i < end; i += 2 {
			if i+1 < end {
				fn(pairBase + int(text[i])<<8 | int(text[i+1]))
			} else {
				fn(int(text[i]))
			}
		}
	}
	for i := 0; i < len(text); {
		if text[i] == '<' {
			if id, n := specialAt(text[i:]); n > 0 {
				flush(i)
				fn(id)
				i += n
				start = i
				continue
			}
		}
		i++
	}
	flush(len(text))
}

// tokenize returns the token IDs of text.
func tokenize(text string) []int {
	ids := make([]int, 0, (len(text)+1)/2)
	eachToken(text, func(id int) { ids = append(ids, id) })
	return ids
}

// textTokens is text's token count and the hash of its token IDs (the same
// hash a completions prompt of those IDs gets, so the prefix cache treats
// a chat prompt and its token IDs alike); with chain non-nil it also feeds
// chain every ID.
func textTokens(text string, chain *blockChain) (n int, hash uint64) {
	hash = fnvOffset
	eachToken(text, func(id int) {
		n++
		hash = (hash ^ uint64(id)) * fnvPrime
		if chain != nil {
			chain.add(id)
		}
	})
	return n, hash
}

// countTokens is len(tokenize(text)) without building the slice.
func countTokens(text string) int {
	n, _ := textTokens(text, nil)
	return n
}

// detokenize inverts tokenize; IDs it never produces render as "<id>".
func detokenize(ids []int) string {
	var b strings.Builder
outer:
	for _, id := range ids {
		switch {
		case id >= 0 && id < pairBase:
			b.WriteByte(byte(id))
		case id >= pairBase && id < ordinaryVocab:
			v := id - pairBase
			b.WriteByte(byte(v >> 8))
			b.WriteByte(byte(v))
		default:
			for _, sp := range specialTokens {
				if sp.id == id {
					b.WriteString(sp.text)
					continue outer
				}
			}
			b.WriteString("<" + strconv.Itoa(id) + ">")
		}
	}
	return b.String()
}

// genText is the text of one generated token: two bytes, one token
// (genTokenID) when tokenized, so an answer a client sends back in a
// conversation's history renders to the very tokens that were generated
// and hits their cached blocks, as a real model's answer does.
const genText = " a"

// genTokenID is the ID of genText's token.
const genTokenID = pairBase + ' '<<8 | 'a'

// FNV-1a, 64 bit.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

// promptField decodes a completions "prompt" (token IDs, text, or a
// one-element list of either) into its length and hash, without keeping
// the tokens: a 251K-token prompt costs no memory after parsing.
type promptField struct {
	tokens int
	hash   uint64
	chain  blockChain // the prefix cache's block keys
	maxID  uint64     // largest token ID given (0 for text)
	set    bool
	digest *promptDigest // when set before decoding: fed every token ID (--sim-record)
}

var errBatchedPrompt = errors.New("the simulator serves one prompt per request; send a list of token IDs or a string")

// UnmarshalJSON implements json.Unmarshaler.
func (p *promptField) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	p.set = true
	if len(b) == 0 || string(b) == "null" {
		p.set = false
		return nil
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		p.tokens, p.hash = textTokens(s, &p.chain)
		if p.digest != nil {
			eachToken(s, p.digest.add)
		}
		return nil
	}
	if b[0] != '[' {
		return errors.New("prompt must be a string or a list of token IDs")
	}
	inner := bytes.TrimSpace(b[1 : len(b)-1])
	if len(inner) > 0 && (inner[0] == '[' || inner[0] == '"') {
		var list []json.RawMessage
		if err := json.Unmarshal(b, &list); err != nil {
			return err
		}
		if len(list) != 1 {
			return errBatchedPrompt
		}
		return p.UnmarshalJSON(list[0])
	}
	// A flat list of token IDs: hash the integers as they are scanned.
	h, n, v, inNum, maxID := uint64(fnvOffset), 0, uint64(0), false, uint64(0)
	end := func() {
		h = (h ^ v) * fnvPrime
		n++
		maxID = max(maxID, v)
		p.chain.add(int(v))
		if p.digest != nil {
			p.digest.add(int(v))
		}
		v, inNum = 0, false
	}
	for _, c := range inner {
		switch {
		case c >= '0' && c <= '9':
			v = v*10 + uint64(c-'0')
			inNum = true
			if v > math.MaxInt32 {
				return errors.New("prompt token IDs must be 32-bit integers")
			}
		case c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r':
			if inNum {
				end()
			}
		default:
			return errors.New("prompt token IDs must be non-negative integers")
		}
	}
	if inNum {
		end()
	}
	p.tokens, p.hash, p.maxID = n, h, maxID
	return nil
}

// promptDigest is what --sim-record keeps of a prompt: its first and last
// recordHead token IDs, how many distinct IDs it holds, and a SHA-256 over
// all of them, each ID as 4 bytes little-endian (uint32), in order.
type promptDigest struct {
	head     []int
	ring     [recordHead]int // the last recordHead IDs, ring[n%recordHead] next
	n        int             // IDs added
	seen     []uint64        // bit set of the IDs seen
	distinct int
	sum      hash.Hash
	buf      [4]byte
}

// recordHead is how many leading (and trailing) prompt token IDs
// --sim-record keeps.
const recordHead = 64

func newPromptDigest() *promptDigest {
	return &promptDigest{head: make([]int, 0, recordHead), sum: sha256.New()}
}

func (d *promptDigest) add(id int) {
	if len(d.head) < recordHead {
		d.head = append(d.head, id)
	}
	d.ring[d.n%recordHead] = id
	d.n++
	if id >= 0 {
		if w := id / 64; w >= len(d.seen) {
			d.seen = append(d.seen, make([]uint64, max(w+1, vocabSize/64+1)-len(d.seen))...)
		}
		if bit := uint64(1) << (id % 64); d.seen[id/64]&bit == 0 {
			d.seen[id/64] |= bit
			d.distinct++
		}
	}
	binary.LittleEndian.PutUint32(d.buf[:], uint32(id))
	d.sum.Write(d.buf[:])
}

// tail returns the last recordHead IDs (all of them for a shorter prompt),
// in order.
func (d *promptDigest) tail() []int {
	if d.n <= recordHead {
		return append([]int(nil), d.ring[:d.n]...)
	}
	i := d.n % recordHead
	return append(append([]int(nil), d.ring[i:]...), d.ring[:i]...)
}

func (d *promptDigest) hex() string { return hex.EncodeToString(d.sum.Sum(nil)) }

// chatMessage is one chat message; content is a string or a list of parts.
type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

func (m chatMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// chatTemplate renders messages with a Qwen3-style ChatML template, the
// simulator's only one; the rendered text's tokens are the chat prompt:
//
//	<|im_start|>{role}\n{content}<|im_end|>\n        for every message
//	<|im_start|>assistant\n                          if add_generation_prompt
//	<think>\n\n</think>\n\n                           then, if chat_template_kwargs
//	                                                 has "enable_thinking": false
//
// The special tokens (<|im_start|>, <|im_end|>, <think>, </think>) are one
// token each with Qwen's IDs; the text between them is ordinary tokens. So
// /tokenize with messages, /v1/chat/completions' prompt_tokens and
// /v1/completions given /tokenize's IDs all count the same tokens.
func chatTemplate(msgs []chatMessage, addGenerationPrompt bool, kwargs map[string]json.RawMessage) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("<|im_start|>" + m.Role + "\n" + m.text() + "<|im_end|>\n")
	}
	if addGenerationPrompt {
		b.WriteString("<|im_start|>assistant\n")
		if raw, ok := kwargs["enable_thinking"]; ok && bytes.Equal(bytes.TrimSpace(raw), []byte("false")) {
			b.WriteString("<think>\n\n</think>\n\n")
		}
	}
	return b.String()
}
