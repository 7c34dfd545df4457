package views

import (
	"fmt"
	"io"
)

// WriteSignal writes the line of the first signal the command caught,
// named as kill(1) names it (SIGINT, SIGTERM), with what the command does.
func WriteSignal(w io.Writer, name, doing string) {
	fmt.Fprintf(w, "slogate: %s: %s\n", name, doing)
}

// WriteSecondSignal writes the line of a second signal: what the command
// does now.
func WriteSecondSignal(w io.Writer, doing string) {
	fmt.Fprintln(w, "slogate: "+doing)
}
