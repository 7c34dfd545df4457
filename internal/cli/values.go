package cli

import (
	"errors"
	"strings"

	"github.com/slogate/slogate/spec"
)

// Fraction is a flag value for a tolerance or margin, written "5%" or
// "0.05". It is read by spec.ParseTolerance, so that a value means on the
// command line what the `tolerance` attribute means in a spec
// (docs/spec.md#expect).
type Fraction struct {
	text string
	v    float64
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

// Set parses s ("5%", "0.05"), from 0 to 100 %.
func (f *Fraction) Set(s string) error {
	v, err := spec.ParseTolerance(s)
	if err != nil {
		return errors.New(`want a percentage such as 5% or a fraction such as 0.05, from 0 to 100%`)
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
