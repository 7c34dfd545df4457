package views

import (
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/interrupt"
)

// TestWriteSignal: each signal's line, a run's and the simulator's.
func TestWriteSignal(t *testing.T) {
	tests := []struct {
		name string
		s    interrupt.Signal
		want string
	}{
		{name: "run, first", s: interrupt.Signal{Name: "SIGTERM"},
			want: "slogate: SIGTERM: stopping the server and writing what was measured (signal again to kill the server now)\n"},
		{name: "run, second", s: interrupt.Signal{Name: "SIGINT", Second: true}, want: "slogate: second signal: killing the server's process group now\n"},
		{name: "simulator, first", s: interrupt.Signal{Name: "SIGINT", Server: true}, want: "slogate: SIGINT: the simulator is shutting down\n"},
		{name: "simulator, second", s: interrupt.Signal{Name: "SIGTERM", Second: true, Server: true},
			want: "slogate: second signal: the simulator is already shutting down\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			WriteSignal(&b, tt.s)
			if b.String() != tt.want {
				t.Errorf("WriteSignal = %q, want %q", b.String(), tt.want)
			}
		})
	}
}
