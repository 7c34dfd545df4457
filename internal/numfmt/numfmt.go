// Package numfmt formats numbers for people, the one way slogate's reports,
// console, verdicts, diffs and simulator log all show them: thousands
// separated by commas in tables ("6,018.4", "46.7K"), shortest readable
// values in rules and diffs ("5421.3", "0.8125"), signed percentages for
// changes ("-9.6%").
package numfmt

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// NotANumber is what Fixed shows for NaN and ±Inf: a dash, as reports show
// a value that does not apply.
const NotANumber = "—"

// Group inserts thousands separators into the integer part of a decimal
// number as strconv writes it: "12247.5" → "12,247.5", "-1234" → "-1,234".
func Group(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac := s, ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		intPart, frac = s[:i], s[i:]
	}
	var b strings.Builder
	b.WriteString(sign)
	for i := range len(intPart) {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(intPart[i])
	}
	return b.String() + frac
}

// Int formats n with thousands separators: 24000000 → "24,000,000".
func Int(n int64) string { return Group(strconv.FormatInt(n, 10)) }

// Fixed formats v with prec decimals and thousands separators:
// Fixed(6018.44, 1) = "6,018.4". A value that rounds to zero has no minus
// sign ("0.0", not "-0.0"); NaN and ±Inf are NotANumber.
func Fixed(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return NotANumber
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if s == "-0" || strings.HasPrefix(s, "-0.") && strings.Trim(s[3:], "0") == "" {
		s = s[1:]
	}
	return Group(s)
}

// Thousands renders a number in thousands with at most one decimal, no
// trailing ".0" and a K: 46700 → "46.7K", 12000 → "12K", 1234567 →
// "1,234.6K". Callers choose from which value on it reads better than the
// plain number.
func Thousands(v float64) string {
	s := strconv.FormatFloat(v/1000, 'f', 1, 64)
	return Group(strings.TrimSuffix(s, ".0")) + "K"
}

// Lag is a lag or a short time in ms as slogate writes it: whole ms from
// 100 ms, one decimal from 10 ms, two below, without grouping ("142",
// "12.3", "1.25").
func Lag(ms float64) string {
	switch {
	case ms >= 100:
		return strconv.FormatFloat(ms, 'f', 0, 64)
	case ms >= 10:
		return strconv.FormatFloat(ms, 'f', 1, 64)
	}
	return strconv.FormatFloat(ms, 'f', 2, 64)
}

// Shortest renders v with as many decimals as it needs and thousands
// separators: 30 → "30", 1.5 → "1.5", 1500 → "1,500".
func Shortest(v float64) string { return Group(strconv.FormatFloat(v, 'f', -1, 64)) }

// Value renders a measured number in a rule, a verdict or a diff: one
// decimal from 100 up (5421.3), two below (12.35), four significant digits
// under 1 (0.8125), without trailing zeros (6000, not 6000.0) and without
// thousands separators, so that it can be pasted back into a spec.
func Value(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	var s string
	switch a := math.Abs(v); {
	case a >= 100:
		s = strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		s = strconv.FormatFloat(v, 'f', 2, 64)
	case a == 0:
		return "0"
	default:
		s = strconv.FormatFloat(v, 'g', 4, 64)
	}
	if strings.Contains(s, ".") && !strings.ContainsAny(s, "eE") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// Delta renders a relative change as a signed percentage with one decimal:
// -0.096 → "-9.6%", 0.004 → "+0.4%". A change that rounds to zero is "0.0%".
func Delta(frac float64) string {
	if frac == 0 || math.Abs(frac) < 0.0005 {
		return "0.0%"
	}
	return fmt.Sprintf("%+.1f%%", frac*100)
}

// Percent renders a fraction as a percentage without a sign and without
// trailing zeros: 0.05 → "5%", 0.125 → "12.5%".
func Percent(frac float64) string {
	return strconv.FormatFloat(frac*100, 'f', -1, 64) + "%"
}

// List renders a list of values the way diagnostics and report headers
// enumerate them, each by format and separated by commas:
// List([]int{1, 8, 64}, strconv.Itoa) = "1, 8, 64".
func List[T any](xs []T, format func(T) string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = format(x)
	}
	return strings.Join(s, ", ")
}
