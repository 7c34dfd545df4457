package runner

import (
	"bufio"
	"errors"
	"os"
	"sync"

	"github.com/slogate/slogate/internal/result"
)

// This file writes requests.jsonl (docs/method.md#per-request-records): one
// line per generation request, written when the request ends (the records
// are package measure's), so that the memory it takes is one record per
// request in flight whatever the run's length; the file is flushed and
// synced with cells.jsonl as each cell is recorded, and when the run ends.

// requestLog is the run's requests.jsonl. Its methods are safe for
// concurrent use by the requests of a cell, and do nothing on a nil log.
type requestLog struct {
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	err error // the first write error, reported at the next sync
}

func newRequestLog(f *os.File) *requestLog {
	return &requestLog{f: f, w: bufio.NewWriterSize(f, 64<<10)}
}

// write appends one record (buffered).
func (l *requestLog) write(rec *result.RequestRecord) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = result.AppendRequest(l.w, rec)
	}
}

// sync flushes the buffered records to the file and syncs it.
func (l *requestLog) sync() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = l.w.Flush()
	}
	if l.err == nil {
		l.err = l.f.Sync()
	}
	return l.err
}

// close syncs and closes the file.
func (l *requestLog) close() error {
	if l == nil {
		return nil
	}
	err := l.sync()
	return errors.Join(err, l.f.Close())
}
