package vocab

import (
	"fmt"
	"strconv"
	"strings"
)

// FormatTokens renders a token count the way the seed reports name context
// lengths: "8K" for 8192, "251K" for 257024, "1024K" for 1048576, and the
// plain number when it is not a whole multiple of 1024.
func FormatTokens(n int) string {
	if n > 0 && n%1024 == 0 {
		return strconv.Itoa(n/1024) + "K"
	}
	return strconv.Itoa(n)
}

// ParseTokens parses a context size: a plain integer, or an integer with a
// K or M suffix meaning ×1024 or ×1024² ("8K" = 8192, "1M" = 1048576). The
// suffix is case-insensitive. The result must be positive.
func ParseTokens(s string) (int, error) {
	t := strings.TrimSpace(s)
	mult := 1
	switch {
	case strings.HasSuffix(t, "K"), strings.HasSuffix(t, "k"):
		mult, t = 1024, t[:len(t)-1]
	case strings.HasSuffix(t, "M"), strings.HasSuffix(t, "m"):
		mult, t = 1024*1024, t[:len(t)-1]
	}
	n, err := strconv.Atoi(t)
	if err != nil || t == "" || strings.ContainsAny(t, "+-") {
		return 0, fmt.Errorf("%q is not a token count: write an integer or a number with a K or M suffix, like \"8K\" or \"1M\"", s)
	}
	if n <= 0 {
		return 0, fmt.Errorf("%q is not a positive token count", s)
	}
	return n * mult, nil
}
