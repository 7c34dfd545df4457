package sim

import (
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"slices"
	"sort"
	"strings"
)

//go:generate go run ./internal/genprofiles -seeds ../../testdata/seeds -out profiles

//go:embed profiles/*.json
var profileFS embed.FS

// Profile is the measured behaviour of one real system (a seed report),
// transcribed by internal/genprofiles, plus the few properties a report does
// not show, chosen by hand and explained in Notes.
type Profile struct {
	Name        string         `json:"name"`
	Source      string         `json:"source"`  // seed report the numbers come from
	Match       []string       `json:"match"`   // lower-case substrings of a model or served name that select this profile
	Version     string         `json:"version"` // vLLM version of the seed
	MaxModel    int            `json:"max_model_len"`
	KVTokens    int            `json:"kv_cache_tokens"` // KV capacity at the seed's settings
	KVBounds    [2]int         `json:"kv_cache_tokens_bounds"`
	KVDtype     string         `json:"kv_cache_dtype"`
	TP          int            `json:"tensor_parallel_size"`
	GPUUtil     float64        `json:"gpu_memory_utilization"`
	Weights     float64        `json:"weights_fraction"` // GPU memory fraction taken by weights and activations
	MaxSeqs     int            `json:"max_num_seqs"`     // the seed's --max-num-seqs or vLLM's default; informative, the flag decides
	RunCap      int            `json:"running_cap"`      // observed ceiling on running requests; 0 = none
	Speculative *Speculative   `json:"speculative,omitempty"`
	Notes       []string       `json:"notes"`
	Prefill     []PrefillPoint `json:"prefill"`
	Decode      []DecodePoint  `json:"decode"`
}

// Speculative is the speculative decoding the seed ran with.
type Speculative struct {
	Method        string  `json:"method"`
	NumTokens     int     `json:"num_speculative_tokens"`
	AcceptLen     float64 `json:"acceptance_length"` // mean tokens per step per sequence (assumed; seeds do not report it)
	DraftOverhead float64 `json:"draft_overhead"`    // a speculative step's time ÷ a plain step's (assumed)
}

// PrefillPoint is one seed prefill row.
type PrefillPoint struct {
	Context int     `json:"context"`
	TPS     float64 `json:"tps"`
	TTFTms  float64 `json:"ttft_ms"`
}

// DecodePoint is one seed "Sustained decode" row, numbers as printed.
type DecodePoint struct {
	Context       int     `json:"context"`
	Concurrency   int     `json:"concurrency"`
	Status        string  `json:"status"` // valid, queued, over_capacity
	TotalTPS      float64 `json:"total_tps,omitempty"`
	PerRequestTPS float64 `json:"per_request_tps,omitempty"`
	TTFTms        float64 `json:"ttft_ms,omitempty"`
	TBTms         float64 `json:"tbt_ms,omitempty"`
	ActiveAvg     float64 `json:"active_avg,omitempty"`
}

var profiles = loadProfiles()

// serverVersion is the version /version and the log report: the seed's
// vLLM version marked as the simulator's ("0.11.0-slogate-sim"; the generic
// profile, fitted to no release, "0.0.0-slogate-sim").
func (p *Profile) serverVersion() string { return p.Version + "-slogate-sim" }

func loadProfiles() map[string]*Profile {
	entries, err := profileFS.ReadDir("profiles")
	if err != nil {
		panic(err)
	}
	m := map[string]*Profile{}
	for _, e := range entries {
		raw, err := profileFS.ReadFile(path.Join("profiles", e.Name()))
		if err != nil {
			panic(err)
		}
		var p Profile
		if err := json.Unmarshal(raw, &p); err != nil {
			panic(fmt.Sprintf("sim profile %s: %v", e.Name(), err))
		}
		m[p.Name] = &p
	}
	return m
}

func profileByName(name string) (*Profile, bool) {
	p, ok := profiles[name]
	return p, ok
}

func profileNames() []string {
	var names []string
	for n := range profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// chooseProfile picks the profile: --sim-profile, else the first whose match
// string appears in the model or a served name, else generic.
func chooseProfile(c *Config) *Profile {
	if c.Profile != "" {
		return profiles[c.Profile]
	}
	names := append([]string{c.Model}, c.ServedNames...)
	for _, pn := range profileNames() {
		p := profiles[pn]
		for _, m := range p.Match {
			for _, n := range names {
				if strings.Contains(strings.ToLower(n), m) {
					return p
				}
			}
		}
	}
	return profiles["generic"]
}

// point is one (x, y) sample of a curve.
type point struct{ x, y float64 }

// row is a curve at one context length.
type row struct {
	ctx float64
	pts []point // sorted by x
}

// surface is y(ctx, x) sampled on rows; it interpolates log–log between
// samples and clamps outside them.
type surface []row

// at evaluates the surface.
func (s surface) at(ctx, x float64) float64 {
	if len(s) == 0 {
		return 0
	}
	i := sort.Search(len(s), func(i int) bool { return s[i].ctx >= ctx })
	switch {
	case i == 0:
		return curve(s[0].pts, x)
	case i == len(s):
		return curve(s[len(s)-1].pts, x)
	}
	lo, hi := s[i-1], s[i]
	return loglog(lo.ctx, curve(lo.pts, x), hi.ctx, curve(hi.pts, x), ctx)
}

// curve evaluates a sorted sample list at x, log–log, clamped.
func curve(pts []point, x float64) float64 {
	i := sort.Search(len(pts), func(i int) bool { return pts[i].x >= x })
	switch {
	case i == 0:
		return pts[0].y
	case i == len(pts):
		return pts[len(pts)-1].y
	}
	return loglog(pts[i-1].x, pts[i-1].y, pts[i].x, pts[i].y, x)
}

// loglog interpolates y at x between (x0, y0) and (x1, y1) on log–log axes.
func loglog(x0, y0, x1, y1, x float64) float64 {
	if x1 == x0 || y0 <= 0 || y1 <= 0 {
		return y0
	}
	t := math.Log(x/x0) / math.Log(x1/x0)
	return math.Exp(math.Log(y0) + t*(math.Log(y1)-math.Log(y0)))
}

// model is a profile turned into the curves the engine evaluates.
type model struct {
	seqRate  surface // tokens/s per sequence at (context, running batch)
	warmTTFT surface // seconds at (context, requests in the system)
	prefill  surface // cold prefill tokens/s at (context); one row per context
}

// warmAt is the warm TTFT, in seconds, of a prompt of ctx tokens with n
// requests in the system: the seed rows' surface, which below the
// smallest context a seed measured shrinks with the prompt as a cold
// prefill does (ctx ÷ that context) instead of staying at that context's
// value, so that a full prefix-cache hit of a short prompt is not slower
// than its miss (Qwen's 78 ms at 8K stood for a 1K prompt too, whose cold
// prefill takes 22 ms).
func (m *model) warmAt(ctx, n float64) float64 {
	t := m.warmTTFT.at(ctx, n)
	if len(m.warmTTFT) > 0 && ctx < m.warmTTFT[0].ctx {
		t *= ctx / m.warmTTFT[0].ctx
	}
	return t
}

// buildModel derives the engine's curves from a profile's seed rows.
//
// Per-sequence decode rate = total_tps ÷ active_avg at batch = active_avg:
// that reproduces the seed's total tok/s exactly when the simulator runs
// the same batch. Rows measured at (nearly) the same batch — the GLM
// "Requests queued" cells, all capped near 23–25 running — are averaged.
func buildModel(p *Profile) model {
	var m model
	byCtx := map[int][]DecodePoint{}
	for _, d := range p.Decode {
		if d.Status == "over_capacity" || d.TotalTPS <= 0 {
			continue
		}
		byCtx[d.Context] = append(byCtx[d.Context], d)
	}
	var ctxs []int
	for c := range byCtx {
		ctxs = append(ctxs, c)
	}
	sort.Ints(ctxs)
	for _, c := range ctxs {
		ds := byCtx[c]
		sort.Slice(ds, func(i, j int) bool { return ds[i].ActiveAvg < ds[j].ActiveAvg })
		var rate []point
		for _, d := range ds {
			b := math.Max(d.ActiveAvg, 0.5)
			r := d.TotalTPS / b
			if n := len(rate); n > 0 && b-rate[n-1].x < 0.5 {
				// Same batch measured twice: average the samples.
				rate[n-1] = point{(rate[n-1].x + b) / 2, (rate[n-1].y + r) / 2}
				continue
			}
			rate = append(rate, point{b, r})
		}
		m.seqRate = append(m.seqRate, row{float64(c), rate})
		sort.Slice(ds, func(i, j int) bool { return ds[i].Concurrency < ds[j].Concurrency })
		var ttft []point
		for _, d := range ds {
			if d.TTFTms > 0 {
				ttft = append(ttft, point{float64(d.Concurrency), d.TTFTms / 1000})
			}
		}
		m.warmTTFT = append(m.warmTTFT, row{float64(c), smoothOutliers(ttft)})
	}
	for _, pp := range p.Prefill {
		tps := pp.TPS
		if pp.TTFTms > 0 {
			tps = float64(pp.Context) / (pp.TTFTms / 1000)
		}
		m.prefill = append(m.prefill, row{float64(pp.Context), []point{{1, tps}}})
	}
	sort.Slice(m.prefill, func(i, j int) bool { return m.prefill[i].ctx < m.prefill[j].ctx })
	return m
}

// smoothOutliers replaces a sample more than twice both its neighbours by
// their geometric mean: a single slow request in a seed (Qwen 251K x 2:
// 5,791 ms between 656 and 731 ms) says nothing about the warm TTFT at
// that load, and would otherwise stall every restarted stream.
func smoothOutliers(pts []point) []point {
	out := slices.Clone(pts)
	for i := 1; i+1 < len(pts); i++ {
		if y := pts[i].y; y > 2*pts[i-1].y && y > 2*pts[i+1].y {
			out[i].y = math.Sqrt(pts[i-1].y * pts[i+1].y)
		}
	}
	return out
}
