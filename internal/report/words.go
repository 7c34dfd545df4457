package report

import (
	"strings"

	"github.com/slogate/slogate/internal/vocab"
)

// words.go holds the words several sections share: a cell's status, a
// verdict's outcome, a count's noun.

// statusWord is a cell status as the seeds word it.
func statusWord(s vocab.Status) string {
	switch s {
	case vocab.StatusValid:
		return "Valid"
	case vocab.StatusQueued:
		return "Requests queued"
	case vocab.StatusOverCapacity:
		return "Over capacity"
	case vocab.StatusError:
		return "Error"
	case vocab.StatusUnmeasurable:
		return "Unmeasurable"
	}
	if s == "" {
		return "Not measured"
	}
	return string(s)
}

// outcomeWord is a verdict outcome as go test prints it.
func outcomeWord(o vocab.Outcome) string { return strings.ToUpper(o.String()) }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
