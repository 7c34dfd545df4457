package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/result"
)

// writeRun writes a results.json with one prefill cell and a 1×2 decode
// matrix whose 8K×64 total_tps is tps64.
func writeRun(t *testing.T, dir, name string, tps64 float64) string {
	t.Helper()
	r := &result.Results{
		Server:  result.Server{Name: "qwen", Model: "Qwen/Qwen3.5-4B", Version: "0.11.0"},
		Prefill: []result.PrefillCell{{Context: 8192, Status: result.StatusValid, TPS: 40000, TTFTMs: 204.8}},
		Decode: []result.DecodeCell{
			{Matrix: "decode", Context: 8192, Concurrency: 1, Status: result.StatusValid, TotalTPS: 408.2, TTFTMs: 50, TBTMs: 2.4},
			{Matrix: "decode", Context: 8192, Concurrency: 64, Status: result.StatusValid, TotalTPS: tps64, TTFTMs: 300, TBTMs: 10.5},
		},
	}
	p := filepath.Join(dir, name)
	if err := r.Write(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCmdDiff(t *testing.T) {
	dir := t.TempDir()
	a := writeRun(t, dir, "a.json", 6018.4)
	same := writeRun(t, dir, "same.json", 6000)
	worse := writeRun(t, dir, "worse.json", 5421.3)
	notJSON := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notJSON, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		code     int
		inStdout []string
		inStderr string
		inError  string // substring of the returned error
	}{
		{name: "within tolerance", args: []string{a, same}, code: 0, inStdout: []string{
			"A: " + a + " (server qwen, Qwen/Qwen3.5-4B, vLLM 0.11.0)\nB: " + same + " (server qwen, Qwen/Qwen3.5-4B, vLLM 0.11.0)\n",
			"decode total_tps", "-0.3%", "0 regressed"}},
		{name: "regression", args: []string{a, worse}, code: 1, inStdout: []string{"-9.9% ✗", "1 regressed"}},
		{name: "improvement is not a regression", args: []string{worse, a}, code: 0, inStdout: []string{"+11.0% ↑"}},
		{name: "flags after the files", args: []string{a, worse, "-tolerance", "15%"}, code: 0, inStdout: []string{"tolerance 15%"}},
		{name: "metric filter", args: []string{"-metric", "ttft_ms", a, worse}, code: 0, inStdout: []string{"decode ttft_ms", "prefill ttft_ms"}},
		{name: "one file", args: []string{a}, code: 2, inError: "diff: want exactly two results files (A.json B.json), got 1"},
		{name: "bad tolerance", args: []string{"-tolerance", "five", a, worse}, code: 2, inError: `diff: invalid value "five" for -tolerance PCT: want a percentage such as 5% or a fraction such as 0.05`},
		{name: "tolerance as a fraction", args: []string{a, worse, "--tolerance=0.15"}, code: 0, inStdout: []string{"tolerance 15%"}},
		{name: "tolerance just below the change", args: []string{a, worse, "-tolerance", "0.09"}, code: 1, inStdout: []string{"-9.9% ✗"}},
		{name: "unknown metric", args: []string{"-metric", "speed", a, worse}, code: 2, inError: `-metric: unknown metric "speed"; the metrics are `},
		{name: "missing file", args: []string{a, filepath.Join(dir, "nope.json")}, code: 2, inError: "nope.json does not exist"},
		{name: "not a results file", args: []string{a, notJSON}, code: 2, inError: "not a slogate results file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), &stdout, &stderr, append([]string{"diff"}, tc.args...))
			if got := exit.Code(err); got != tc.code {
				t.Fatalf("exit %d (%v), want %d\nstdout:\n%s\nstderr:\n%s", got, err, tc.code, stdout.String(), stderr.String())
			}
			for _, s := range tc.inStdout {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout.String())
				}
			}
			if !strings.Contains(stderr.String(), tc.inStderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.inStderr, stderr.String())
			}
			if tc.code == 2 && err != nil && !exit.IsQuiet(err) && err.Error() == "" {
				t.Error("usage error without a message")
			}
			if tc.inError != "" && (err == nil || !strings.Contains(err.Error(), tc.inError)) {
				t.Errorf("error %v, want it to contain %q", err, tc.inError)
			}
		})
	}
}
