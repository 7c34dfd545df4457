package vocab

import (
	"path/filepath"
	"strconv"
	"strings"
)

// TestID identifies one test slogate runs and reports: a measured cell, an
// assert block, an expect block or one of its cells, or one cell compared
// with a baseline. Its Name is the one place test names are spelled, so that
// `-run` filtering (plan), verdicts (assert), the console, JUnit and
// `slogate plan` all agree.
type TestID struct {
	Server string
	// Kind is "" for a measured cell, else KindAssert, KindExpect,
	// KindBaseline or KindSearch.
	Kind string
	// Block is the assert or expect block's name; "" otherwise.
	Block string
	// Cell is the cell tested: required for a measured cell and a baseline
	// comparison, set for one cell of an expect block, nil for an assert and
	// for an expect block as a whole.
	Cell *CellRef
}

// Name is the full test name:
//
//	<server>/decode/ctx=8K/conc=64            a measured decode cell (its matrix label)
//	<server>/prefill/ctx=8K                   a measured prefill cell
//	<server>/traffic/<label>/ctx=8K/rate=4    a measured traffic cell (rate in requests/s)
//	<server>/traffic/<label>/conc=8           a closed-loop traffic cell whose workload sets
//	                                          its lengths (no context; ctx=8K/conc=8 with one)
//	<server>/assert/<name>                    an assert block
//	<server>/expect/<name>                    an expect block as a whole
//	<server>/expect/<name>/ctx=8K/conc=64     one decode cell of an expect block
//	<server>/expect/<name>/ctx=8K             one prefill cell of an expect block (or a
//	                                          decode row, for a value past the matrix's last concurrency)
//	<server>/baseline/decode/ctx=8K/conc=64   one cell compared with a baseline
//	<server>/search/<name>/conc=64            one probe of a search block
//	<server>/search/<name>                    a search block as a whole (-run matches it)
func (t TestID) Name() string {
	parts := []string{t.Server}
	if t.Kind == KindSearch && t.Cell != nil {
		return strings.Join(append(parts, t.Cell.searchNameParts()...), "/")
	}
	if t.Kind != "" {
		parts = append(parts, t.Kind)
	}
	if t.Block != "" {
		parts = append(parts, t.Block)
	}
	if t.Cell != nil {
		// An expect block's values line up with one matrix: its cells are
		// named without the matrix label.
		parts = append(parts, t.Cell.nameParts(t.Kind != KindExpect)...)
	}
	return strings.Join(parts, "/")
}

// TestName is the full test name of the measured cell r:
// "<server>/decode/ctx=8K/conc=64" (TestID.Name with only the cell).
func (r CellRef) TestName(server string) string {
	if r.Search != "" {
		return TestID{Server: server, Kind: KindSearch, Cell: &r}.Name()
	}
	return TestID{Server: server, Cell: &r}.Name()
}

// Name is the cell's name below the server: "prefill/ctx=8K" or
// "decode/ctx=8K/conc=64" (its matrix label first).
func (r CellRef) Name() string {
	if r.Search != "" {
		return strings.Join(r.searchNameParts(), "/")
	}
	return strings.Join(r.nameParts(true), "/")
}

// nameParts are the elements of the cell's name: the phase or matrix label
// (when withLabel), "ctx=8K", and "conc=64" for a decode cell whose
// concurrency is known; a traffic cell's "rate=4" or "conc=8", after
// "ctx=8K" only when the cell has a context.
func (r CellRef) nameParts(withLabel bool) []string {
	var parts []string
	if r.Phase == PhaseTraffic {
		if withLabel {
			parts = append(parts, string(PhaseTraffic), r.Matrix)
		}
		if r.Context > 0 {
			parts = append(parts, "ctx="+FormatTokens(r.Context))
		}
		if r.Concurrency > 0 {
			return append(parts, "conc="+strconv.Itoa(r.Concurrency))
		}
		return append(parts, "rate="+FormatRate(r.Rate))
	}
	if withLabel {
		if r.Phase == PhasePrefill {
			parts = append(parts, string(PhasePrefill))
		} else {
			parts = append(parts, r.MatrixLabel())
		}
	}
	parts = append(parts, "ctx="+FormatTokens(r.Context))
	if r.Phase == PhaseDecode && r.Concurrency > 0 {
		parts = append(parts, "conc="+strconv.Itoa(r.Concurrency))
	}
	return parts
}

// Verdict kinds.
const (
	KindAssert   = "assert"
	KindExpect   = "expect"
	KindBaseline = "baseline"
)

// KindSearch is the kind of the tests of an SLO search: each probe is a
// test "<server>/search/<name>/conc=N" (docs/method.md#search).
const KindSearch = "search"

// RunKey identifies one server's run in a set: its spec file and the
// server's name.
type RunKey struct{ Spec, Server string }

// RunNames names each run of a set the way tests, merged results folders
// and CI matrix jobs name it (docs/ci.md#run-names): the server's name, or
// <spec>/<server> (SpecName) when another run of the set, of another spec,
// has a server of the same name, as the Qwen seed spec and demo.hcl both
// have "qwen".
func RunNames(runs []RunKey) []string {
	specs := map[string]map[string]bool{} // server → the specs that have it
	for _, r := range runs {
		if specs[r.Server] == nil {
			specs[r.Server] = map[string]bool{}
		}
		specs[r.Server][r.Spec] = true
	}
	names := make([]string, len(runs))
	for i, r := range runs {
		names[i] = r.Server
		if len(specs[r.Server]) > 1 {
			names[i] = SpecName(r.Spec) + "/" + r.Server
		}
	}
	return names
}

// SpecName is a spec path's file name without its folder and extension
// ("specs/qwen3.5-4b-h200-dflash.hcl" → "qwen3.5-4b-h200-dflash").
func SpecName(path string) string {
	base := filepath.Base(path)
	if ext := filepath.Ext(base); ext != "" && ext != base {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}
