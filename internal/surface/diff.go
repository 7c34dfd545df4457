package surface

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Difference is one place where two surfaces differ.
type Difference struct {
	// Path names the place: the golden file's keys from the top, joined
	// by "/" (metrics/vllm:num_requests_running/labels,
	// streams/chat/events/0/data/choices/0/delta).
	Path string
	// Want and Got are the values there, rendered as JSON; "" where one
	// side has nothing. For two lists of strings they say what only one
	// side holds instead (Only).
	Want, Got string
	// Only, for two lists of strings, says which elements only one side
	// holds: true then, and Want and Got list those elements.
	Only bool
}

// String is the difference on one line, naming the sides want and got.
func (d Difference) String() string {
	return d.Describe("want", "got")
}

// Describe is the difference on one line, the sides named as given (the
// golden's release and "simulator", say).
func (d Difference) Describe(want, got string) string {
	side := func(name, v string) string {
		switch {
		case v == "" && d.Only:
			return ""
		case v == "":
			return name + ": (absent)"
		case d.Only:
			return "only " + name + ": " + v
		}
		return name + ": " + v
	}
	parts := []string{}
	for _, p := range []string{side(want, d.Want), side(got, d.Got)} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return d.Path + ": " + strings.Join(parts, "; ")
}

// Diff lists where got differs from want, in path order. A key on one
// side only is one difference, however much lies below it; an array of
// objects is compared element by element; two lists of strings by their
// elements (what each side alone holds).
func Diff(want, got *Surface) ([]Difference, error) {
	w, err := generic(want)
	if err != nil {
		return nil, err
	}
	g, err := generic(got)
	if err != nil {
		return nil, err
	}
	var out []Difference
	compare("", w, g, &out)
	return out, nil
}

// generic is s as decoded JSON: maps, slices and scalars.
func generic(s *Surface) (any, error) {
	raw, err := Marshal(s)
	if err != nil {
		return nil, err
	}
	return decode(raw)
}

func compare(path string, want, got any, out *[]Difference) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "/" + k
	}
	wm, wok := want.(map[string]any)
	gm, gok := got.(map[string]any)
	if wok && gok {
		keys := sortedKeys(wm)
		for _, k := range sortedKeys(gm) {
			if _, ok := wm[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			wv, win := wm[k]
			gv, gin := gm[k]
			switch {
			case !win:
				*out = append(*out, Difference{Path: join(k), Got: render(gv)})
			case !gin:
				*out = append(*out, Difference{Path: join(k), Want: render(wv)})
			default:
				compare(join(k), wv, gv, out)
			}
		}
		return
	}
	wl, wok := want.([]any)
	gl, gok := got.([]any)
	if wok && gok {
		if ws, gs, ok := strings2(wl, gl); ok {
			onlyW, onlyG := minus(ws, gs), minus(gs, ws)
			if len(onlyW)+len(onlyG) > 0 {
				*out = append(*out, Difference{Path: path, Want: strings.Join(onlyW, ", "), Got: strings.Join(onlyG, ", "), Only: true})
			}
			return
		}
		for i := range max(len(wl), len(gl)) {
			switch {
			case i >= len(wl):
				*out = append(*out, Difference{Path: join(strconv.Itoa(i)), Got: render(gl[i])})
			case i >= len(gl):
				*out = append(*out, Difference{Path: join(strconv.Itoa(i)), Want: render(wl[i])})
			default:
				compare(join(strconv.Itoa(i)), wl[i], gl[i], out)
			}
		}
		return
	}
	if w, g := render(want), render(got); w != g {
		*out = append(*out, Difference{Path: path, Want: w, Got: g})
	}
}

// strings2 reports whether a and b are both lists of strings (an empty
// list counts), and returns them.
func strings2(a, b []any) (as, bs []string, ok bool) {
	conv := func(l []any) ([]string, bool) {
		out := make([]string, 0, len(l))
		for _, v := range l {
			s, ok := v.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	as, aok := conv(a)
	bs, bok := conv(b)
	return as, bs, aok && bok
}

// minus is the elements of a not in b, in a's order.
func minus(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

// render is v as compact JSON, <, > and & unescaped.
func render(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
