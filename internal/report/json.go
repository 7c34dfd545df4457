package report

import (
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/slogate/slogate/internal/vocab"
)

// event is one test2json event; the field order and omitempty rules are
// those of cmd/test2json, so tools that read `go test -json` read ours.
type event struct {
	Time    time.Time
	Action  string
	Package string   `json:",omitempty"`
	Test    string   `json:",omitempty"`
	Elapsed *float64 `json:",omitempty"`
	Output  *string  `json:",omitempty"`
}

// jsonStream writes a run as test2json events (`go test -json`).
type jsonStream struct {
	mu  sync.Mutex
	w   io.Writer
	pkg string
	now func() time.Time
	// startSent is set once the package's "start" event is written.
	startSent bool
	// running tests, by name, to their start time.
	running map[string]time.Time
	// root is the open parent test ("qwen" for "qwen/decode/…"), whose
	// outcome is the worst of its subtests, as go test reports a parent.
	root        string
	rootStart   time.Time
	rootOutcome vocab.Outcome
	err         error
}

// NewJSONStream returns a TestStream that writes one test2json event per
// line to w, as `go test -json` does, with pkg (the spec file) as Package.
// Test names "server/…" are subtests of a parent test "server", which the
// stream opens before the server's first test and closes with the worst
// outcome of its subtests, so gotestsum and go-junit-report see the usual
// parent/subtest shape. Nothing but events is written.
func NewJSONStream(w io.Writer, pkg string) TestStream {
	return newJSONStream(w, pkg, time.Now)
}

func newJSONStream(w io.Writer, pkg string, now func() time.Time) *jsonStream {
	return &jsonStream{w: w, pkg: pkg, now: now, running: map[string]time.Time{}}
}

func (s *jsonStream) emit(e event) {
	if s.err != nil {
		return
	}
	if !s.startSent {
		s.startSent = true
		if e.Action != "start" {
			s.emit(event{Time: e.Time, Action: "start", Package: s.pkg})
		}
	}
	e.Package = s.pkg
	b, err := json.Marshal(e)
	if err != nil {
		s.err = err
		return
	}
	_, s.err = s.w.Write(append(b, '\n'))
}

func (s *jsonStream) output(test, text string) {
	s.emit(event{Time: s.now(), Action: "output", Test: test, Output: &text})
}

func rootOf(test string) string {
	root, _, _ := strings.Cut(test, "/")
	return root
}

func (s *jsonStream) openRoot(test string) {
	root := rootOf(test)
	if root == test || root == s.root {
		return
	}
	s.closeRoot()
	s.root, s.rootStart, s.rootOutcome = root, s.now(), vocab.Pass
	s.emit(event{Time: s.rootStart, Action: "run", Test: root})
	s.output(root, runLine(root))
}

func (s *jsonStream) closeRoot() {
	if s.root == "" {
		return
	}
	t := s.now()
	el := t.Sub(s.rootStart)
	s.output(s.root, endLine(s.root, s.rootOutcome, el))
	secs := roundSeconds(el)
	s.emit(event{Time: t, Action: action(s.rootOutcome), Test: s.root, Elapsed: &secs})
	s.root = ""
}

// Run announces a test.
func (s *jsonStream) Run(test string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.openRoot(test)
	t := s.now()
	s.running[test] = t
	s.emit(event{Time: t, Action: "run", Test: test})
	s.output(test, runLine(test))
}

// Output adds one detail line to a test.
func (s *jsonStream) Output(test, line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range strings.Split(line, "\n") {
		s.output(test, detailLine(l))
	}
}

// End closes a test with its outcome.
func (s *jsonStream) End(test string, o vocab.Outcome, elapsed time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.running[test]; !ok {
		// A test ended without Run: announce it, so readers see a whole test.
		s.openRoot(test)
		s.emit(event{Time: s.now(), Action: "run", Test: test})
		s.output(test, runLine(test))
	}
	delete(s.running, test)
	s.output(test, endLine(test, o, elapsed))
	secs := roundSeconds(elapsed)
	s.emit(event{Time: s.now(), Action: action(o), Test: test, Elapsed: &secs})
	if rootOf(test) == s.root {
		s.rootOutcome = vocab.Worst(s.rootOutcome, o)
	}
}

// Log writes a package-level output line (no test).
func (s *jsonStream) Log(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.output("", strings.TrimSuffix(line, "\n")+"\n")
}

// Progress is not part of test2json: ignored.
func (s *jsonStream) Progress(Progress) {}

// Finish closes the open parent test and writes the package's final
// PASS/ok or FAIL lines and its pass/fail event.
func (s *jsonStream) Finish(o vocab.Outcome, elapsed time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeRoot()
	if o == vocab.Skip {
		o = vocab.Pass // a package with only skipped tests is "ok"
	}
	for _, l := range finishLines(s.pkg, o, elapsed) {
		s.output("", l)
	}
	secs := roundSeconds(elapsed)
	s.emit(event{Time: s.now(), Action: action(o), Elapsed: &secs})
}

// roundSeconds is elapsed in seconds with millisecond precision, as
// test2json reports it.
func roundSeconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond).Milliseconds()) / 1000
}
