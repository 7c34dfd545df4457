package vocab

import (
	"fmt"
	"strings"
)

// Outcome is a test's result. Outcomes are ordered Pass < Skip <
// Inconclusive < Fail < Error and merge by the worst (Worst): a regression
// anywhere outweighs a comparison that could not decide, and an
// infrastructure error both.
type Outcome int

// Outcomes, in order.
const (
	Pass Outcome = iota
	Skip
	// Inconclusive is a baseline comparison whose data neither show a
	// regression nor rule one out (docs/method.md#comparing-runs): it fails
	// the gate unless -inconclusive pass, with exit code 4 when nothing
	// regressed, so that CI can tell "measure more" from "regressed".
	Inconclusive
	Fail
	Error
)

var outcomeNames = [...]string{"pass", "skip", "inconclusive", "fail", "error"}

// Failed reports whether the outcome fails the gate: Inconclusive, Fail or
// Error.
func (o Outcome) Failed() bool { return o >= Inconclusive }

// String is the outcome's name as results.json stores it: "pass", "skip",
// "inconclusive", "fail" or "error".
func (o Outcome) String() string {
	if o < 0 || int(o) >= len(outcomeNames) {
		return fmt.Sprintf("outcome(%d)", int(o))
	}
	return outcomeNames[o]
}

// MarshalText encodes the outcome as its name.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText decodes an outcome name.
func (o *Outcome) UnmarshalText(b []byte) error {
	for i, n := range outcomeNames {
		if strings.EqualFold(string(b), n) {
			*o = Outcome(i)
			return nil
		}
	}
	return fmt.Errorf("unknown outcome %q", b)
}

// Worst merges two outcomes.
func Worst(a, b Outcome) Outcome {
	if b > a {
		return b
	}
	return a
}
