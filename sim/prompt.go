package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// The simulator's tokenizer is deliberately trivial and reversible: every
// two bytes of text are one token (ID 256 + the 16-bit pair), a trailing
// odd byte is its byte value. IDs stay below 65,792, inside every real
// vocabulary, and /detokenize inverts /tokenize exactly.
const pairBase = 256

// tokenize returns the token IDs of text.
func tokenize(text string) []int {
	ids := make([]int, 0, (len(text)+1)/2)
	for i := 0; i < len(text); i += 2 {
		if i+1 < len(text) {
			ids = append(ids, pairBase+int(text[i])<<8|int(text[i+1]))
		} else {
			ids = append(ids, int(text[i]))
		}
	}
	return ids
}

// countTokens is len(tokenize(text)) without building the slice.
func countTokens(text string) int { return (len(text) + 1) / 2 }

// detokenize inverts tokenize; IDs it never produces render as "<id>".
func detokenize(ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		switch {
		case id >= 0 && id < pairBase:
			b.WriteByte(byte(id))
		case id >= pairBase && id < pairBase+1<<16:
			v := id - pairBase
			b.WriteByte(byte(v >> 8))
			b.WriteByte(byte(v))
		default:
			b.WriteString("<" + strconv.Itoa(id) + ">")
		}
	}
	return b.String()
}

// genText is the text of one generated token.
const genText = " hello"

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
	set    bool
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
		p.tokens, p.hash = countTokens(s), hashString(fnvOffset, s)
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
	h, n, v, inNum := uint64(fnvOffset), 0, uint64(0), false
	for _, c := range inner {
		switch {
		case c >= '0' && c <= '9':
			v = v*10 + uint64(c-'0')
			inNum = true
		case c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r':
			if inNum {
				h = (h ^ v) * fnvPrime
				n++
				v, inNum = 0, false
			}
		default:
			return errors.New("prompt token IDs must be non-negative integers")
		}
	}
	if inNum {
		h = (h ^ v) * fnvPrime
		n++
	}
	p.tokens, p.hash = n, h
	return nil
}

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

// chatTemplate renders messages the way a ChatML template does; its token
// count is the chat prompt's length.
func chatTemplate(msgs []chatMessage, addGenerationPrompt bool) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("<|im_start|>" + m.Role + "\n" + m.text() + "<|im_end|>\n")
	}
	if addGenerationPrompt {
		b.WriteString("<|im_start|>assistant\n")
	}
	return b.String()
}
