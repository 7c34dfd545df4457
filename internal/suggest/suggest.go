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

// Name is Closest for names made of words joined by "_" (metric names):
// when no candidate is close, the only candidate that is name with one word
// added ("ttft_p99" for ttft_ms_p99: the unit left out); "" when there is
// none or several.
func Name(name string, candidates []string) string {
	if c := Closest(name, candidates); c != "" {
		return c
	}
	words := strings.Split(name, "_")
	found := ""
	for _, c := range candidates {
		cw := strings.Split(c, "_")
		if len(cw) != len(words)+1 {
			continue
		}
		for i := range cw {
			if strings.Join(append(append([]string{}, cw[:i]...), cw[i+1:]...), "_") == name {
				if found != "" && found != c {
					return ""
				}
				found = c
				break
			}
		}
	}
	return found
}
