package vocab

import (
	"path"
	"path/filepath"
	"slices"
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
//	<server>/baseline/search/<name>           a rate search's answer compared with the baseline's
//	                                          (capacity lost; Block "search/<name>")
//	<server>/correctness/<name>               a correctness block (against the baseline's when given)
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

// KindCorrectness is the kind of a correctness block's test,
// "<server>/correctness/<name>" (TestID with Block the block's name).
const KindCorrectness = "correctness"

// RunKey identifies one server's run in a set: its spec file and the
// server's name.
type RunKey struct{ Spec, Server string }

// RunNames names each run of a set the way tests, merged results folders
// and CI matrix jobs name it (docs/ci.md#run-names): the server's name, or
// <spec>/<server> when another run of the set, of another spec, has a
// server of the same name, as the Qwen seed spec and demo.hcl both have
// "qwen". <spec> is SpecNames of the specs sharing that name: the file's
// base name ("demo/qwen"), with as many of its folders as tell it from the
// others when their base names are the same
// ("sglang/ling-3.0-flash-int4-h200x2/ling" beside
// "ling-3.0-flash-int4-h200x2/ling"). A set of one spec keeps the names it
// always had.
func RunNames(runs []RunKey) []string {
	specs := map[string][]string{} // server → the specs that have it (cleaned), in order
	for _, r := range runs {
		if p := filepath.Clean(r.Spec); !slices.Contains(specs[r.Server], p) {
			specs[r.Server] = append(specs[r.Server], p)
		}
	}
	names := make([]string, len(runs))
	for i, r := range runs {
		names[i] = r.Server
		if shared := specs[r.Server]; len(shared) > 1 {
			names[i] = SpecNames(shared)[slices.Index(shared, filepath.Clean(r.Spec))] + "/" + r.Server
		}
	}
	return names
}

// SpecNames names each spec path of a set, without its extension, by the
// shortest tail of its path, relative to the folder all of them share,
// that no other path of the set ends with: the file's base name (SpecName)
// when it alone has it; else as many folders as tell it apart
// ("specs/sglang/ling.hcl" → "sglang/ling" beside "specs/ling.hcl", which
// has no folder left below the shared "specs" and stays "ling"). Equal
// paths (the same file, cleaned) get the same name; distinct ones never do.
func SpecNames(paths []string) []string {
	parts := make([][]string, len(paths))
	for i, p := range paths {
		p = filepath.ToSlash(filepath.Clean(p))
		if dir := path.Dir(p); dir != "." {
			parts[i] = strings.Split(dir, "/")
		}
		parts[i] = append(parts[i], SpecName(p))
	}
	// Drop the folders every path shares (never a file's own name).
	for len(parts) > 0 {
		first := parts[0]
		shared := len(first) > 1
		for _, q := range parts[1:] {
			shared = shared && len(q) > 1 && q[0] == first[0]
		}
		if !shared {
			break
		}
		for i := range parts {
			parts[i] = parts[i][1:]
		}
	}
	tail := func(q []string, d int) string { return strings.Join(q[len(q)-d:], "/") }
	names := make([]string, len(paths))
	for i, p := range parts {
		d := 1
		for ; d < len(p); d++ {
			clash := false
			for j, q := range parts {
				if j != i && len(q) >= d && !slices.Equal(q, p) && tail(q, d) == tail(p, d) {
					clash = true
					break
				}
			}
			if !clash {
				break
			}
		}
		names[i] = tail(p, d)
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
