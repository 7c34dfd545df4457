// Command genprofiles transcribes the seed reports (testdata/seeds) into
// the simulator's embedded profiles (sim/profiles/*.json), so every number
// a profile holds can be traced to a row of a seed. The few properties a
// report does not show (KV capacity inside the bounds its Over capacity
// cells imply, speculative acceptance length, the GLM running cap) are
// chosen below, each with its reason.
//
// Run from internal/sim/: go generate ./...   (or: go run ./internal/genprofiles -seeds ../../testdata/seeds -out profiles)
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Profile mirrors sim.Profile's JSON (kept separate: a generator must not
// import the package it generates for, whose init reads the profiles it is
// about to rewrite). TestProfileMirrorsSim checks that the copies agree.
type Profile struct {
	Name        string         `json:"name"`
	Source      string         `json:"source"`
	Match       []string       `json:"match"`
	Version     string         `json:"version"`
	MaxModel    int            `json:"max_model_len"`
	KVTokens    int            `json:"kv_cache_tokens"`
	KVBounds    [2]int         `json:"kv_cache_tokens_bounds"`
	KVDtype     string         `json:"kv_cache_dtype"`
	TP          int            `json:"tensor_parallel_size"`
	GPUUtil     float64        `json:"gpu_memory_utilization"`
	Weights     float64        `json:"weights_fraction"`
	MaxSeqs     int            `json:"max_num_seqs"`
	RunCap      int            `json:"running_cap"`
	Speculative *Speculative   `json:"speculative,omitempty"`
	Notes       []string       `json:"notes"`
	Prefill     []PrefillPoint `json:"prefill"`
	Decode      []DecodePoint  `json:"decode"`
}

// Speculative mirrors sim.Speculative.
type Speculative struct {
	Method        string  `json:"method"`
	NumTokens     int     `json:"num_speculative_tokens"`
	AcceptLen     float64 `json:"acceptance_length"`
	DraftOverhead float64 `json:"draft_overhead"`
}

// PrefillPoint mirrors sim.PrefillPoint.
type PrefillPoint struct {
	Context int     `json:"context"`
	TPS     float64 `json:"tps"`
	TTFTms  float64 `json:"ttft_ms"`
}

// DecodePoint mirrors sim.DecodePoint.
type DecodePoint struct {
	Context       int     `json:"context"`
	Concurrency   int     `json:"concurrency"`
	Status        string  `json:"status"`
	TotalTPS      float64 `json:"total_tps,omitempty"`
	PerRequestTPS float64 `json:"per_request_tps,omitempty"`
	TTFTms        float64 `json:"ttft_ms,omitempty"`
	TBTms         float64 `json:"tbt_ms,omitempty"`
	ActiveAvg     float64 `json:"active_avg,omitempty"`
}

// choice is what a seed does not say, chosen by hand.
type choice struct {
	file, name string
	match      []string
	kvTokens   int     // must fall inside the bounds the seed's Over capacity cells imply
	weights    float64 // GPU memory fraction for weights+activations (assumed)
	maxSeqs    int     // vLLM's default on H200 (1024) unless the launch sets it
	runCap     int
	acceptLen  float64 // DFlash mean acceptance length (assumed: not in the reports)
	notes      []string
}

var choices = []choice{
	{file: "qwen3.5-4b-h200-dflash.txt", name: "qwen", match: []string{"qwen"},
		kvTokens: 24_000_000, weights: 0.10, maxSeqs: 1024, acceptLen: 3.0,
		notes: []string{
			"kv_cache_tokens 24,000,000 sits inside the bounds set by the largest run cell (128K x 128) and the smallest Over capacity cell (251K x 128), counting ctx + 4,096 output tokens per request",
			"acceptance_length 3.0 and draft_overhead 1.25 are assumptions: the report gives tok/s, not acceptance",
		}},
	{file: "glm-5.3-flash-nvfp4-h200x2.txt", name: "glm", match: []string{"glm"},
		kvTokens: 3_200_000, weights: 0.55, maxSeqs: 32, runCap: 24, acceptLen: 2.5,
		notes: []string{
			"running_cap 24: launched with --max-num-seqs 32, the seed never averaged more than 23.1-25.0 active requests, so every cell at concurrency >= 32 shows Requests queued",
			"kv_cache_tokens 3,200,000 (fp8) sits inside the bounds set by 16K x 128 (run) and 1019K x 4 (Over capacity)",
			"acceptance_length 2.5 and draft_overhead 1.25 are assumptions",
		}},
	{file: "ling-3.0-flash-int4-h200x2.txt", name: "ling", match: []string{"ling"},
		kvTokens: 12_000_000, weights: 0.25, maxSeqs: 1024,
		notes: []string{
			"kv_cache_tokens 12,000,000 sits inside the bounds set by 64K x 128 (run) and 251K x 64 (Over capacity)",
		}},
}

func main() {
	seeds := flag.String("seeds", "../../testdata/seeds", "folder holding the seed reports")
	out := flag.String("out", "profiles", "folder to write the profiles to")
	flag.Parse()
	for _, c := range choices {
		p, err := fromSeed(filepath.Join(*seeds, c.file), c)
		if err != nil {
			fmt.Fprintln(os.Stderr, "genprofiles:", err)
			os.Exit(1)
		}
		write(filepath.Join(*out, p.Name+".json"), p)
	}
	write(filepath.Join(*out, "generic.json"), generic())
}

func write(file string, p *Profile) {
	raw, err := encode(p)
	if err == nil {
		err = os.WriteFile(file, raw, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genprofiles:", err)
		os.Exit(1)
	}
}

// encode is a profile's file: indented JSON ending in a newline.
func encode(p *Profile) ([]byte, error) {
	raw, err := json.MarshalIndent(p, "", "  ")
	return append(raw, '\n'), err
}

var (
	reVersion   = regexp.MustCompile(`vllm · (\S+) ·`)
	reMaxOutput = regexp.MustCompile(`(?s)Max output\W*([\d,]+) tokens`)
	reFlag      = regexp.MustCompile(`--([a-z-]+)(?: ('[^']*'|[^-\s]\S*))?`)
)

// fromSeed reads one seed report.
func fromSeed(file string, c choice) (*Profile, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	text := string(raw)
	p := &Profile{Name: c.name, Source: "testdata/seeds/" + c.file, Match: c.match, KVTokens: c.kvTokens,
		Weights: c.weights, MaxSeqs: c.maxSeqs, RunCap: c.runCap, Notes: c.notes, TP: 1, KVDtype: "auto"}
	if m := reVersion.FindStringSubmatch(text); m != nil {
		p.Version = m[1]
	}
	maxOutput := 4096
	if m := reMaxOutput.FindStringSubmatch(text); m != nil {
		maxOutput = atoi(m[1])
	}
	// The launch command's flags.
	for _, line := range strings.Split(text, "\n") {
		if !strings.Contains(line, " serve ") {
			continue
		}
		for _, m := range reFlag.FindAllStringSubmatch(line, -1) {
			v := strings.Trim(m[2], "'")
			switch m[1] {
			case "max-model-len":
				p.MaxModel = atoi(v)
			case "tensor-parallel-size":
				p.TP = atoi(v)
			case "gpu-memory-utilization":
				p.GPUUtil, _ = strconv.ParseFloat(v, 64)
			case "kv-cache-dtype":
				p.KVDtype = v
			case "max-num-seqs":
				p.MaxSeqs = atoi(v)
			case "speculative-config":
				var s struct {
					Method string `json:"method"`
					N      int    `json:"num_speculative_tokens"`
				}
				// The launch line may end right after the JSON ("…}'Prefill").
				if err := json.Unmarshal([]byte(v), &s); err != nil {
					return nil, fmt.Errorf("%s: speculative config %s: %v", file, v, err)
				}
				p.Speculative = &Speculative{Method: s.Method, NumTokens: s.N, AcceptLen: c.acceptLen, DraftOverhead: 1.25}
			}
		}
		break
	}
	// The "All measurements" rows: markdown (| a | b |) or tab-separated.
	lo, hi := 0, math.MaxInt
	for _, line := range strings.Split(text, "\n") {
		var f []string
		if strings.HasPrefix(line, "| ") {
			f = strings.Split(strings.Trim(line, "| "), "|")
		} else {
			f = strings.Split(line, "\t")
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		switch {
		case len(f) >= 7 && f[0] == "Prefill":
			p.Prefill = append(p.Prefill, PrefillPoint{Context: ctxTokens(f[1]), TPS: num(f[4]), TTFTms: num(f[6])})
		case len(f) >= 12 && f[0] == "Sustained decode":
			d := DecodePoint{Context: ctxTokens(f[1]), Concurrency: atoi(f[2]), Status: status(f[3])}
			need := d.Concurrency * (d.Context + maxOutput)
			if d.Status == "over_capacity" {
				hi = min(hi, need)
			} else {
				lo = max(lo, need)
				d.TotalTPS, d.PerRequestTPS, d.TTFTms, d.TBTms, d.ActiveAvg = num(f[4]), num(f[5]), num(f[6]), num(f[7]), num(f[8])
			}
			p.Decode = append(p.Decode, d)
		}
	}
	if len(p.Prefill) == 0 || len(p.Decode) == 0 {
		return nil, fmt.Errorf("%s: no measurement rows found", file)
	}
	p.KVBounds = [2]int{lo, hi}
	if c.kvTokens < lo || c.kvTokens >= hi {
		return nil, fmt.Errorf("%s: kv_cache_tokens %d outside the seed's bounds [%d, %d)", file, c.kvTokens, lo, hi)
	}
	return p, nil
}

// ctxTokens reads "8K" = 8192, "1019K" = 1043456.
func ctxTokens(s string) int {
	if n, ok := strings.CutSuffix(s, "K"); ok {
		return atoi(n) << 10
	}
	return atoi(s)
}

func status(s string) string {
	switch s {
	case "Valid":
		return "valid"
	case "Requests queued":
		return "queued"
	case "Over capacity":
		return "over_capacity"
	}
	return strings.ToLower(s)
}

// num reads "46.7K", "9,819.0", "1,027 ms", "2.5 ms".
func num(s string) float64 {
	s = strings.TrimSuffix(strings.TrimSuffix(s, " ms"), " s")
	s = strings.ReplaceAll(s, ",", "")
	mult := 1.0
	if n, ok := strings.CutSuffix(s, "K"); ok {
		s, mult = n, 1000
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return f * mult
}

func atoi(s string) int {
	n, _ := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	return n
}

// generic is a synthetic mid-size model without speculative decoding, for
// model names no seed matches: 10 ms per step at batch 1 and short
// context, slower with batch and context, throughput saturating near 6,000 tok/s.
func generic() *Profile {
	p := &Profile{Name: "generic", Source: "synthetic (no seed)", Version: "0.0.0",
		MaxModel: 131072, KVTokens: 4_000_000, KVDtype: "auto", TP: 1, GPUUtil: 0.9, Weights: 0.2, MaxSeqs: 1024,
		Notes: []string{"not fitted to any measurement; step = (8 ms + 0.035 ms x batch) x (1 + ctx/64K)"}}
	for _, ctx := range []int{1 << 10, 8 << 10, 32 << 10, 128 << 10} {
		rate := 30000 * (1 - 0.25*math.Log2(float64(ctx)/1024)/7)
		p.Prefill = append(p.Prefill, PrefillPoint{Context: ctx, TPS: math.Round(rate), TTFTms: math.Round(float64(ctx) / rate * 1000)})
		for _, c := range []int{1, 4, 16, 64, 256} {
			step := (8 + 0.035*float64(c)) * (1 + float64(ctx)/65536)
			ttft := 30 + float64(ctx)/rate*1000*0.02*float64(c)
			p.Decode = append(p.Decode, DecodePoint{Context: ctx, Concurrency: c, Status: "valid",
				TotalTPS: round1(float64(c) * 1000 / step), PerRequestTPS: round1(1000 / step),
				TTFTms: math.Round(ttft), TBTms: round1(step), ActiveAvg: float64(c)})
		}
	}
	return p
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }
