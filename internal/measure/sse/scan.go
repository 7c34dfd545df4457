package sse

import "bytes"

// scan is the allocation-free fast path of Parse. It walks the top-level
// object and reads only "choices[*].finish_reason", whether "choices[*].text"
// and "choices[*].delta.{role,content,reasoning,reasoning_content}" are
// non-empty strings (the last two the reasoning phase's), "usage.{prompt,completion}_tokens", and whether
// "timings" is there. It reports
// ok=false for anything it does not handle exactly as encoding/json would
// (an "error" member or "object": "error", a repeated "choices" member, whose elements
// encoding/json would merge, escaped or case-folded keys, non-integer
// counters, malformed input); Parse then falls back to encoding/json, so
// both paths always agree (FuzzSSE checks it).
func scan(b []byte) (c Chunk, ok bool) {
	s := scanner{b: b}
	sawChoices := false
	if !s.obj(func(key []byte) bool {
		switch {
		case bytes.Equal(key, choicesKey[1:len(choicesKey)-1]):
			if sawChoices {
				return false
			}
			sawChoices = true
			return s.choices(&c)
		case bytes.Equal(key, usageKey[1:len(usageKey)-1]):
			return s.usage(&c)
		case bytes.Equal(key, timingsKey[1:len(timingsKey)-1]):
			// Only whether it is there: ParseTimings reads it, once a request.
			c.HasTimings = s.peek() != 'n'
			return s.skip()
		case bytes.Equal(key, objectKey[1:len(objectKey)-1]):
			// "object": "error" is the flat error shape
			// (docs/vllm.md#mid-stream-errors): left to encoding/json, as is
			// any value the scanner cannot compare exactly (escapes).
			if s.peek() == '"' && (s.hasPrefix(errorValue) || s.stringHasEscape()) {
				return false
			}
			return s.skip()
		case bytes.Equal(key, errorKey[1:len(errorKey)-1]),
			foldKey(key, objectKey),
			foldKey(key, choicesKey),
			foldKey(key, usageKey),
			foldKey(key, timingsKey),
			foldKey(key, errorKey):
			return false
		}
		return s.skip()
	}) {
		return Chunk{}, false
	}
	s.ws()
	return c, s.i == len(s.b)
}

type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	if s.i < len(s.b) && s.b[s.i] > ' ' { // the usual case: no whitespace
		return
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// obj walks an object, calling member for each key with the position at its
// value; member must consume the value.
func (s *scanner) obj(member func(key []byte) bool) bool {
	if s.peek() != '{' {
		return false
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		key, ok := s.key()
		if !ok {
			return false
		}
		if s.peek() != ':' {
			return false
		}
		s.i++
		if !member(key) {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// key reads a string without escapes (keys with escapes are left to encoding/json).
func (s *scanner) key() ([]byte, bool) {
	if s.peek() != '"' {
		return nil, false
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return s.b[start:j], true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, false
		}
	}
	return nil, false
}

func (s *scanner) choices(c *Chunk) bool {
	switch s.peek() {
	case 'n':
		c.Choices, c.Finished = 0, false
		return s.lit("null")
	case '[':
	default:
		return false
	}
	s.i++
	c.Choices, c.Finished, c.Role, c.Text, c.Reasoning = 0, false, false, false, false
	answer, thought := false, false
	if s.peek() == ']' {
		s.i++
		return true
	}
	for {
		if s.peek() == 'n' { // a null element decodes as a zero choice
			if !s.lit("null") {
				return false
			}
		} else {
			// As encoding/json decodes into one element, a repeated member
			// overwrites only what it sets (a repeated "delta" merges).
			finished, text, role, content, reasoning, reasoningContent := false, false, false, false, false, false
			var reason []byte
			if !s.obj(func(key []byte) bool {
				switch {
				case bytes.Equal(key, finishKey[1:len(finishKey)-1]):
					if s.peek() == 'n' {
						finished, reason = false, nil
						return s.lit("null")
					}
					if s.peek() != '"' {
						return false
					}
					finished = true
					from := s.i + 1
					if !s.str() {
						return false
					}
					reason = s.b[from : s.i-1]
					// An escaped reason is left to encoding/json, which
					// unescapes it.
					return bytes.IndexByte(reason, '\\') < 0
				case bytes.Equal(key, textKey[1:len(textKey)-1]):
					return s.nonEmptyString(&text)
				case bytes.Equal(key, deltaKey[1:len(deltaKey)-1]):
					return s.delta(&role, &content, &reasoning, &reasoningContent)
				case foldKey(key, finishKey),
					foldKey(key, textKey),
					foldKey(key, deltaKey):
					return false
				}
				return s.skip()
			}) {
				return false
			}
			if finished {
				c.Finished = true
				c.FinishReason = internReason(reason)
			}
			if role {
				c.Role = true
			}
			if text || content {
				answer = true
			}
			if reasoning || reasoningContent {
				thought = true
			}
		}
		c.Choices++
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			c.Text, c.Reasoning = answer || thought, thought && !answer
			return true
		default:
			return false
		}
	}
}

// delta reads a chat choice's delta object (null leaves it as it is, as
// encoding/json does for a struct).
func (s *scanner) delta(role, content, reasoning, reasoningContent *bool) bool {
	switch s.peek() {
	case 'n':
		return s.lit("null")
	case '{':
	default:
		return false // encoding/json: cannot unmarshal into a struct
	}
	return s.obj(func(key []byte) bool {
		switch {
		case bytes.Equal(key, roleKey[1:len(roleKey)-1]):
			return s.nonEmptyString(role)
		case bytes.Equal(key, contentKey[1:len(contentKey)-1]):
			return s.nonEmptyString(content)
		case bytes.Equal(key, reasonKey[1:len(reasonKey)-1]):
			return s.nonEmptyString(reasoning)
		case bytes.Equal(key, reasonCKey[1:len(reasonCKey)-1]):
			return s.nonEmptyString(reasoningContent)
		case foldKey(key, roleKey),
			foldKey(key, contentKey),
			foldKey(key, reasonKey),
			foldKey(key, reasonCKey):
			return false
		}
		return s.skip()
	})
}

// nonEmptyString consumes any value and sets v to whether it is a string
// other than "".
func (s *scanner) nonEmptyString(v *bool) bool {
	if s.peek() == '"' {
		*v = s.i+1 < len(s.b) && s.b[s.i+1] != '"'
		return s.str()
	}
	*v = false
	return s.skip()
}

func (s *scanner) usage(c *Chunk) bool {
	if s.peek() == 'n' {
		c.HasUsage, c.PromptTokens, c.CompletionTokens = false, 0, 0
		return s.lit("null")
	}
	// Like encoding/json decoding into an existing struct, a repeated
	// "usage" member keeps the counters the later one does not set.
	c.HasUsage = true
	prompt, compl := c.PromptTokens, c.CompletionTokens
	ok := s.obj(func(key []byte) bool {
		switch {
		case bytes.Equal(key, promptKey[1:len(promptKey)-1]):
			return s.int(&prompt)
		case bytes.Equal(key, complKey[1:len(complKey)-1]):
			return s.int(&compl)
		case foldKey(key, promptKey),
			foldKey(key, complKey):
			return false
		}
		return s.skip()
	})
	c.PromptTokens, c.CompletionTokens = prompt, compl
	return ok
}

// int reads a non-negative integer of at most 18 digits (or null, which
// leaves v unchanged as encoding/json does).
func (s *scanner) int(v *int64) bool {
	if s.peek() == 'n' {
		return s.lit("null")
	}
	start := s.i
	var n int64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		n = n*10 + int64(s.b[s.i]-'0')
		s.i++
	}
	d := s.i - start
	if d == 0 || d > 18 || (d > 1 && s.b[start] == '0') {
		return false
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return false
		}
	}
	*v = n
	return true
}

// hasPrefix reports whether the input at the current position starts with p.
func (s *scanner) hasPrefix(p []byte) bool { return bytes.HasPrefix(s.b[s.i:], p) }

// stringHasEscape reports whether the string at the current position holds
// a backslash before its closing quote.
func (s *scanner) stringHasEscape() bool {
	for j := s.i + 1; j < len(s.b); j++ {
		switch s.b[j] {
		case '\\':
			return true
		case '"':
			return false
		}
	}
	return false
}

func (s *scanner) lit(l string) bool {
	if len(s.b)-s.i < len(l) || string(s.b[s.i:s.i+len(l)]) != l {
		return false
	}
	s.i += len(l)
	return true
}

// str skips a string, escapes included.
func (s *scanner) str() bool {
	if s.peek() != '"' {
		return false
	}
	for j := s.i + 1; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '\\':
			j++
		case c == '"':
			s.i = j + 1
			return true
		case c < 0x20:
			return false
		}
	}
	return false
}

// skip skips any value. It is lenient about number syntax: the payload is
// checked to be an object with well-formed nesting, strings and literals.
func (s *scanner) skip() bool {
	switch c := s.peek(); {
	case c == '"':
		return s.str()
	case c == '{':
		return s.obj(func([]byte) bool { return s.skip() })
	case c == '[':
		s.i++
		if s.peek() == ']' {
			s.i++
			return true
		}
		for {
			if !s.skip() {
				return false
			}
			switch s.peek() {
			case ',':
				s.i++
			case ']':
				s.i++
				return true
			default:
				return false
			}
		}
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		start := s.i
		for s.i < len(s.b) && numberByte(s.b[s.i]) {
			s.i++
		}
		return s.i > start
	}
	return false
}

// numberByte reports whether c may be part of a JSON number (a switch: a
// bytes.IndexByte call a digit was a fifth of the scan).
func numberByte(c byte) bool {
	switch c {
	case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '-', '+', '.', 'e', 'E':
		return true
	}
	return false
}

// foldKey reports whether key equals k (a quoted key) under case folding,
// as encoding/json matches field names. Keys are ASCII here (key leaves
// any other to encoding/json), so the length test first spares the fold of
// every other key.
func foldKey(key, k []byte) bool {
	k = k[1 : len(k)-1]
	return len(key) == len(k) && bytes.EqualFold(key, k)
}
