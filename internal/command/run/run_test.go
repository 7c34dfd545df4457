package run

import (
	"path/filepath"
	"testing"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestUnmeasuredCells: a cell that could not be measured is exit 3 naming
// it, its reason, the log and the resume command; valid, queued and
// over-capacity cells are not.
func TestUnmeasuredCells(t *testing.T) {
	measured := &result.Results{
		Prefill: []result.PrefillCell{{Context: 8192, Status: vocab.StatusValid}},
		Decode: []result.DecodeCell{{Matrix: "decode", Context: 8192, Concurrency: 64, Status: vocab.StatusQueued},
			{Matrix: "decode", Context: 262144, Concurrency: 128, Status: vocab.StatusOverCapacity}},
	}
	if err := unmeasuredCells("q", measured, "OUT", false); err != nil {
		t.Errorf("every cell measured or skipped: %v, want nil", err)
	}
	failed := &result.Results{Decode: []result.DecodeCell{{Matrix: "decode", Context: 8192, Concurrency: 1, Status: vocab.StatusError, Reason: "stream stalled"}}}
	tests := []struct {
		name     string
		endpoint bool
		want     string
	}{
		{name: "launched server", want: "q: 1 cell(s) could not be measured:\n  decode/ctx=8K/conc=1: stream stalled\nsee " + filepath.Join("OUT", "server.log") + "; `slogate run -resume OUT` measures them again and keeps the others"},
		{name: "endpoint", endpoint: true, want: "q: 1 cell(s) could not be measured:\n  decode/ctx=8K/conc=1: stream stalled\nsee the server's log; `slogate run -resume OUT` measures them again and keeps the others"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := unmeasuredCells("q", failed, "OUT", tc.endpoint)
			if exit.Code(err) != exit.Infra || err.Error() != tc.want {
				t.Errorf("err = %v (exit %d), want exit 3:\n%s", err, exit.Code(err), tc.want)
			}
		})
	}
}
