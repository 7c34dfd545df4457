package report

import (
	"slices"
	"testing"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestViewErrorsNameTheirCells: the Errors section lists every errored
// cell by phase, matrix, context and concurrency, prefill first, then each
// matrix row by row, with "no reason recorded" where the cell has none.
func TestViewErrorsNameTheirCells(t *testing.T) {
	cell := func(matrix string, ctx, conc int, st vocab.Status, reason string) result.DecodeCell {
		return result.DecodeCell{Matrix: matrix, Context: ctx, Concurrency: conc, Status: st, Reason: reason}
	}
	res := &result.Results{Schema: result.Schema, Server: result.Server{Name: "qwen"},
		Prefill: []result.PrefillCell{{Context: 4096, Status: vocab.StatusError, Reason: "timed out"}},
		Decode: []result.DecodeCell{
			cell("decode", 16384, 1, vocab.StatusError, ""),
			cell("decode", 8192, 4, vocab.StatusError, "HTTP 500"),
			cell("decode", 8192, 1, vocab.StatusValid, ""),
			cell("long", 131072, 2, vocab.StatusError, "stream cut"),
		}}
	var got []string
	for _, e := range newView(res).Errors {
		got = append(got, e.String())
	}
	want := []string{
		"prefill ctx=4K: timed out",
		"decode ctx=16K conc=1: no reason recorded",
		"decode ctx=8K conc=4: HTTP 500",
		"long ctx=128K conc=2: stream cut",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Errors =\n%q\nwant\n%q", got, want)
	}
}
