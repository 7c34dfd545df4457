package report

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec/spectest"
	"github.com/slogate/slogate/internal/vocab"
)

// Golden files live in testdata/. Regenerate them with:
//
//	go test ./report -update
var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// seed describes one reference report in the repository's testdata/seeds/
// and the facts a spec would supply as labels: the
// measured numbers themselves are parsed from the seed's own text.
type seed struct {
	name    string // ../../testdata/seeds/<name>.txt
	model   string
	served  string
	version string
	labels  map[string]string
	env     map[string]string
	started time.Time
}

var seeds = []seed{
	{
		name: "qwen3.5-4b-h200-dflash", model: "Qwen/Qwen3.5-4B", served: "qwen", version: "0.26.1rc1.dev914+gc3dabcddc",
		labels: map[string]string{"gpu": "H200 NVL", "gpu_memory_gb": "141", "gpu_count": "1", "os": "linux",
			"quantization": "BF16", "backend": "cuda", "repository": "github.com/vllm-project/vllm",
			"build": "cuda-13.2", "commit": "c3dabcddc328", "revision": "main"},
	},
	{
		name: "glm-5.3-flash-nvfp4-h200x2", model: "nvidia/GLM-5.3-Flash-NVFP4", served: "nvidia/GLM-5.3-Flash-NVFP4", version: "0.1.dev1+g3b5189828",
		labels: map[string]string{"gpu": "H200 NVL", "gpu_memory_gb": "141", "gpu_count": "2", "os": "linux",
			"quantization": "NVFP4", "backend": "cuda", "repository": "github.com/vllm-project/vllm",
			"build": "cuda-13.2", "commit": "3b518982806c", "revision": "main"},
		env: map[string]string{"VLLM_USE_V2_MODEL_RUNNER": "1", "VLLM_ENGINE_READY_TIMEOUT_S": "3600"},
	},
	{
		name: "ling-3.0-flash-int4-h200x2", model: "inclusionAI/Ling-3.0-flash-int4", served: "ling", version: "0.27.2rc1.dev113+g5cecfc013",
		labels: map[string]string{"gpu": "H200 NVL", "gpu_memory_gb": "141", "gpu_count": "2", "os": "linux",
			"quantization": "INT4", "backend": "cuda", "repository": "github.com/vllm-project/vllm",
			"build": "cuda-13.2", "commit": "5cecfc013750", "revision": "main"},
		started: time.Date(2026, 9, 3, 17, 22, 0, 0, time.UTC),
	},
}

// seedText is a parsed seed report.
type seedText struct {
	lines   []string
	title   string
	summary string
	facts   [][2]string // Hardware / Engine / Run "key: value" pairs
	launch  string
	prefill []string   // "8K context46.7K175 ms TTFT"
	matrix  [][]string // rows: context, then one cell per concurrency
	concs   []string
	all     [][]string // All measurements rows
}

func readSeed(t testing.TB, name string) seedText {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "seeds", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	st := seedText{lines: lines, title: lines[1], summary: lines[2]}
	splitRow := func(l string) []string {
		if strings.Contains(l, "\t") {
			return strings.Split(l, "\t")
		}
		l = strings.TrimSuffix(strings.TrimPrefix(l, "| "), " |")
		return strings.Split(l, " | ")
	}
	// The launch command sits on the line after "Launch command"; the
	// pipe-style seeds glue the next heading ("Prefill") to its end.
	section := ""
	var pending []string
	ctxRow := regexp.MustCompile(`^(\| )?\d+K( \||\t)`)
	for i, l := range lines {
		switch {
		case l == "Hardware" || l == "Engine" || l == "Run":
			section = "facts"
			continue
		case l == "Launch command":
			st.launch = strings.TrimSuffix(lines[i+1], "Prefill")
			section = ""
			continue
		case strings.HasPrefix(l, "| Prefill |") || strings.HasPrefix(l, "| Sustained decode |") ||
			strings.HasPrefix(l, "Prefill\t") || strings.HasPrefix(l, "Sustained decode\t"):
			st.all = append(st.all, splitRow(l))
			continue
		case strings.Contains(l, " context") && strings.HasSuffix(l, " ms TTFT") && !strings.Contains(l, "|") && !strings.Contains(l, "\t"):
			st.prefill = append(st.prefill, strings.TrimPrefix(l, "prompt tok/s by context length"))
			continue
		case ctxRow.MatchString(l):
			st.matrix = append(st.matrix, splitRow(l))
			continue
		case strings.Contains(l, "Context") && (strings.Contains(l, "| 1 |") || strings.Contains(l, "\t1\t")):
			st.concs = strings.Fields(strings.ReplaceAll(l[strings.Index(l, "Context")+len("Context"):], "|", " "))
			continue
		}
		if section == "facts" {
			if k, v, ok := strings.Cut(l, ": "); ok && !strings.HasPrefix(l, "- ") {
				st.facts = append(st.facts, [2]string{k, v})
				continue
			}
			pending = append(pending, strings.TrimPrefix(l, "- "))
			if len(pending) == 2 {
				st.facts = append(st.facts, [2]string{pending[0], pending[1]})
				pending = nil
			}
		}
	}
	return st
}

// num parses a seed number: "1,496.1", "46.7K", "30.0 s", "78 ms".
func num(t testing.TB, s string) float64 {
	t.Helper()
	s = strings.TrimSuffix(strings.TrimSuffix(s, " ms"), " s")
	s = strings.ReplaceAll(s, ",", "")
	mult := 1.0
	if strings.HasSuffix(s, "K") {
		s, mult = strings.TrimSuffix(s, "K"), 1000
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("seed number %q: %v", s, err)
	}
	return v * mult
}

// buildSeedResults turns a seed's own numbers into Results.
func buildSeedResults(t testing.TB, sd seed, st seedText) *result.Results {
	words, err := spectest.SplitWords(st.launch)
	if err != nil {
		t.Fatalf("seed %s: launch command: %v", sd.name, err)
	}
	if words[0] == "env" {
		words = words[1+len(sd.env):]
	}
	res := &result.Results{
		Schema: result.Schema, Spec: "specs/" + strings.SplitN(sd.name, "-", 2)[0] + ".hcl", Tool: "test",
		Server: result.Server{Name: strings.SplitN(sd.name, "-", 2)[0], Model: sd.model, ServedModel: sd.served,
			Argv: words, Env: sd.env, Version: sd.version, Labels: sd.labels},
		Measure: result.Measure{Duration: "30s", DurationS: 30, MaxOutput: 4096, Endpoint: "completions", Repeat: 1},
		Started: sd.started, Finished: sd.started,
	}
	status := map[string]vocab.Status{"Valid": vocab.StatusValid, "Requests queued": vocab.StatusQueued, "Over capacity": vocab.StatusOverCapacity}
	for _, r := range st.all {
		if len(r) != 12 {
			t.Fatalf("seed %s: row %q has %d cells", sd.name, r, len(r))
		}
		ctx, err := vocab.ParseTokens(r[1])
		if err != nil {
			t.Fatal(err)
		}
		s, ok := status[r[3]]
		if !ok {
			t.Fatalf("seed status %q", r[3])
		}
		if r[0] == "Prefill" {
			res.Prefill = append(res.Prefill, result.PrefillCell{Context: ctx, Status: s, TPS: num(t, r[4]), TTFTMs: num(t, r[6])})
			continue
		}
		conc, _ := strconv.Atoi(r[2])
		c := result.DecodeCell{Matrix: "decode", Context: ctx, Concurrency: conc, Status: s}
		if s.Measured() {
			c.TotalTPS, c.PerRequestTPS, c.TTFTMs, c.TBTMs = num(t, r[4]), num(t, r[5]), num(t, r[6]), num(t, r[7])
			c.ActiveAvg, c.Completed, c.OutputTokens, c.MeasuredS = num(t, r[8]), int(num(t, r[9])), int64(num(t, r[10])), num(t, r[11])
		}
		res.Decode = append(res.Decode, c)
	}
	return res
}

// seedResults builds Results from a seed's own text (its launch command
// split by spectest.SplitWords, its numbers parsed above) and requires them
// to equal the checked-in testdata/<seed>.results.json (rewritten with
// -update), so a change in how a seed is read shows as a diff here.
func seedResults(t testing.TB, sd seed, st seedText) *result.Results {
	t.Helper()
	res := buildSeedResults(t, sd, st)
	b, err := res.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, sd.name+".results.json", b)
	return res
}

// golden compares got with testdata/<name>, or rewrites it under -update.
func golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (regenerate with: go test ./report -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs from the golden file (-want +got); if intended, run go test ./report -update:\n%s", name, diff)
	}
}

// TestMarkdownReproducesSeeds renders each seed's numbers and checks that
// every value the seed shows appears in the same form in report.md.
func TestMarkdownReproducesSeeds(t *testing.T) {
	for _, sd := range seeds {
		t.Run(sd.name, func(t *testing.T) {
			st := readSeed(t, sd.name)
			if len(st.all) == 0 || len(st.matrix) == 0 || len(st.prefill) == 0 || len(st.facts) < 10 {
				t.Fatalf("seed parse found %d rows, %d matrix rows, %d prefill lines, %d facts", len(st.all), len(st.matrix), len(st.prefill), len(st.facts))
			}
			res := seedResults(t, sd, st)
			var b strings.Builder
			if err := WriteMarkdown(&b, res); err != nil {
				t.Fatal(err)
			}
			md := b.String()
			golden(t, sd.name+".md", []byte(md))
			lines := strings.Split(md, "\n")
			has := func(what, line string) {
				t.Helper()
				for _, l := range lines {
					if l == line {
						return
					}
				}
				t.Errorf("%s: no line %q in report.md", what, line)
			}

			has("title", "# "+st.title)
			q := sd.labels["quantization"]
			has("summary", strings.Replace(st.summary, q, q+" · ", 1))
			for _, f := range st.facts {
				if f[0] == "Benchmark tool" {
					continue // the seeds were measured by another tool
				}
				has("fact", "- "+f[0]+": "+f[1])
			}
			// Launch command: the same words after the executable (the seeds
			// show "$HOME/…" where a real run records the expanded path).
			_, wantTail, _ := strings.Cut(st.launch, " serve ")
			if !strings.Contains(md, " serve "+wantTail+"\n```") {
				t.Errorf("launch command: report.md lacks %q", " serve "+wantTail)
			}
			for k, v := range sd.env {
				if !strings.Contains(md, "```sh\nenv ") || !strings.Contains(md, " "+k+"="+v+" ") {
					t.Errorf("launch command: env %s=%s missing", k, v)
				}
			}
			// Prefill: "8K context" + tok/s + TTFT as the seed glues them.
			prefillRow := regexp.MustCompile(`^\| (\d+K) \| ([^|]+) \| ([^|]+) \|$`)
			var gotPrefill []string
			inPrefill := false
			for _, l := range lines {
				if strings.HasPrefix(l, "## ") {
					inPrefill = l == "## Prefill"
				}
				if m := prefillRow.FindStringSubmatch(l); inPrefill && m != nil {
					gotPrefill = append(gotPrefill, m[1]+" context"+m[2]+m[3]+" TTFT")
				}
			}
			if diff := cmp.Diff(st.prefill, gotPrefill); diff != "" {
				t.Errorf("prefill lines (-seed +report.md):\n%s", diff)
			}
			// Matrix: header and every cell, the seed's text with our " · " separators.
			has("matrix header", "| Context | "+strings.Join(st.concs, " | ")+" |")
			for _, row := range st.matrix {
				want := make([]string, len(row))
				copy(want, row)
				found := false
				for _, l := range lines {
					if !strings.HasPrefix(l, "| "+row[0]+" | ") || strings.Count(l, "|") != len(row)+1 {
						continue
					}
					got := strings.Split(strings.TrimSuffix(strings.TrimPrefix(l, "| "), " |"), " | ")
					for i := range got {
						got[i] = strings.ReplaceAll(got[i], " · ", "")
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("matrix row %s (-seed +report.md):\n%s", row[0], diff)
					}
					found = true
					break
				}
				if !found {
					t.Errorf("matrix row %s missing", row[0])
				}
			}
			// All measurements: every row verbatim.
			has("All measurements header", "| "+strings.Join(allHeader(), " | ")+" |")
			for _, r := range st.all {
				has("All measurements", "| "+strings.Join(r, " | ")+" |")
			}
			// Legends, worded as the seed words them.
			for _, l := range st.lines {
				if strings.HasPrefix(l, "Requests queued: ") || strings.HasPrefix(l, "Over capacity: ") || strings.HasPrefix(l, "TTFT is measured") {
					has("legend", l)
				}
			}
			if !sd.started.IsZero() {
				if !strings.Contains(strings.Join(st.lines, "\n"), "Measured Sep 3, 2026, 17:22 UTC") {
					t.Fatal("seed lost its date line")
				}
				has("date", "Measured Sep 3, 2026, 17:22 UTC")
			}
		})
	}
}

// TestFormatNumbers checks each metric's text against the seed reports'
// spelling: the precisions of the metric table and the units reports add.
func TestFormatNumbers(t *testing.T) {
	d := &result.DecodeCell{TotalTPS: 1496.14, PerRequestTPS: 123456.78, TTFTMs: 1026.6, TBTMs: 2.46,
		ActiveAvg: 63.96, Completed: 192968, OutputTokens: 12247, MeasuredS: 29.94}
	tests := []struct {
		name string
		got  string
		want string
	}{
		{name: "tps rounding", got: decodeText(d, "total_tps"), want: "1,496.1"},
		{name: "tps hundred thousands", got: decodeText(d, "per_request_tps"), want: "123,456.8"},
		{name: "ttft whole ms", got: decodeText(d, "ttft_ms"), want: "1,027 ms"},
		{name: "tbt one decimal", got: decodeText(d, "tbt_ms"), want: "2.5 ms"},
		{name: "active", got: decodeText(d, "active_avg"), want: "64.0"},
		{name: "count", got: decodeText(d, "completed"), want: "192,968"},
		{name: "tokens", got: decodeText(d, "output_tokens"), want: "12,247"},
		{name: "seconds", got: decodeText(d, "measured_s"), want: "29.9 s"},
		{name: "optional absent", got: decodeText(d, "server_total_tps"), want: dash},
		{name: "prefill ttft", got: prefillTTFTText(&result.PrefillCell{TTFTMs: 78}), want: "78 ms"},
		{name: "prefill compact", got: prefillTPSText(46700, 0), want: "46.7K"},
		{name: "prefill compact whole", got: prefillTPSText(12000, 0), want: "12K"},
		{name: "prefill below 10K short", got: prefillTPSText(9819, 0), want: "9,819"},
		{name: "prefill below 10K long", got: prefillTPSText(9819, 1), want: "9,819.0"},
		{name: "prefill huge", got: prefillTPSText(1234567, 1), want: "1,234.6K"},
		{name: "tick", got: tickLabel(1500), want: "1.5K"},
		{name: "small tick", got: tickLabel(250), want: "250"},
		{name: "context", got: vocab.FormatTokens(257024), want: "251K"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

func TestHardwareTitle(t *testing.T) {
	tests := []struct {
		name string
		srv  result.Server
		want string
	}{
		{"nvidia-smi", result.Server{GPUs: []result.GPU{{Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559}, {Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559}}}, "H100 80GB HBM3 80GB ×2"},
		{"labels", result.Server{Labels: map[string]string{"gpu": "H200 NVL", "gpu_memory_gb": "141", "gpu_count": "2"}}, "H200 NVL 141GB ×2"},
		{"label without memory", result.Server{Labels: map[string]string{"gpu": "L4"}}, "L4"},
		{"simulator", result.Server{Simulated: true}, "simulator"},
		{"simulated seed hardware says so", result.Server{Simulated: true, Labels: map[string]string{"gpu": "H200"}}, "H200 (simulated)"},
		{"simulated GPUs say so", result.Server{Simulated: true, GPUs: []result.GPU{{Name: "NVIDIA H200", MemoryMiB: 144384}}}, "H200 141GB (simulated)"},
		{"unknown", result.Server{}, "unknown GPU"},
	}
	for _, tt := range tests {
		if got := newHeader(&result.Results{Server: tt.srv}).hardwareName(); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestRedactArgv(t *testing.T) {
	got := redactArgv([]string{"vllm", "serve", "m", "--api-key", "sk-secret", "--api-key=sk-2"})
	want := []string{"vllm", "serve", "m", "--api-key", "<redacted>", "--api-key=<redacted>"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
	var b strings.Builder
	res := &result.Results{Server: result.Server{Model: "m", Argv: []string{"vllm", "serve", "m", "--api-key", "sk-secret"}}}
	if err := WriteMarkdown(&b, res); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "sk-secret") {
		t.Error("report.md shows the API key")
	}
	_ = fmt.Sprint
}

// TestSeedsOfSchemaV1: each seed's results.json as schema v1 (what
// results.json said before warnings and notes were objects) reads as the
// current schema's and renders the seed's report.md golden unchanged.
func TestSeedsOfSchemaV1(t *testing.T) {
	for _, sd := range seeds {
		t.Run(sd.name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", sd.name+".results.json"))
			if err != nil {
				t.Fatal(err)
			}
			v1 := bytes.Replace(b, []byte(`"schema": "`+result.Schema+`"`), []byte(`"schema": "`+result.SchemaV1+`"`), 1)
			if bytes.Equal(v1, b) {
				t.Fatalf("%s.results.json does not declare schema %s", sd.name, result.Schema)
			}
			now, err := result.Decode("v2", b)
			if err != nil {
				t.Fatal(err)
			}
			old, err := result.Decode("v1", v1)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(now, old); diff != "" {
				t.Errorf("read as v1 (-v2 +v1):\n%s", diff)
			}
			var md strings.Builder
			if err := WriteMarkdown(&md, old); err != nil {
				t.Fatal(err)
			}
			golden(t, sd.name+".md", []byte(md.String()))
		})
	}
}
