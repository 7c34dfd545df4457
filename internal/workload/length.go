package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Length distributions (the kinds of a Length; docs/spec.md#length-distributions).
const (
	// Fixed is one token count for every request.
	Fixed = "fixed"
	// Uniform draws a whole number uniformly from [Min, Max], both
	// included, as vLLM's random dataset draws from its range ratio's
	// [⌊L(1−r)⌋, ⌈L(1+r)⌉].
	Uniform = "uniform"
	// Normal draws from a normal distribution of Mean and Stddev, rounded
	// to the nearest whole number and clipped to [Min, Max], as GuideLLM
	// and inference-perf do.
	Normal = "normal"
	// Lognormal draws from the log-normal distribution whose own mean and
	// standard deviation are Mean and Stddev, rounded and clipped to
	// [Min, Max] (inference-perf's lognormal).
	Lognormal = "lognormal"
)

// Length is a distribution of token counts: a prompt's input_tokens or a
// request's output_tokens. The zero Length is "not set".
type Length struct {
	// Distribution is Fixed, Uniform, Normal or Lognormal; "" is unset.
	Distribution string
	// Value is the Fixed count.
	Value int
	// Min and Max bound every draw (both included); for Fixed both are
	// Value.
	Min, Max int
	// Mean and Stddev are the Normal and Lognormal parameters, in tokens.
	Mean, Stddev float64
}

// FixedLength is the Length of exactly n tokens.
func FixedLength(n int) Length { return Length{Distribution: Fixed, Value: n, Min: n, Max: n} }

// IsSet reports whether l holds a distribution.
func (l Length) IsSet() bool { return l.Distribution != "" }

// IsFixed reports whether every draw of l is the same count.
func (l Length) IsFixed() bool { return l.Distribution == Fixed || (l.IsSet() && l.Min == l.Max) }

// Check returns an error saying what is wrong with l's parameters, or nil:
// Min ≥ 1, Min ≤ Max, and for Normal and Lognormal a finite Mean within
// [Min, Max] and a finite Stddev ≥ 0 (Lognormal: Mean > 0).
func (l Length) Check() error {
	switch l.Distribution {
	case Fixed:
		if l.Value < 1 {
			return fmt.Errorf("a token count is at least 1; got %d", l.Value)
		}
		return nil
	case Uniform, Normal, Lognormal:
	case "":
		return fmt.Errorf("no distribution is set")
	default:
		return fmt.Errorf("unknown distribution %q", l.Distribution)
	}
	if l.Min < 1 {
		return fmt.Errorf("min is at least 1 token; got %d", l.Min)
	}
	if l.Min > l.Max {
		return fmt.Errorf("min (%d) is more than max (%d)", l.Min, l.Max)
	}
	if l.Distribution == Uniform {
		return nil
	}
	if math.IsNaN(l.Mean) || math.IsInf(l.Mean, 0) || l.Mean < float64(l.Min) || l.Mean > float64(l.Max) {
		return fmt.Errorf("mean (%g) is outside [min, max] = [%d, %d]", l.Mean, l.Min, l.Max)
	}
	if math.IsNaN(l.Stddev) || math.IsInf(l.Stddev, 0) || l.Stddev < 0 {
		return fmt.Errorf("stddev is a number ≥ 0; got %g", l.Stddev)
	}
	return nil
}

// Sample draws one token count from l with rng. l must pass Check.
func (l Length) Sample(rng *rand.Rand) int {
	var x float64
	switch l.Distribution {
	case Fixed:
		return l.Value
	case Uniform:
		return l.Min + rng.IntN(l.Max-l.Min+1)
	case Normal:
		x = l.Mean + l.Stddev*rng.NormFloat64()
	case Lognormal:
		// The log-normal's own mean m and deviation s give the underlying
		// normal's σ² = ln(1 + s²/m²) and μ = ln m − σ²/2.
		s2 := math.Log1p(l.Stddev * l.Stddev / (l.Mean * l.Mean))
		x = math.Exp(math.Log(l.Mean) - s2/2 + math.Sqrt(s2)*rng.NormFloat64())
	default:
		return l.Value
	}
	n := math.Round(x)
	return int(math.Min(math.Max(n, float64(l.Min)), float64(l.Max)))
}

// String spells l the way a spec writes it: 512, { min = 100, max = 900 },
// { mean = 1000, stddev = 200, min = 400, max = 1600 } (with
// distribution = "lognormal" for a log-normal): an HCL object of its
// attributes (hclObject).
func (l Length) String() string {
	bounds := []string{"min = " + strconv.Itoa(l.Min), "max = " + strconv.Itoa(l.Max)}
	switch l.Distribution {
	case Fixed:
		return strconv.Itoa(l.Value)
	case Uniform:
		return hclObject(bounds...)
	case Normal, Lognormal:
		attrs := append([]string{"mean = " + hclNumber(l.Mean), "stddev = " + hclNumber(l.Stddev)}, bounds...)
		if l.Distribution == Lognormal {
			attrs = append(attrs, "distribution = "+strconv.Quote(Lognormal))
		}
		return hclObject(attrs...)
	}
	return "unset"
}

// hclObject is an HCL object constructor of attrs, each "name = value":
// { a = 1, b = 2 }.
func hclObject(attrs ...string) string {
	return "{ " + strings.Join(attrs, ", ") + " }"
}

// hclNumber spells x as fmt's %g does: the shortest form that reads back
// as x (1000, 0.5, 1e+06).
func hclNumber(x float64) string {
	return strconv.FormatFloat(x, 'g', -1, 64)
}
