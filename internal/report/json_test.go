package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/vocab"
)

// printStreamEnv makes the test binary print demoStream's events and exit
// (TestMain), so gotestsum can run it as a --raw-command.
const printStreamEnv = "SLOGATE_REPORT_PRINT_STREAM"

func TestMain(m *testing.M) {
	if os.Getenv(printStreamEnv) == "1" {
		s := newJSONStream(os.Stdout, "specs/demo.hcl", fakeClock())
		demoStream(s)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeClock advances 250 ms per reading from a fixed instant.
func fakeClock() func() time.Time {
	t := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(250 * time.Millisecond)
		return t
	}
}

// demoStream plays a small run: a passing cell, an over-capacity cell, a
// passing and a failing assertion, an infrastructure error.
func demoStream(s TestStream) {
	s.Log("starting server demo (simulator)")
	s.Run("demo/prefill/ctx=8K")
	s.Output("demo/prefill/ctx=8K", "46.7K tok/s · 175 ms TTFT")
	s.End("demo/prefill/ctx=8K", vocab.Pass, 1200*time.Millisecond)
	s.Run("demo/decode/ctx=8K/conc=64")
	s.Output("demo/decode/ctx=8K/conc=64", "6,018.4 tok/s · 1,027 ms TTFT")
	s.End("demo/decode/ctx=8K/conc=64", vocab.Pass, 2*time.Second)
	s.Run("demo/decode/ctx=251K/conc=128")
	s.Output("demo/decode/ctx=251K/conc=128", "over capacity: 128 × (257024 + 4096) > 3370240 KV tokens")
	s.End("demo/decode/ctx=251K/conc=128", vocab.Skip, 0)
	s.Run("demo/assert/decode_8k_1")
	s.End("demo/assert/decode_8k_1", vocab.Pass, 0)
	s.Run("demo/assert/decode_8k_64")
	s.Output("demo/assert/decode_8k_64", `specs/demo.hcl:42: decode["8K"][64].total_tps = 5421.3, want >= 6000 (-9.6%)`)
	s.Output("demo/assert/decode_8k_64", "    decode throughput at 8K x 64 fell below 6,000 tok/s")
	s.End("demo/assert/decode_8k_64", vocab.Fail, 0)
	s.Run("demo/assert/needs_16k")
	s.Output("demo/assert/needs_16k", "specs/demo.hcl:50: cell not measured: over capacity")
	s.End("demo/assert/needs_16k", vocab.Error, 0)
	s.Progress(Progress{Test: "ignored"})
	s.Finish(vocab.Error, 3500*time.Millisecond)
}

func TestJSONStreamGolden(t *testing.T) {
	var b bytes.Buffer
	demoStream(newJSONStream(&b, "specs/demo.hcl", fakeClock()))
	golden(t, "stream.jsonl", b.Bytes())

	// Every line is one event with the test2json fields, and the Output
	// texts concatenate to exactly what go test -v would print.
	var out strings.Builder
	sc := bufio.NewScanner(&b)
	n := 0
	for sc.Scan() {
		n++
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d is not JSON: %v", n, err)
		}
		for k := range e {
			switch k {
			case "Time", "Action", "Package", "Test", "Elapsed", "Output":
			default:
				t.Errorf("line %d: unexpected key %q", n, k)
			}
		}
		if _, err := time.Parse(time.RFC3339Nano, e["Time"].(string)); err != nil {
			t.Errorf("line %d: Time: %v", n, err)
		}
		if e["Package"] != "specs/demo.hcl" {
			t.Errorf("line %d: Package = %v", n, e["Package"])
		}
		if o, ok := e["Output"].(string); ok {
			if !strings.HasSuffix(o, "\n") {
				t.Errorf("line %d: Output %q lacks its newline", n, o)
			}
			out.WriteString(o)
		}
	}
	want := `starting server demo (simulator)
=== RUN   demo
=== RUN   demo/prefill/ctx=8K
    46.7K tok/s · 175 ms TTFT
--- PASS: demo/prefill/ctx=8K (1.20s)
=== RUN   demo/decode/ctx=8K/conc=64
    6,018.4 tok/s · 1,027 ms TTFT
--- PASS: demo/decode/ctx=8K/conc=64 (2.00s)
=== RUN   demo/decode/ctx=251K/conc=128
    over capacity: 128 × (257024 + 4096) > 3370240 KV tokens
--- SKIP: demo/decode/ctx=251K/conc=128 (0.00s)
=== RUN   demo/assert/decode_8k_1
--- PASS: demo/assert/decode_8k_1 (0.00s)
=== RUN   demo/assert/decode_8k_64
    specs/demo.hcl:42: decode["8K"][64].total_tps = 5421.3, want >= 6000 (-9.6%)
        decode throughput at 8K x 64 fell below 6,000 tok/s
--- FAIL: demo/assert/decode_8k_64 (0.00s)
=== RUN   demo/assert/needs_16k
    specs/demo.hcl:50: cell not measured: over capacity
--- FAIL: demo/assert/needs_16k (0.00s)
--- FAIL: demo (8.00s)
FAIL
FAIL	specs/demo.hcl	3.500s
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("Output text (-want +got):\n%s", diff)
	}
}

func TestJSONStreamPassingPackage(t *testing.T) {
	var b bytes.Buffer
	s := newJSONStream(&b, "specs/ok.hcl", fakeClock())
	s.Run("ok/decode/ctx=8K/conc=1")
	s.End("ok/decode/ctx=8K/conc=1", vocab.Pass, time.Second)
	s.Finish(vocab.Pass, 2*time.Second)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	var last struct {
		Action  string
		Test    string
		Elapsed float64
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatal(err)
	}
	if last.Action != "pass" || last.Test != "" || last.Elapsed != 2 {
		t.Errorf("last event = %+v, want package pass after 2s", last)
	}
	if !strings.Contains(b.String(), `"Output":"ok  \tspecs/ok.hcl\t2.000s\n"`) {
		t.Errorf("no ok line in:\n%s", b.String())
	}
	if !strings.HasPrefix(lines[0], `{"Time":"2026-11-30T09:00:00.25Z","Action":"start","Package":"specs/ok.hcl"}`) {
		t.Errorf("first event %s, want start", lines[0])
	}
}

// junitDoc is the part of a JUnit file the tests read.
type junitDoc struct {
	XMLName xml.Name `xml:"testsuites"`
	Suites  []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// TestGotestsumReadsStream runs gotestsum (a Go tool dependency of this
// module) on the stream and checks the JUnit file it writes.
func TestGotestsumReadsStream(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gotestsum: skipped with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH, so `go tool gotestsum` cannot run")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(t.TempDir(), "j.xml")
	cmd := exec.Command(goBin, "tool", "gotestsum", "--format", "standard-verbose", "--junitfile", junit, "--raw-command", "--", self)
	cmd.Env = append(os.Environ(), printStreamEnv+"=1", "GOVERSION=go-test")
	out, err := cmd.CombinedOutput()
	// gotestsum exits 1 because the stream has a failing test.
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
		t.Fatalf("gotestsum: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- FAIL: demo/assert/decode_8k_64") {
		t.Errorf("gotestsum output lacks the failing test:\n%s", out)
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("gotestsum wrote invalid XML: %v\n%s", err, b)
	}
	if len(doc.Suites) != 1 || doc.Suites[0].Name != "specs/demo.hcl" {
		t.Fatalf("suites = %+v, want one named specs/demo.hcl\n%s", doc.Suites, b)
	}
	s := doc.Suites[0]
	// 6 subtests + the parent "demo"; the parent fails with its subtests.
	if s.Tests != 7 || s.Failures != 3 || s.Skipped != 1 {
		t.Errorf("tests=%d failures=%d skipped=%d, want 7, 3, 1\n%s", s.Tests, s.Failures, s.Skipped, b)
	}
	outcome := map[string]string{}
	for _, c := range s.Cases {
		switch {
		case c.Failure != nil:
			outcome[c.Name] = "fail"
			if c.Name == "demo/assert/decode_8k_64" && !strings.Contains(c.Failure.Text, "want >= 6000 (-9.6%)") {
				t.Errorf("failure text lacks the values read: %q", c.Failure.Text)
			}
		case c.Skipped != nil:
			outcome[c.Name] = "skip"
		default:
			outcome[c.Name] = "pass"
		}
	}
	want := map[string]string{
		"demo": "fail", "demo/prefill/ctx=8K": "pass", "demo/decode/ctx=8K/conc=64": "pass",
		"demo/decode/ctx=251K/conc=128": "skip", "demo/assert/decode_8k_1": "pass",
		"demo/assert/decode_8k_64": "fail", "demo/assert/needs_16k": "fail",
	}
	if diff := cmp.Diff(want, outcome); diff != "" {
		t.Errorf("gotestsum's JUnit outcomes (-want +got):\n%s", diff)
	}
}
