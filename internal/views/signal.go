package views

import (
	"fmt"
	"io"

	"github.com/slogate/slogate/internal/interrupt"
)

// WriteSignal writes the line of a signal the command caught: the first
// named as kill(1) names it (SIGINT, SIGTERM) with what the command does,
// the second with what it does now. A command that is itself the server
// (`slogate sim`) says it shuts down: its stderr is a run's server.log,
// where "stopping the server and writing what was measured" misled.
func WriteSignal(w io.Writer, s interrupt.Signal) {
	switch {
	case s.Second && s.Server:
		fmt.Fprintln(w, "slogate: second signal: the simulator is already shutting down")
	case s.Second:
		fmt.Fprintln(w, "slogate: second signal: killing the server's process group now")
	case s.Server:
		fmt.Fprintf(w, "slogate: %s: the simulator is shutting down\n", s.Name)
	default:
		fmt.Fprintf(w, "slogate: %s: stopping the server and writing what was measured (signal again to kill the server now)\n", s.Name)
	}
}
