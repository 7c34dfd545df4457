package result

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/slogate/slogate/internal/vocab"
)

// Read loads a results.json file and checks its schema, the outputs of
// its correctness blocks from correctness.jsonl beside it, and its traffic
// cells' requests from requests.jsonl (ReadRequests).
func Read(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r, err := Decode(path, b)
	if err != nil {
		return nil, err
	}
	if err := r.ReadCorrectness(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if err := r.ReadRequests(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return r, nil
}

// Decode parses results.json content, of the current Schema or of
// SchemaV1 (read as the current one); name is used in error messages.
func Decode(name string, b []byte) (*Results, error) {
	var r Results
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: not a slogate results file (%v): pass a results.json written by slogate run", name, err)
	}
	if r.Schema == MergedSchema {
		return nil, fmt.Errorf("%s: is the merged results of several servers (slogate merge): pass the results.json of one server, in the folder beside it named after the server", name)
	}
	switch r.Schema {
	case Schema:
	case SchemaV1:
		// Its plain-string warnings and notes were read as warnings of
		// no code (warning.Warning's UnmarshalJSON): what is in memory
		// is the current schema.
		r.Schema = Schema
	default:
		return nil, fmt.Errorf("%s: schema is %q, want %q or %q (was it written by slogate run?)", name, r.Schema, Schema, SchemaV1)
	}
	return &r, nil
}

// Write saves r as indented JSON at path atomically (write to a temporary
// file in the same folder, then rename), so a crash never leaves half a file.
func (r *Results) Write(path string) error {
	if r.Schema == "" {
		r.Schema = Schema
	}
	b, err := r.Marshal()
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, b)
}

// Marshal returns r as the content of a results.json file: indented JSON
// ending in a newline, the form Write saves and `slogate report -format
// json` prints.
func (r *Results) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// WriteFileAtomic writes data to path through a temporary file and a rename.
func WriteFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	// CreateTemp makes the file 0600; results are meant to be read by others
	// (CI artifact uploaders run as other users).
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// CellRecord is one line of cells.jsonl: exactly one of Prefill, Decode and Traffic is set.
type CellRecord struct {
	Server  string       `json:"server"`
	Phase   vocab.Phase  `json:"phase"`
	Prefill *PrefillCell `json:"prefill,omitempty"`
	Decode  *DecodeCell  `json:"decode,omitempty"`
	Traffic *TrafficCell `json:"traffic,omitempty"`
}

// AppendCell writes one record as a single JSON line. Callers append to an
// O_APPEND file and sync, so every finished cell survives a crash.
func AppendCell(w io.Writer, rec CellRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ReadCells reads a cells.jsonl stream. A torn last line (a crash while
// writing) is ignored; any other malformed line is an error naming its line.
func ReadCells(r io.Reader) ([]CellRecord, error) {
	var out []CellRecord
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	var pendingErr error
	line := 0
	for sc.Scan() {
		line++
		if pendingErr != nil {
			return nil, pendingErr
		}
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var rec CellRecord
		if err := json.Unmarshal(b, &rec); err != nil || rec.cells() != 1 {
			pendingErr = fmt.Errorf("cells.jsonl line %d: not a cell record (the file is damaged: delete that line to keep the other cells, or measure again without -resume)", line)
			continue
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// cells counts the cells a record carries (exactly one when well formed).
func (rec CellRecord) cells() int {
	n := 0
	if rec.Prefill != nil {
		n++
	}
	if rec.Decode != nil {
		n++
	}
	if rec.Traffic != nil {
		n++
	}
	return n
}

// RenderFileAtomic renders a file into memory and writes it atomically as
// dir/name, so that a render that fails half-way leaves the previous file
// (or none) rather than a torn one. The error names the file.
func RenderFileAtomic(dir, name string, render func(io.Writer) error) error {
	var b bytes.Buffer
	if err := render(&b); err != nil {
		return fmt.Errorf("rendering %s: %w", name, err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, name), b.Bytes()); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

// AppendFile appends b to the file at path, creating it.
func AppendFile(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}
