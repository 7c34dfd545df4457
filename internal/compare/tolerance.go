package compare

import (
	"fmt"

	"github.com/slogate/slogate/internal/numfmt"
)

// ParseAlpha parses a significance level written as a fraction ("0.05") or
// a percentage ("5%"); it must lie strictly between 0 and 1.
func ParseAlpha(s string) (float64, error) {
	v, err := numfmt.ParsePercent(s)
	if err != nil {
		return 0, err
	}
	if v <= 0 || v >= 1 {
		return 0, fmt.Errorf("%q is not a significance level: write it like 0.05 (above 0, below 1)", s)
	}
	return v, nil
}
