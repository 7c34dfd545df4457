package cli

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/slogate/slogate/internal/spec"
)

// Fraction is a flag value for a tolerance or margin, written "5%" or
// "0.05". It is read by spec.ParseTolerance, so that a value means on the
// command line what the `tolerance` attribute means in a spec
// (docs/spec.md#expect).
type Fraction struct {
	text     string
	v        float64
	positive bool // a comparison's tolerance: 0 refused (FlagSet.Tolerance)
}

// Fraction defines a flag whose value is a Fraction with default def ("5%").
// It panics when def itself does not parse: that is a programming error.
func (f *FlagSet) Fraction(name, def, usage string) *Fraction {
	fr := &Fraction{}
	if err := fr.Set(def); err != nil {
		panic("cli: default of -" + name + ": " + err.Error())
	}
	f.Var(fr, name, usage)
	return fr
}

// Tolerance defines a flag for a comparison's tolerance (run -baseline,
// diff, bisect, interleave, noise): a Fraction above 0. A comparison
// calls a change within tolerance only when its whole interval fits
// inside ±tolerance, and every interval has some width, so at 0 no cell
// could ever be decided unchanged: the flag refuses it, saying so, rather
// than let each part of a comparison read 0 its own way.
func (f *FlagSet) Tolerance(name, def, usage string) *Fraction {
	fr := &Fraction{positive: true}
	if err := fr.Set(def); err != nil {
		panic("cli: default of -" + name + ": " + err.Error())
	}
	f.Var(fr, name, usage)
	return fr
}

// ErrZeroTolerance is Set's error for a comparison's tolerance of 0.
var ErrZeroTolerance = errors.New("a comparison cannot decide a change within a tolerance of 0: every interval has width, so no cell could ever be called unchanged; give the smallest change that matters, such as 1%")

// Set parses s ("5%", "0.05"), from 0 to 100 % (above 0 for a
// comparison's tolerance).
func (f *Fraction) Set(s string) error {
	v, err := spec.ParseTolerance(s)
	if err != nil {
		return errors.New(`want a percentage such as 5% or a fraction such as 0.05, from 0 to 100%`)
	}
	if f.positive && v == 0 {
		return ErrZeroTolerance
	}
	f.text, f.v = s, v
	return nil
}

// String returns the value as it was written.
func (f *Fraction) String() string {
	if f == nil {
		return ""
	}
	return f.text
}

// Value returns the fraction: 0.05 for "5%" and for "0.05".
func (f *Fraction) Value() float64 { return f.v }

// SplitList reads a comma-separated flag value ("total_tps, ttft_ms") as
// its non-empty, trimmed items.
func SplitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// Choice is a flag value that is one of a few words (-format text|json);
// any other word is refused at parse time with the list
// (`-format is text, json or matrix, not "yaml"`).
type Choice struct {
	value   string
	choices []string
}

// Choice defines flag name with the given choices, the first the default.
func (f *FlagSet) Choice(name string, choices []string, usage string) *Choice {
	c := &Choice{value: choices[0], choices: choices}
	f.Var(c, name, usage)
	return c
}

// Set sets the choice to s, one of the choices.
func (c *Choice) Set(s string) error {
	if !slices.Contains(c.choices, s) {
		return flagError(fmt.Sprintf(" is %s, not %q", orList(c.choices), s))
	}
	c.value = s
	return nil
}

// String returns the word chosen.
func (c *Choice) String() string {
	if c == nil {
		return ""
	}
	return c.value
}

// Value returns the word chosen.
func (c *Choice) Value() string { return c.value }

// orList writes words as "a, b or c".
func orList(words []string) string {
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// Regexp is a flag value holding a regular expression (-run REGEX),
// compiled at parse time; a bad one is refused as `-run: error parsing
// regexp: …`.
type Regexp struct{ re *regexp.Regexp }

// Regexp defines flag name holding a regular expression; unset, its Value
// is nil.
func (f *FlagSet) Regexp(name, usage string) *Regexp {
	r := &Regexp{}
	f.Var(r, name, usage)
	return r
}

// Set compiles s; "" unsets the flag (keeps everything, as when not given).
func (r *Regexp) Set(s string) error {
	if s == "" {
		r.re = nil
		return nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return flagError(": " + err.Error())
	}
	r.re = re
	return nil
}

// String returns the expression as written.
func (r *Regexp) String() string {
	if r == nil || r.re == nil {
		return ""
	}
	return r.re.String()
}

// Value returns the compiled expression, nil when the flag was not set.
func (r *Regexp) Value() *regexp.Regexp { return r.re }

// flagError is a refusal that Parse reports as "-NAME" followed by its
// text (" is text or json, not …", ": error parsing regexp: …"), instead of
// the generic "invalid value" line.
type flagError string

func (e flagError) Error() string { return string(e) }
