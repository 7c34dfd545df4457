package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// FormatValue renders a measured number for people: one decimal from 100
// up (5421.3), two below (12.35), four significant digits under 1 (0.8125),
// without trailing zeros (6000, not 6000.0).
func FormatValue(v float64) string {
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

// FormatDelta renders a relative change as a signed percentage with one
// decimal: "-9.6%", "+0.4%". A change of exactly zero is "0.0%".
func FormatDelta(frac float64) string {
	if frac == 0 || math.Abs(frac) < 0.0005 {
		return "0.0%"
	}
	return fmt.Sprintf("%+.1f%%", frac*100)
}

// FormatPercent renders a tolerance fraction as a percentage without a
// sign: 0.05 → "5%", 0.125 → "12.5%".
func FormatPercent(frac float64) string {
	return strconv.FormatFloat(frac*100, 'f', -1, 64) + "%"
}

// ParsePercent parses a tolerance or margin written as a percentage ("5%",
// "12.5%") or as a fraction ("0.05"). The result is a fraction in [0, 1).
func ParsePercent(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	t = strings.TrimSuffix(t, "%")
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a percentage: write it like \"5%%\" or \"0.05\"", s)
	}
	if pct {
		v /= 100
	} else if v >= 1 {
		return 0, fmt.Errorf("%q is ambiguous: write a percentage with %% (\"%s%%\") or a fraction below 1", s, t)
	}
	if v < 0 || v >= 1 {
		return 0, fmt.Errorf("%q is out of range: a tolerance is between 0%% and 100%%", s)
	}
	return v, nil
}
