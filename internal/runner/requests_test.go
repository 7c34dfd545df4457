package runner

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/slogate/slogate/internal/result"
)

// TestRequestLogWritesOnSync: records reach the file when the log syncs (a
// cell is recorded), one JSON line each, from concurrent writers.
func TestRequestLogWritesOnSync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "requests.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	l := newRequestLog(f)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 10 {
				l.write(&result.RequestRecord{Cell: "decode/ctx=1K/conc=8", Stream: i + 1, Repeat: j + 1, Status: result.RequestFinished})
			}
		}()
	}
	wg.Wait()
	if err := l.sync(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.Open(path)
	defer b.Close()
	n := 0
	sc := bufio.NewScanner(b)
	for sc.Scan() {
		var r result.RequestRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		n++
	}
	if n != 80 {
		t.Errorf("%d lines after sync, want 80", n)
	}
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
}
