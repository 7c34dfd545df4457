package runner

import (
	"time"

	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// nopObserver discards everything.
type nopObserver struct{}

func (nopObserver) Note(event.Note)                               {}
func (nopObserver) CellStart(vocab.CellRef)                       {}
func (nopObserver) Progress(event.Progress)                       {}
func (nopObserver) PrefillDone(result.PrefillCell, time.Duration) {}
func (nopObserver) DecodeDone(result.DecodeCell, time.Duration)   {}
