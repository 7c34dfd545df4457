// Package numfmt formats numbers for people the one way slogate's reports,
// console and simulator log all show them: thousands separated by commas.
package numfmt

import (
	"strconv"
	"strings"
)

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
