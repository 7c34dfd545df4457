package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestVerdictFirst: report.md, the CI summary and report.html open with
// the outcome, the tests by outcome and what failed and why, before the
// details (Hardware, the matrices, the Verdicts table).
func TestVerdictFirst(t *testing.T) {
	ended := sampleRun("specs/a.hcl", "qwen")
	ended.Verdicts, ended.Decode, ended.Prefill = nil, nil, nil
	ended.Error = "server exited with status 1 before it was ready"
	passed := sampleRun("specs/a.hcl", "qwen")
	passed.Verdicts = passed.Verdicts[:1]
	passed.Prefill, passed.Decode = passed.Prefill[:1], passed.Decode[:2]
	interrupted := sampleRun("specs/a.hcl", "qwen")
	interrupted.Verdicts, interrupted.Decode, interrupted.Prefill = nil, nil, nil
	interrupted.Interrupted, interrupted.Error = true, "interrupted by SIGINT"
	skipped := sampleRun("specs/a.hcl", "qwen")
	skipped.Verdicts = append(passed.Verdicts[:1:1], result.Verdict{Test: "qwen/correctness/greedy/accuracy", Kind: vocab.KindCorrectness, Outcome: vocab.Skip})
	skipped.Prefill, skipped.Decode = passed.Prefill, passed.Decode
	many := sampleRun("specs/a.hcl", "qwen")
	for i := range 12 {
		many.Verdicts = append(many.Verdicts, result.Verdict{Test: fmt.Sprintf("qwen/assert/a%d", i), Kind: vocab.KindAssert, Outcome: vocab.Fail, Message: "too slow"})
	}
	tests := []struct {
		name string
		res  *result.Results
		// head: report.md's lines from the outcome on, before "## Hardware".
		head []string
		// html: what report.html's verdict section holds.
		html []string
	}{
		{"a breach, an error and unmeasured cells", sampleRun("specs/a.hcl", "qwen"),
			[]string{
				"**ERROR**: 1 of 4 tests errored, 1 failed, 1 skipped, 1 passed.",
				"",
				"- **qwen/assert/decode_8k_64** FAIL at `specs/a.hcl:42`: decode throughput at 8K x 64 fell below 6,000 tok/s — decode[\"8K\"][64].total_tps = 5421.3, want &gt;= 6000 (-9.6%)",
				"- **qwen/assert/needs_16k_64** ERROR at `specs/a.hcl:50`: cell not measured: over capacity",
				"- **prefill ctx=16K** ERROR: not measured: HTTP 500 from /v1/completions",
				"- **decode ctx=16K conc=1** ERROR: not measured: stream stalled for 30s",
			},
			[]string{`<section class="verdict error">`, `<span class="badge error">ERROR</span> 1 of 4 tests errored, 1 failed, 1 skipped, 1 passed.</p>`,
				`<li><code>qwen/assert/decode_8k_64</code> <span class="outcome-fail">FAIL</span> at <code>specs/a.hcl:42</code>: decode throughput at 8K x 64 fell below 6,000 tok/s — decode[&#34;8K&#34;][64].total_tps = 5421.3, want &gt;= 6000 (-9.6%)</li>`}},
		{"the run ended early", ended,
			[]string{"**ERROR**: no assert, expect or baseline to check.", "", "- **the run** ERROR: ended early: server exited with status 1 before it was ready"},
			[]string{`<li><code>the run</code> <span class="outcome-error">ERROR</span>: ended early: server exited with status 1 before it was ready</li>`}},
		{"interrupted: said once", interrupted,
			[]string{"**ERROR**: no assert, expect or baseline to check.", "", "- **the run** ERROR: interrupted; cells not reached are missing", ""},
			[]string{`<li><code>the run</code> <span class="outcome-error">ERROR</span>: interrupted; cells not reached are missing</li>`}},
		{"passed: the outcome alone", passed,
			[]string{"**PASS**: 1 test passed."},
			[]string{`<section class="verdict pass">`, `<span class="badge pass">PASS</span> 1 test passed.</p>`}},
		{"a skip passes, counted", skipped,
			[]string{"**PASS**: 1 of 2 tests skipped, 1 passed."},
			[]string{`<section class="verdict pass">`, `<span class="badge pass">PASS</span> 1 of 2 tests skipped, 1 passed.</p>`}},
		{"many failures: ten, then where the rest are", many,
			[]string{"**ERROR**: 1 of 16 tests errored, 13 failed, 1 skipped, 1 passed."},
			[]string{"<li>… and 6 more: see Verdicts and Errors below</li>"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var md bytes.Buffer
			if err := WriteMarkdown(&md, tc.res); err != nil {
				t.Fatal(err)
			}
			text := md.String()
			at := strings.Index(text, tc.head[0]+"\n")
			hw := strings.Index(text, "## Hardware")
			if at < 0 || hw < 0 || at > hw {
				t.Fatalf("report.md does not open with %q before ## Hardware:\n%s", tc.head[0], text)
			}
			if got := strings.Split(text[at:hw], "\n"); len(got) < len(tc.head) || strings.Join(got[:len(tc.head)], "\n") != strings.Join(tc.head, "\n") {
				t.Errorf("report.md's head:\n%s\nwant:\n%s", text[at:hw], strings.Join(tc.head, "\n"))
			}
			if tc.res == many {
				if n := strings.Count(text[at:hw], "\n- **"); n != maxWhatFailed {
					t.Errorf("%d entries of what failed, want %d", n, maxWhatFailed)
				}
				if !strings.Contains(text[at:hw], "- … and 6 more: see Verdicts and Errors below\n") {
					t.Errorf("no pointer at the rest:\n%s", text[at:hw])
				}
			}
			if tc.res == interrupted && strings.Contains(text, "ended early") {
				t.Errorf("an interrupted run is also said to have ended early:\n%s", text[:hw])
			}
			if strings.Contains(text[hw:], "\n- **") {
				t.Errorf("what failed is repeated after the details:\n%s", text[hw:])
			}
			var sum bytes.Buffer
			if err := WriteSummary(&sum, tc.res); err != nil {
				t.Fatal(err)
			}
			if s := sum.String(); !strings.Contains(s, strings.Join(tc.head, "\n")) || strings.Index(s, tc.head[0]) > strings.Index(s+"\n## ", "\n## ") {
				t.Errorf("the CI summary does not open with the head:\n%s", s)
			}
			h := renderHTML(t, tc.res)
			for _, want := range tc.html {
				if !strings.Contains(h, want) {
					t.Errorf("report.html lacks %q", want)
				}
			}
			if v, f := strings.Index(h, `<section class="verdict`), strings.Index(h, `<div class="facts">`); v < 0 || v > f {
				t.Errorf("report.html's verdict section (at %d) is not before the facts (at %d)", v, f)
			}
		})
	}
}
