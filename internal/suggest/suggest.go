// Package suggest finds the name a user probably meant when they typed one
// that does not exist: a command, a flag. It is shared by the CLI
// (internal/cli) and the simulator's --sim-* flags (sim), so that a typo
// gets the same "did you mean" everywhere.
package suggest

import (
	"strings"

	"github.com/agext/levenshtein"
)

// Closest returns the candidate the user probably meant by name: the only
// candidate that name begins ("-dur" for -duration), else the one at the
// smallest edit distance below 3 (the rule HCL uses to suggest an attribute
// name); "" when there is none.
func Closest(name string, candidates []string) string {
	if name == "" {
		return ""
	}
	prefixed := ""
	for _, c := range candidates {
		if strings.HasPrefix(c, name) {
			if prefixed != "" {
				prefixed = "" // ambiguous
				break
			}
			prefixed = c
		}
	}
	if prefixed != "" {
		return prefixed
	}
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := levenshtein.Distance(name, c, nil); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}
