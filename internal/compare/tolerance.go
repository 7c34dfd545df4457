package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParsePercent parses a tolerance or margin written as a percentage ("5%",
// "12.5%") or as a fraction ("0.05"). The result is a fraction in [0, 1);
// numfmt.Percent writes it back.
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

// ParseAlpha parses a significance level written as a fraction ("0.05") or
// a percentage ("5%"); it must lie strictly between 0 and 1.
func ParseAlpha(s string) (float64, error) {
	v, err := ParsePercent(s)
	if err != nil {
		return 0, err
	}
	if v <= 0 {
		return 0, fmt.Errorf("%q is not a significance level: write it like 0.05 (above 0, below 1)", s)
	}
	return v, nil
}
