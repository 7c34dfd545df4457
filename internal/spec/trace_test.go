package spec

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/workload"
)

// loadTraceSpec loads a spec of one server (max_model_len 8192) and body,
// beside the trace fixtures (testdata/traces, as "traces/…").
func loadTraceSpec(t *testing.T, body string) (*Spec, error) {
	t.Helper()
	dir := t.TempDir()
	abs, err := filepath.Abs("../../testdata/traces")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(dir, "traces")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s.hcl")
	src := "server \"sim\" {\n  model = \"m\"\n  max_model_len = 8192\n}\n" + body
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, diags := Load(path, LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset})
	if diags.HasErrors() {
		return s, diags
	}
	return s, nil
}

// TestTraceWorkload: a trace's replay attributes decode into
// workload.Trace, and arrivals = "trace" gives its traffic block one cell
// at the replay's mean rate.
func TestTraceWorkload(t *testing.T) {
	s, err := loadTraceSpec(t, `
workload "m" {
  dataset          = "traces/mooncake.jsonl"
  speed            = 2.0
  slice            = ["0s", "500ms"]
  max_requests     = 3
  drop_over_length = true
}
traffic "replay" {
  workload = "m"
  arrivals = "trace"
}
`)
	if err != nil {
		t.Fatal(err)
	}
	w := s.NamedWorkload("m")
	want := workload.Trace{Speed: 2, To: 500 * time.Millisecond, MaxRequests: 3, DropOverLength: true}
	if w.Trace != want || w.Dataset.Format != workload.FormatMooncake {
		t.Fatalf("trace %+v of format %s; want %+v of mooncake", w.Trace, w.Dataset.Format, want)
	}
	// Three requests at 0, 0.05 and 0.125 s: 3 / 0.125 = 24 requests/s.
	if cells := s.Traffic[0].Cells(); len(cells) != 1 || cells[0].Rate != 24 {
		t.Fatalf("cells %+v; want one at rate 24", cells)
	}
}

// TestTraceDiagnostics: what a spec cannot replay is a diagnostic naming
// why, the trace's own line where a line is the cause.
func TestTraceDiagnostics(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{name: "missing field", body: `workload "m" { dataset = "traces/bad/mooncake_missing_field.jsonl" }`,
			want: `mooncake_missing_field.jsonl:2,1-61: Invalid trace; mooncake: no "hash_ids" field`},
		{name: "missing column", body: `workload "m" {
  dataset = "traces/bad/azure_missing_column.csv"
  format  = "azure"
}`, want: `azure_missing_column.csv:1,1-24: Invalid trace; azure: no "GeneratedTokens" column`},
		{name: "out of order", body: `workload "m" { dataset = "traces/bad/burstgpt_out_of_order.csv" }`,
			want: "burstgpt_out_of_order.csv:4,1-36: Invalid trace; burstgpt: the request arrives 2s before line 3's"},
		{name: "format mismatch", body: `workload "m" {
  dataset = "traces/azure.csv"
  format  = "burstgpt"
}`, want: `format is "burstgpt", but the first line has the fields of format azure`},
		{name: "over max_model_len", body: `workload "m" { dataset = "traces/bad/mooncake_too_long.jsonl" }
traffic "r" {
  workload = "m"
  arrivals = "trace"
}`, want: `mooncake_too_long.jsonl:2,1-137: Trace request too long for max_model_len; The request's 9000 input and 4 output tokens exceed server "sim"'s max_model_len 8192`},
		{name: "speed without a trace", body: `workload "m" {
  dataset = "PROMPTS"
  speed   = 2
}`, want: "speed replays a trace dataset"},
		{name: "trace arrivals without a trace", body: `workload "m" {
  prompt       = "random"
  input_tokens = 64
}
traffic "r" {
  workload = "m"
  arrivals = "trace"
}`, want: `arrivals = "trace" sends each request at its trace's time`},
		{name: "rate with trace arrivals", body: `workload "m" { dataset = "traces/mooncake.jsonl" }
traffic "r" {
  workload = "m"
  arrivals = "trace"
  rate     = [2]
}`, want: "the trace sets the rate"},
		{name: "empty slice", body: `workload "m" {
  dataset = "traces/mooncake.jsonl"
  slice   = ["1h", "2h"]
}`, want: "holds no request"},
		{name: "rate search over trace arrivals", body: `workload "m" { dataset = "traces/mooncake.jsonl" }
traffic "r" {
  workload = "m"
  arrivals = "trace"
}
search "most" {
  traffic   = "r"
  rate      = [1, 8]
  objective = "r.goodput_share >= 0.9"
}`, want: "so it has no request rate to search"},
		{name: "chat endpoint", body: `measure { endpoint = "chat" }
workload "m" { dataset = "traces/mooncake.jsonl" }`, want: "Use endpoint = \"completions\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prompts, _ := filepath.Abs("../../testdata/datasets/prompts.jsonl")
			_, err := loadTraceSpec(t, strings.ReplaceAll(tc.body, "PROMPTS", prompts))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v; want a diagnostic saying %q", err, tc.want)
			}
		})
	}
	t.Run("dropped over max_model_len", func(t *testing.T) {
		if _, err := loadTraceSpec(t, `workload "m" {
  dataset          = "traces/bad/mooncake_too_long.jsonl"
  drop_over_length = true
}
traffic "r" {
  workload = "m"
  arrivals = "trace"
}`); err != nil {
			t.Fatal(err)
		}
	})
}

// TestTraceTooLongGzip: the "too long for max_model_len" diagnostic of a
// gzipped trace is at the request's line and shows that line's text, the
// decompressed file's, as it does for a plain one.
func TestTraceTooLongGzip(t *testing.T) {
	tests := []struct {
		name, file string
		gzip       bool
	}{
		{name: "plain", file: "too_long.jsonl"},
		{name: "gzip", file: "too_long.jsonl.gz", gzip: true},
	}
	src, err := os.ReadFile("../../testdata/traces/bad/mooncake_too_long.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	line2 := strings.Split(string(src), "\n")[1]
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := src
			if tc.gzip {
				var buf bytes.Buffer
				zw := gzip.NewWriter(&buf)
				if _, err := zw.Write(src); err != nil || zw.Close() != nil {
					t.Fatal(err)
				}
				data = buf.Bytes()
			}
			path := filepath.Join(t.TempDir(), tc.file)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := loadTraceSpec(t, fmt.Sprintf("workload \"m\" { dataset = %q }\ntraffic \"r\" {\n  workload = \"m\"\n  arrivals = \"trace\"\n}\n", path))
			diags, _ := err.(hcl.Diagnostics)
			want := tc.file + `:2,1-137: Trace request too long for max_model_len; The request's 9000 input and 4 output tokens`
			if len(diags) != 1 || !strings.Contains(diags.Error(), want) {
				t.Fatalf("got %v; want one diagnostic saying %q", err, want)
			}
			var out strings.Builder
			if err := WriteDiagnostics(&out, s.Files, diags, false); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), "  2: "+line2) {
				t.Errorf("diagnostic:\n%s\nwant the snippet of line 2, %q", out.String(), line2)
			}
		})
	}
}
