package result

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/slogate/slogate/internal/vocab"
)

// RequestsFile is the name of the per-request records beside results.json
// (docs/method.md#per-request-records).
const RequestsFile = "requests.jsonl"

// trafficPhase is how a traffic record's phase reads in a line, to skip
// the others without decoding them.
var trafficPhase = []byte(`"phase":"` + string(vocab.PhaseTraffic) + `"`)

// ReadRequests fills each traffic cell's Requests from dir/requests.jsonl:
// the records of the cell's name, in the file's order, a request recorded
// twice (a cell measured again after -resume) by its last record. Only
// traffic records are decoded, and only when r has traffic cells. A
// missing file leaves RequestsRead false and the cells without records
// (a run written before requests.jsonl, or a folder without it); a torn
// last line (a crash while writing) is ignored, and any other malformed
// traffic line is an error naming it.
func (r *Results) ReadRequests(dir string) error {
	if len(r.Traffic) == 0 {
		return nil
	}
	path := filepath.Join(dir, RequestsFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	defer f.Close()
	at := map[string]int{}
	for i := range r.Traffic {
		at[r.Traffic[i].Ref().Name()] = i
		r.Traffic[i].Requests = nil
	}
	type key struct{ index, turn int }
	seen := make([]map[key]int, len(r.Traffic))
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	var pending error
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if pending != nil {
			return pending
		}
		if !bytes.Contains(b, trafficPhase) {
			continue
		}
		var rec RequestRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			pending = fmt.Errorf("%s line %d: not a request record (%v)", path, line, err)
			continue
		}
		i, ok := at[rec.Cell]
		if !ok || rec.Phase != vocab.PhaseTraffic {
			continue
		}
		c := &r.Traffic[i]
		if rec.Index != nil {
			if seen[i] == nil {
				seen[i] = map[key]int{}
			}
			k := key{*rec.Index, rec.Turn}
			if j, dup := seen[i][k]; dup {
				c.Requests[j] = rec
				continue
			}
			seen[i][k] = len(c.Requests)
		}
		c.Requests = append(c.Requests, rec)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	r.RequestsRead = true
	return nil
}
