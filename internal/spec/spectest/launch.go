// Package spectest holds test helpers for comparing launch commands: it
// splits a POSIX shell command line into words and parses a vLLM launch
// (`[env K=V…] COMMAND serve MODEL --flag value --bare …`) into a flag set,
// so two launches can be compared with flag order aside.
package spectest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Launch is a parsed launch command.
type Launch struct {
	Env     map[string]string // the K=V words after a leading "env"
	Command string            // the executable, e.g. "vllm" or "$HOME/venv/bin/vllm"
	Model   string            // the word after "serve"
	// Flags maps each --flag to its value; "" for a bare flag. JSON object
	// values are normalised (keys sorted, no spaces), so equal JSON compares
	// equal.
	Flags map[string]string
}

// SplitWords splits a shell command line into words, honouring single
// quotes, double quotes (without expansion: "$HOME" stays $HOME) and
// backslash escapes. It is just enough shell for launch commands.
func SplitWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated single quote at %d", i)
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(line[i])
			}
			if i >= len(line) {
				return nil, fmt.Errorf("unterminated double quote")
			}
			inWord = true
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// ParseLine parses a shell launch line (as in the seed reports).
func ParseLine(line string) (*Launch, error) {
	words, err := SplitWords(strings.TrimSpace(line))
	if err != nil {
		return nil, err
	}
	return ParseArgv(words)
}

// ParseArgv parses `[env K=V…] COMMAND serve MODEL flags…`. A flag takes
// the next word as its value unless that word starts with "--"; a flag
// given twice is an error (the set would lose one).
func ParseArgv(words []string) (*Launch, error) {
	l := &Launch{Env: map[string]string{}, Flags: map[string]string{}}
	if len(words) > 0 && words[0] == "env" {
		words = words[1:]
		for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
			k, v, _ := strings.Cut(words[0], "=")
			l.Env[k] = v
			words = words[1:]
		}
	}
	if len(words) < 3 || words[1] != "serve" {
		return nil, fmt.Errorf("not COMMAND serve MODEL …: %q", words)
	}
	l.Command, l.Model = words[0], words[2]
	rest := words[3:]
	for i := 0; i < len(rest); i++ {
		f := rest[i]
		if !strings.HasPrefix(f, "--") {
			return nil, fmt.Errorf("word %q is not a --flag", f)
		}
		if _, dup := l.Flags[f]; dup {
			return nil, fmt.Errorf("flag %s given twice", f)
		}
		v := ""
		if i+1 < len(rest) && !strings.HasPrefix(rest[i+1], "--") {
			v = normaliseJSON(rest[i+1])
			i++
		}
		l.Flags[f] = v
	}
	return l, nil
}

// normaliseJSON re-encodes a JSON object value canonically; anything else
// is returned unchanged.
func normaliseJSON(v string) string {
	if !strings.HasPrefix(v, "{") {
		return v
	}
	var x any
	dec := json.NewDecoder(strings.NewReader(v))
	dec.UseNumber()
	if dec.Decode(&x) != nil {
		return v
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(x) != nil {
		return v
	}
	return strings.TrimSpace(buf.String())
}
