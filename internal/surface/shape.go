package surface

import (
	"bytes"
	"encoding/json"
	"strings"
)

// literalKeys are the JSON keys whose string values are part of the
// protocol, not of the request: Shape keeps them verbatim (quoted) where
// it keeps only the type of other strings.
var literalKeys = map[string]bool{
	"object":        true, // "text_completion", "chat.completion.chunk", "list", "error"
	"finish_reason": true, // "length", "stop"
	"role":          true, // "assistant"
	"type":          true, // an error's: "BadRequestError", "NotFoundError", …
	"message":       true, // an error's text
	"param":         true, // an error's parameter
}

// Shape is the shape of a decoded JSON value (decoded with UseNumber):
// an object's keys each with the shape of its value, an array as a
// one-element array of its first element's shape ("[]" when empty), and
// for a scalar its type — "string", "int", "float", "bool", "null" — or
// ” for an empty string. Under a key of literalKeys a string is kept in
// single quotes: 'length'.
func Shape(v any) any {
	return shape("", v)
}

func shape(key string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = shape(k, x)
		}
		return m
	case []any:
		if len(v) == 0 {
			return "[]"
		}
		return []any{shape("", v[0])}
	case string:
		switch {
		case literalKeys[key]:
			return quote(v)
		case v == "":
			return "''"
		}
		return "string"
	case json.Number:
		if strings.ContainsAny(v.String(), ".eE") {
			return "float"
		}
		return "int"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return "?"
}

// quote is s in single quotes, which no type name has.
func quote(s string) string {
	return "'" + s + "'"
}

// decode decodes one JSON value keeping numbers as json.Number.
func decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// bodyShape is the shape of an HTTP body: Shape of its JSON, "(empty)",
// or "(text)" when it is not JSON.
func bodyShape(raw []byte) any {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "(empty)"
	}
	v, err := decode(raw)
	if err != nil {
		return "(text)"
	}
	return Shape(v)
}

// events turns an event stream's data fields into Events: JSON data as
// its shape, other data verbatim ("[DONE]"), runs of alike events
// collapsed into one marked Repeated.
func events(data []string) []Event {
	var out []Event
	var last string
	for _, d := range data {
		var ev Event
		if v, err := decode([]byte(d)); err == nil {
			ev.Data = Shape(v)
		} else {
			ev.Data = d
		}
		key, _ := json.Marshal(ev.Data)
		if len(out) > 0 && string(key) == last {
			out[len(out)-1].Repeated = true
			continue
		}
		out = append(out, ev)
		last = string(key)
	}
	return out
}
