package sim

import "strconv"

// chunker formats one request's SSE chunks into a reused buffer: the parts
// that never change (id, created, model, prompt_tokens) are rendered once,
// so streaming a token costs appends, not JSON marshalling.
//
// The chunks have vLLM 0.32.0's keys (testdata/surface/vllm-0.32.0-cpu.json,
// docs/vllm.md#stream-format): a completions choice carries
// prompt_token_ids and token_ids (null unless return_token_ids); a chat
// role chunk carries prompt_token_ids and prompt_text at the top, a chat
// content choice token_ids, its last stop_reason; chat's continuous usage
// has completion_tokens_details; the stream's last chunk carries
// system_fingerprint: the usage chunk, or without include_usage the last
// content chunk.
type chunker struct {
	chat        bool
	continuous  bool   // usage on every chunk
	details     bool   // --enable-prompt-tokens-details: the final usage has prompt_tokens_details
	head        []byte // data: {"id":…,"object":…,"created":…,"model":…,"choices":[
	prompt      int
	fingerprint []byte // ,"system_fingerprint":"…" (empty: none)
}

// newChunker is the chunker of one streamed request.
func newChunker(chat bool, id string, created int64, model string, prompt int, continuous bool) *chunker {
	object := "text_completion"
	if chat {
		object = "chat.completion.chunk"
	}
	head := []byte(`data: {"id":`)
	head = appendJSONString(head, id)
	head = append(head, `,"object":"`+object+`","created":`...)
	head = strconv.AppendInt(head, created, 10)
	head = append(head, `,"model":`...)
	head = appendJSONString(head, model)
	head = append(head, `,"choices":[`...)
	return &chunker{chat: chat, continuous: continuous, head: head, prompt: prompt}
}

// withFingerprint sets the system_fingerprint the stream's last chunk
// carries.
func (c *chunker) withFingerprint(fp string) *chunker {
	c.fingerprint = appendJSONString([]byte(`,"system_fingerprint":`), fp)
	return c
}

// usage appends "usage":{…} with completion tokens so far and, when
// cached >= 0, prompt_tokens_details with the cached prompt tokens; a chat
// chunk's continuous usage (perChunk) ends with completion_tokens_details
// null, as vLLM's chat stream writes it (its completions stream does not).
func (c *chunker) usage(b []byte, completion, cached int, perChunk bool) []byte {
	b = append(b, `"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(c.prompt), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(c.prompt+completion), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(completion), 10)
	if cached >= 0 {
		b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
		b = strconv.AppendInt(b, int64(cached), 10)
		b = append(b, '}')
	}
	if perChunk && c.chat {
		b = append(b, `,"completion_tokens_details":null`...)
	}
	return append(b, '}')
}

// role appends the chat role chunk vLLM sends with the first token.
func (c *chunker) role(b []byte) []byte {
	b = append(b, c.head...)
	b = append(b, `{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]`...)
	if c.continuous {
		b = append(b, ',')
		b = c.usage(b, 0, -1, true)
	}
	b = append(b, `,"prompt_token_ids":null,"prompt_text":null`...)
	return append(b, "}\n\n"...)
}

// content appends a chunk carrying n tokens; total is the completion
// tokens so far including them; finish is the last one's finish_reason
// ("" before it); last says it ends the stream (no usage chunk follows),
// so it carries the fingerprint; reasoning says its tokens are reasoning,
// sent in a chat delta's "reasoning" (vLLM 0.32's DeltaMessage,
// entrypoints/generate/base/protocol.py, dumped with exclude_unset).
// A "stop" chunk's last token is the EOS, which renders as no text.
func (c *chunker) content(b []byte, n, total int, finish string, last, reasoning bool) []byte {
	b = append(b, c.head...)
	switch {
	case c.chat && reasoning:
		b = append(b, `{"index":0,"delta":{"reasoning":"`...)
	case c.chat:
		b = append(b, `{"index":0,"delta":{"content":"`...)
	default:
		b = append(b, `{"index":0,"text":"`...)
	}
	if finish == "stop" {
		n--
	}
	for range n {
		b = append(b, genText...)
	}
	if c.chat {
		b = append(b, `"},"logprobs":null,"finish_reason":`...)
	} else {
		b = append(b, `","logprobs":null,"finish_reason":`...)
	}
	if finish != "" {
		b = append(b, '"')
		b = append(b, finish...)
		b = append(b, '"')
	} else {
		b = append(b, `null`...)
	}
	switch {
	case !c.chat:
		b = append(b, `,"stop_reason":null,"prompt_token_ids":null,"token_ids":null`...)
	case finish != "":
		b = append(b, `,"stop_reason":null,"token_ids":null`...)
	default:
		b = append(b, `,"token_ids":null`...)
	}
	b = append(b, `}]`...)
	if c.continuous {
		b = append(b, ',')
		b = c.usage(b, total, -1, true)
	}
	if last {
		b = append(b, c.fingerprint...)
	}
	return append(b, "}\n\n"...)
}

// final appends the usage-only chunk sent when include_usage is set; with
// --enable-prompt-tokens-details its usage says how many prompt tokens
// the prefix cache served (vLLM puts prompt_tokens_details on this final
// usage only, not on the continuous usage of each chunk).
func (c *chunker) final(b []byte, total, cached int) []byte {
	b = append(b, c.head...)
	b = append(b, "],"...)
	if !c.details {
		cached = -1
	}
	b = c.usage(b, total, max(cached, -1), false)
	b = append(b, c.fingerprint...)
	return append(b, "}\n\n"...)
}

var doneChunk = []byte("data: [DONE]\n\n")

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
