package merge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/vocab"

	"github.com/slogate/slogate/internal/result"
)

func TestRunExitCode(t *testing.T) {
	fail := result.Verdict{Test: "s/assert/x", Outcome: vocab.Fail}
	inconclusive := result.Verdict{Test: "s/baseline/decode/ctx=8K/conc=64", Kind: vocab.KindBaseline, Outcome: vocab.Inconclusive}
	tests := []struct {
		name string
		res  result.Results
		want int
	}{
		{name: "no verdicts pass", res: result.Results{}, want: 0},
		{name: "a failed assert is 1", res: result.Results{Verdicts: []result.Verdict{{Outcome: vocab.Pass}, fail}}, want: 1},
		{name: "a condition that is not a bool is 2", res: result.Results{Verdicts: []result.Verdict{fail, {Outcome: vocab.Error}}}, want: 2},
		{name: "a verdict on an unmeasured cell is 3", res: result.Results{Verdicts: []result.Verdict{fail, {Outcome: vocab.Error, Infra: true}}}, want: 3},
		{name: "a run that ended early is 3", res: result.Results{Error: "server exited", Verdicts: []result.Verdict{fail}}, want: 3},
		{name: "an interrupted run is 3", res: result.Results{Interrupted: true}, want: 3},
		{name: "a decode cell that could not be measured is 3", res: result.Results{Decode: []result.DecodeCell{{Status: vocab.StatusError}}}, want: 3},
		{name: "a prefill cell that could not be measured is 3", res: result.Results{Prefill: []result.PrefillCell{{Status: vocab.StatusError}}}, want: 3},
		{name: "a search stopped by an error is 3", res: result.Results{Search: []result.Search{{Name: "x", Error: "probe could not be measured"}}}, want: 3},
		{name: "a search without an answer is not an error", res: result.Results{Search: []result.Search{{Name: "x", Found: false}}}, want: 0},
		{name: "a traffic cell that could not be measured is 3", res: result.Results{Traffic: []result.TrafficCell{{Status: vocab.StatusError}}}, want: 3},
		{name: "an inconclusive baseline comparison is 4", res: result.Results{Verdicts: []result.Verdict{{Outcome: vocab.Pass}, inconclusive}}, want: 4},
		{name: "a failure anywhere outweighs an inconclusive comparison: 1", res: result.Results{Verdicts: []result.Verdict{inconclusive, fail, inconclusive}}, want: 1},
		{name: "an unmeasured cell outweighs an inconclusive comparison: 3", res: result.Results{Verdicts: []result.Verdict{inconclusive}, Decode: []result.DecodeCell{{Status: vocab.StatusError}}}, want: 3},
		{name: "an over-capacity cell is not an error", res: result.Results{Decode: []result.DecodeCell{{Status: vocab.StatusOverCapacity}}}, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RunExitCode(&tt.res); got != tt.want {
				t.Errorf("RunExitCode = %d, want %d", got, tt.want)
			}
		})
	}
}

// resultsFolder writes res as the results.json of a new folder (a run's
// -out) and returns the folder.
func resultsFolder(t *testing.T, res result.Results) string {
	t.Helper()
	in := filepath.Join(t.TempDir(), "run")
	res.Schema = result.Schema
	b, err := res.Marshal()
	if err == nil {
		err = os.MkdirAll(in, 0o755)
	}
	if err == nil {
		err = result.WriteFileAtomic(filepath.Join(in, "results.json"), b)
	}
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestMergeUnmeasured: `slogate merge` of a folder whose run could not
// measure a search or a traffic cell exits 3, as `slogate run` did
// (one rule: result.Results.Unmeasured).
func TestMergeUnmeasured(t *testing.T) {
	tests := []struct {
		name string
		res  result.Results
	}{
		{name: "errored search", res: result.Results{Search: []result.Search{{Name: "slo", Error: "the probe at concurrency 8 could not be measured: engine died"}}}},
		{name: "errored traffic cell", res: result.Results{Traffic: []result.TrafficCell{{Traffic: "poisson", Context: 1024, Rate: 2, Status: vocab.StatusError, Reason: "engine died"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.res.Server.Name = "qwen"
			in := resultsFolder(t, tt.res)
			var out strings.Builder
			err := Merge(MergeOptions{OutDir: filepath.Join(t.TempDir(), "merged"), Inputs: []string{in}, Stdout: &out, Getenv: func(string) string { return "" }})
			if exit.Code(err) != exit.Infra || !strings.Contains(out.String(), "FAIL  qwen") || !strings.Contains(out.String(), "exit 3") {
				t.Errorf("merge: exit %d (%v), want 3 with the run's FAIL line\n%s", exit.Code(err), err, out.String())
			}
		})
	}
}

// TestMergeInconclusive: merge exits with the worst of its runs, where an
// inconclusive run (4) loses to a regressed one (1) and wins over a pass.
func TestMergeInconclusive(t *testing.T) {
	run := func(t *testing.T, server string, o vocab.Outcome) string {
		return resultsFolder(t, result.Results{Server: result.Server{Name: server},
			Verdicts: []result.Verdict{{Test: server + "/baseline/decode/ctx=8K/conc=64", Kind: vocab.KindBaseline, Outcome: o}}})
	}
	tests := []struct {
		name  string
		runs  map[string]vocab.Outcome
		want  int
		lines []string
	}{
		{"inconclusive and pass: 4", map[string]vocab.Outcome{"a": vocab.Inconclusive, "b": vocab.Pass}, exit.Inconclusive, []string{"FAIL  a", "exit 4", "ok    b"}},
		{"inconclusive and regressed: 1", map[string]vocab.Outcome{"a": vocab.Inconclusive, "b": vocab.Fail}, exit.Fail, []string{"exit 4", "exit 1", "(exit 1)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ins []string
			for _, s := range []string{"a", "b"} {
				ins = append(ins, run(t, s, tt.runs[s]))
			}
			var out strings.Builder
			err := Merge(MergeOptions{OutDir: filepath.Join(t.TempDir(), "merged"), Inputs: ins, Stdout: &out, Getenv: func(string) string { return "" }})
			if exit.Code(err) != tt.want {
				t.Errorf("merge: exit %d (%v), want %d\n%s", exit.Code(err), err, tt.want, out.String())
			}
			for _, l := range tt.lines {
				if !strings.Contains(out.String(), l) {
					t.Errorf("merge output lacks %q:\n%s", l, out.String())
				}
			}
		})
	}
}

// TestMergeSharedServerName: two runs of specs that both name their server
// "qwen" are kept apart: each in OUT/<spec>/qwen, its tests in junit.xml
// and the report named <spec>/qwen; a server no other run has keeps its
// name. The same run twice is still refused.
func TestMergeSharedServerName(t *testing.T) {
	write := func(spec, server string) string {
		return resultsFolder(t, result.Results{Spec: spec, Server: result.Server{Name: server},
			Decode:   []result.DecodeCell{{Matrix: "decode", Context: 8192, Concurrency: 1, Status: vocab.StatusValid, TotalTPS: 400}},
			Verdicts: []result.Verdict{{Test: server + "/assert/tps", Kind: vocab.KindAssert, Outcome: vocab.Pass}}})
	}
	demo, seed, glm := write("specs/demo.hcl", "qwen"), write("specs/qwen3.5-4b-h200-dflash.hcl", "qwen"), write("specs/glm.hcl", "glm")
	out := filepath.Join(t.TempDir(), "merged")
	var stdout strings.Builder
	if err := Merge(MergeOptions{OutDir: out, Inputs: []string{demo, seed, glm}, Stdout: &stdout, Getenv: func(string) string { return "" }}); err != nil {
		t.Fatalf("merge: %v\n%s", err, stdout.String())
	}
	for _, dir := range []string{"demo/qwen", "qwen3.5-4b-h200-dflash/qwen", "glm"} {
		if _, err := os.Stat(filepath.Join(out, dir, "results.json")); err != nil {
			t.Errorf("merged folder %s: %v", dir, err)
		}
	}
	junit, err := os.ReadFile(filepath.Join(out, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{`name="demo/qwen/decode/ctx=8K/conc=1"`, `name="qwen3.5-4b-h200-dflash/qwen/assert/tps"`, `name="glm/assert/tps"`} {
		if !strings.Contains(string(junit), name) {
			t.Errorf("junit.xml lacks %s:\n%s", name, junit)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "Server **demo/qwen** of specs/demo.hcl") {
		t.Errorf("report.md does not name the run demo/qwen:\n%s", md)
	}
	err = Merge(MergeOptions{OutDir: filepath.Join(t.TempDir(), "again"), Inputs: []string{demo, demo}, Stdout: &stdout, Getenv: func(string) string { return "" }})
	if exit.Code(err) != exit.Usage || !strings.Contains(err.Error(), `both hold server "qwen" of specs/demo.hcl: merge each run once`) {
		t.Errorf("the same run twice: %v (exit %d), want exit 2", err, exit.Code(err))
	}
}
