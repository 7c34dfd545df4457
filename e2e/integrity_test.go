package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	slores "github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// capacitySpec measures 1K × {1, 16} with 256-token outputs on a simulator
// whose KV cache holds kvTokens, and needs the 16-stream cell twice: in an
// assert and in an expect. 16 × (1,024 + 256) = 20,480 tokens.
func capacitySpec(t *testing.T, kvTokens int) string {
	return faultSpec(t, freePort(t), "",
		fmt.Sprintf(`"--sim-tbt", "5ms", "--sim-ttft", "20ms", "--sim-prefill-tps", "1000000", "--sim-kv-tokens", "%d"`, kvTokens), `
measure {
  duration   = "1s"
  max_output = 256
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1, 16]
}
assert "sixteen_streams" {
  condition     = decode["1K"][16].total_tps >= 1
  error_message = "16 streams at 1K must decode"
}
expect "decode_total_tps" {
  metric    = "total_tps"
  tolerance = "100%"
  values    = { "1K" = [1, 1] }
}
`)
}

// TestIntegrityLostCapacityFails: an upgrade that loses KV capacity is a
// failed SLO. With a KV cache that fits 16 × (1K + 256) tokens the assert
// and expect over the 16-stream cell pass; with --sim-kv-tokens lowered to
// 20,000 the cell is over capacity and both fail (exit 1, not the
// infrastructure exit 3), each saying the capacity arithmetic.
func TestIntegrityLostCapacityFails(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)

	fits := runFault(t, mark, 2*time.Minute, "-sim", capacitySpec(t, 1_000_000))
	if fits.r.Code != 0 {
		t.Fatalf("with room for the cell: exit %d, want 0\n%s", fits.r.Code, fits.dump())
	}

	lost := runFault(t, mark, 2*time.Minute, "-sim", capacitySpec(t, 20_000))
	if lost.r.Code != 1 {
		t.Fatalf("with the cell over capacity: exit %d, want 1 (a failed SLO)\n%s", lost.r.Code, lost.dump())
	}
	const arithmetic = `decode["1K"][16] is over capacity: 16 × (1,024 + 256) = 20,480 tokens > KV cache 20,000 tokens (from metrics)`
	lost.wantSaid(t,
		"--- FAIL: sim/assert/sixteen_streams",
		"--- FAIL: sim/expect/decode_total_tps/ctx=1K/conc=16",
		"--- PASS: sim/expect/decode_total_tps/ctx=1K/conc=1",
		arithmetic,
	)
	// Once by each failed test, then once more each in the closing recap
	// of what failed.
	tests, recap := lost.r.Stdout, ""
	if loc := regexp.MustCompile(`(?m)^\d+ of \d+ tests failed:$`).FindStringIndex(tests); loc != nil {
		tests, recap = tests[:loc[0]], tests[loc[0]:]
	}
	if n, m := strings.Count(tests, arithmetic), strings.Count(recap, arithmetic); n != 2 || m != 2 {
		t.Errorf("the arithmetic is said %d times by the tests and %d in the recap, want 2 and 2 (assert and expect)\n%s", n, m, lost.dump())
	}
	if lost.results == nil {
		t.Fatalf("no results.json\n%s", lost.dump())
	}
	for _, v := range lost.results.Verdicts {
		if strings.Contains(v.Test, "conc=16") || v.Kind == vocab.KindAssert {
			if v.Outcome != vocab.Fail || v.Infra || v.Message != arithmetic {
				t.Errorf("results.json verdict %s: %v infra=%v %q, want fail with the arithmetic", v.Test, v.Outcome, v.Infra, v.Message)
			}
		}
	}
}

// TestIntegrityStaticChecks: a spec whose condition can never be true or
// false is refused by validate and by run before any server starts (exit
// 2, the diagnostic at file:line with its snippet), fast.
func TestIntegrityStaticChecks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		condition string
		summary   string
		detail    string
	}{
		{"not a bool", `decode["1K"][1].total_tps + 1`, "Error: Condition is not a bool", "The condition is a number"},
		{"number against a string", `decode["1K"][1].ttft_ms <= "60sec"`, "Error: Invalid operand", "a number is required"},
		{"acceptance without speculative decoding", `decode["1K"][1].spec_accept_rate >= 0.5`, "Error: Metric the server cannot produce",
			`"sim" has no speculative block, so it reports no spec_accept_rate`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mark := newMark(t)
			defer noLeftovers(t, mark)
			spec := faultSpec(t, freePort(t), "", fastSim, `
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
assert "a" {
  condition = `+tc.condition+`
}
`)
			start := time.Now()
			v := slogate(t, mark, 30*time.Second, "", nil, "validate", spec)
			took := time.Since(start)
			t.Logf("validate took %v", took)
			// "Well under a second" when idle; the bound is generous for a
			// loaded machine, and still far below a measured run.
			if took > 10*time.Second {
				t.Errorf("validate took %v", took)
			}
			if v.Code != 2 {
				t.Fatalf("validate: exit %d, want 2\nstdout:\n%s\nstderr:\n%s", v.Code, v.Stdout, v.Stderr)
			}
			line := conditionLine(t, spec)
			for _, want := range []string{tc.summary, fmt.Sprintf("on %s line %d, in assert \"a\":", spec, line), "condition = " + tc.condition, tc.detail} {
				if !strings.Contains(v.Stderr, want) {
					t.Errorf("validate's diagnostic lacks %q:\n%s", want, v.Stderr)
				}
			}

			o := runFault(t, mark, 30*time.Second, "-sim", spec)
			if o.r.Code != 2 || !strings.Contains(o.r.Stderr, tc.summary) {
				t.Errorf("run: exit %d, want 2 with %q\n%s", o.r.Code, tc.summary, o.dump())
			}
			if strings.Contains(o.r.Stdout+o.r.Stderr, "starting server") {
				t.Errorf("run started a server for a spec that cannot pass\n%s", o.dump())
			}
		})
	}
}

// conditionLine is the line of the first condition in the spec at path.
func conditionLine(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "condition =") {
			return i + 1
		}
	}
	t.Fatalf("%s has no condition", path)
	return 0
}

// TestIntegrityVarTypes: a -var value that is not of the variable's type is
// a diagnostic naming the variable, its type and the value (exit 2).
func TestIntegrityVarTypes(t *testing.T) {
	t.Parallel()
	spec := faultSpec(t, freePort(t), "", fastSim, `
variable "floor" {
  type    = number
  default = 1
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
assert "a" {
  condition = decode["1K"][1].total_tps >= var.floor
}
`)
	mark := newMark(t)
	v := slogate(t, mark, 30*time.Second, "", nil, "validate", "-var", "floor=lots", spec)
	if v.Code != 2 || !strings.Contains(v.Stderr, `-var floor=lots: variable "floor" is of type number, and "lots" is not a number`) {
		t.Errorf("validate -var floor=lots: exit %d, want 2 naming the variable and its type\n%s", v.Code, v.Stderr)
	}
	if ok := slogate(t, mark, 30*time.Second, "", nil, "validate", "-var", "floor=6000", spec); ok.Code != 0 {
		t.Errorf("validate -var floor=6000: exit %d\n%s", ok.Code, ok.Stderr)
	}
}

// TestIntegritySimulatedTitles: a -sim run of a spec that names real
// hardware (a seed spec's gpu label) is unmistakably simulated in the
// console header, report.md, report.html, junit.xml, the GitHub step
// summary and `slogate report`'s re-rendering.
func TestIntegritySimulatedTitles(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	dir := t.TempDir()
	spec := faultSpec(t, freePort(t), `  labels = { gpu = "H200" }`, fastSim, `
measure {
  duration   = "1s"
  max_output = 256
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
`)
	summary := filepath.Join(dir, "summary.md")
	out := filepath.Join(dir, "out")
	r := slogate(t, mark, 2*time.Minute, "", []string{"GITHUB_STEP_SUMMARY=" + summary}, "run", "-sim", "-out", out, spec)
	if r.Code != 0 {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	const title = "Qwen3.5-4B on H200 (simulated)"
	read := func(name string) string {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	results := filepath.Join(out, "results.json")
	rerendered := slogate(t, mark, 30*time.Second, "", nil, "report", results)
	for _, c := range []struct{ where, text, want string }{
		{"console header", r.Stdout, "sim (simulated): 1 cells"},
		{"report.md", read(filepath.Join(out, "report.md")), "# " + title + "\n"},
		{"report.html", read(filepath.Join(out, "report.html")), "<title>" + title + " · slogate</title>"},
		{"junit.xml", read(filepath.Join(out, "junit.xml")), `<property name="sim.simulated" value="true">`},
		{"step summary", read(summary), title},
		{"slogate report", rerendered.Stdout, "# " + title + "\n"},
	} {
		if !strings.Contains(c.text, c.want) {
			t.Errorf("%s lacks %q:\n%s", c.where, c.want, c.text)
		}
	}
}

// TestIntegrityCodifyInterrupted: codify refuses the results of a run that
// -timeout stopped (exit 2, saying why), and with -force codifies the
// cells measured before the stop, saying what it left out.
func TestIntegrityCodifyInterrupted(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := faultSpec(t, freePort(t), "", fastSim, `
measure {
  duration   = "20s"
  max_output = 256
}
prefill { contexts = ["1K"] }
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
`)
	o := runFault(t, mark, 2*time.Minute, "-sim", "-timeout", "6s", spec)
	if o.r.Code != 3 {
		t.Fatalf("run -timeout 6s: exit %d, want 3\n%s", o.r.Code, o.dump())
	}
	if o.results == nil || len(o.results.Prefill) == 0 || !o.results.Prefill[0].Status.Measured() {
		t.Fatalf("the prefill cell measured before the timeout is not in results.json\n%s", o.dump())
	}
	results := filepath.Join(o.out, "results.json")

	refused := slogate(t, mark, 30*time.Second, "", nil, "codify", results)
	if refused.Code != 2 {
		t.Fatalf("codify of an interrupted run: exit %d, want 2\nstdout:\n%s\nstderr:\n%s", refused.Code, refused.Stdout, refused.Stderr)
	}
	for _, want := range []string{"refusing to turn this run into SLOs", "the run did not finish", "longer than -timeout 6s", "-force"} {
		if !strings.Contains(refused.Stderr, want) {
			t.Errorf("codify's refusal lacks %q:\n%s", want, refused.Stderr)
		}
	}
	if refused.Stdout != "" {
		t.Errorf("codify printed blocks although it refused:\n%s", refused.Stdout)
	}

	forced := slogate(t, mark, 30*time.Second, "", nil, "codify", "-force", results)
	if forced.Code != 0 {
		t.Fatalf("codify -force: exit %d\n%s", forced.Code, forced.Stderr)
	}
	for _, want := range []string{`expect "prefill_tps"`, "# Codified with -force although the run did not finish"} {
		if !strings.Contains(forced.Stdout, want) {
			t.Errorf("codify -force output lacks %q:\n%s", want, forced.Stdout)
		}
	}
	if !strings.Contains(forced.Stderr, "values from the measured cells only, although") {
		t.Errorf("codify -force does not say on stderr what it did:\n%s", forced.Stderr)
	}
}

// markFinished sets the finish time of the results at path, as the runner
// does when a run ends (codify refuses a run that did not finish).
func markFinished(t *testing.T, path string) {
	t.Helper()
	r, err := slores.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	r.Finished = r.Started.Add(20 * time.Minute)
	if err := r.Write(path); err != nil {
		t.Fatal(err)
	}
}
