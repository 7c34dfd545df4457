package numfmt

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParsePercent reads a share as people write it, the inverse of Percent:
// a percentage ("5%", "12.5 %") or a fraction ("0.05"), spaces around
// either. It returns the fraction, range unchecked (each caller has its
// own: a tolerance from 0 to 100 %, a significance level between 0 and
// 1); an error for what is no finite number. The one parser of shares:
// spec's tolerance, the command line's -tolerance and -margin, -alpha.
func ParsePercent(s string) (float64, error) {
	text := strings.TrimSpace(s)
	num, pct := strings.CutSuffix(text, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a share: write a percentage such as \"5%%\" or a fraction such as 0.05", s)
	}
	if pct {
		v /= 100
	}
	return v, nil
}
