package result

import (
	"encoding/json"
	"fmt"

	"github.com/slogate/slogate/internal/vocab"
)

// MergedSchema is the value of the "schema" key of the results.json that
// `slogate merge` writes (docs/ci.md#merged-results).
const MergedSchema = "slogate/merged/v1"

// Merged is several runs combined into one results set by `slogate merge`:
// one entry per server, each with its results as recorded, and the verdict
// of the whole set.
type Merged struct {
	Schema string `json:"schema"`
	// Outcome is the worst outcome of the runs.
	Outcome vocab.Outcome `json:"outcome"`
	// ExitCode is the worst exit code of the runs: what `slogate merge` exits with.
	ExitCode int         `json:"exit_code"`
	Runs     []MergedRun `json:"runs"`
}

// MergedRun is one server's run within a Merged set.
type MergedRun struct {
	// Dir is the folder inside the merge's output that holds this run's
	// results.json, the run's name (RunNames: the server's, or
	// <spec>/<server> when two runs share a server name):
	// `-baseline OUT/<dir>/results.json`.
	Dir string `json:"dir"`
	// Source is the results folder the run was read from.
	Source string `json:"source"`
	// Outcome is the run's outcome: the worst verdict, or error when the
	// run ended early or a cell could not be measured.
	Outcome vocab.Outcome `json:"outcome"`
	// ExitCode is what `slogate run` exited with for this run alone,
	// derived from what it recorded (0, 1, 2 or 3).
	ExitCode int      `json:"exit_code"`
	Results  *Results `json:"results"`
}

// Marshal returns m as the content of a merged results.json: indented JSON
// ending in a newline.
func (m *Merged) Marshal() ([]byte, error) {
	if m.Schema == "" {
		m.Schema = MergedSchema
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// DecodeMerged parses a merged results.json; name is used in error messages.
func DecodeMerged(name string, b []byte) (*Merged, error) {
	var m Merged
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: not a slogate merged results file (%v)", name, err)
	}
	if m.Schema != MergedSchema {
		return nil, fmt.Errorf("%s: schema is %q, want %q (was it written by slogate merge?)", name, m.Schema, MergedSchema)
	}
	return &m, nil
}
