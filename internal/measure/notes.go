package measure

import (
	"time"

	"github.com/slogate/slogate/internal/warning"
)

// Note is what the meter tells of a run that belongs to no cell's
// result, as a value: PromptsBuilt, PromptsWarmed or Warned. The run view
// writes its line (package views); measure formats none.
type Note interface{ measureNote() }

// PromptsBuilt is what building a context's prompts cost: Prompts
// prompts of Tokens tokens each at context Context, in Took, with
// TokenizeCalls calls of POST /tokenize exchanging Exchanged bytes.
type PromptsBuilt struct {
	Context, Prompts, Tokens int
	Took                     time.Duration
	TokenizeCalls            int
	Exchanged                int64
}

// PromptsWarmed: the prompts of streams 2 to Streams at context Context
// were sent once (max_tokens = 1) in Took, so that every stream starts
// warm (WarmStreams).
type PromptsWarmed struct {
	Context, Streams int
	Took             time.Duration
}

// Warned is a warning the meter attached to the cell being measured,
// told as it is found.
type Warned struct{ Warning warning.Warning }

func (PromptsBuilt) measureNote()  {}
func (PromptsWarmed) measureNote() {}
func (Warned) measureNote()        {}
