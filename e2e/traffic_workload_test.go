package e2e

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/numfmt"
	res "github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// Traffic over named workloads, read back from the simulator's --sim-record
// and the run's requests.jsonl (docs/method.md#traffic,
// docs/spec.md#named-workloads).

// recordedMessage is one chat message of a --sim-record line.
type recordedMessage struct {
	Role          string `json:"role"`
	ContentTokens int    `json:"content_tokens"`
	ContentSHA256 string `json:"content_sha256"`
}

// sentChat is a --sim-record line with the fields these tests read.
type sentChat struct {
	sentRequest
	Messages []recordedMessage `json:"messages"`
}

func readSentChat(t *testing.T, path string) []sentChat {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []sentChat
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var s sentChat
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("--sim-record line %q: %v", sc.Text(), err)
		}
		out = append(out, s)
	}
	return out
}

func readRequestRecords(t *testing.T, out string) []res.RequestRecord {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var recs []res.RequestRecord
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var r res.RequestRecord
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("requests.jsonl line %q: %v", line, err)
		}
		recs = append(recs, r)
	}
	return recs
}

// tokenIDs is the simulator's /tokenize of text, without special tokens.
func tokenIDs(t *testing.T, base, text string) []int {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"prompt": text})
	resp, err := http.Post(base+"/tokenize", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct{ Tokens []int }
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil {
		t.Fatal(err)
	}
	return tok.Tokens
}

// idsSHA is --sim-record's prompt_sha256 of ids: each ID as 4 bytes
// little-endian.
func idsSHA(ids []int) string {
	h := sha256.New()
	var b [4]byte
	for _, id := range ids {
		binary.LittleEndian.PutUint32(b[:], uint32(id))
		h.Write(b[:])
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestTrafficOverWorkloads runs, on one simulator with the completions
// endpoint: w-spec's ShareGPT file replayed open loop and closed loop (every
// request's prompt is a kept entry's first turn, raw and untemplated, its
// max_tokens = min_tokens the second turn's token count; the dropped
// entries are counted); a { mean = 1000, stddev = 200, min = 400, max =
// 1600 } input distribution over ≥ 200 distinct requests (mean within 3 %,
// stddev within 10 %); and prefix = { groups = 4, tokens = 256 }: exactly
// 4 requests find no cached head (the first of each group), every other
// one finds its group's 256 tokens cached, the sent prompts have exactly 4
// distinct heads, and the cell's prefix_cache_hit_rate is its records'
// cached share; and ignore_eos = false: no min_tokens, the model stops where
// it will, and the records' output lengths say where.
func TestTrafficOverWorkloads(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	t.Cleanup(func() { noLeftovers(t, mark) })
	recPath := filepath.Join(t.TempDir(), "sent.jsonl")
	base := startSim(t, mark, "Qwen/Qwen3.5-4B", "--served-model-name", "qwen", "--max-model-len", "8192",
		"--sim-tbt", "1ms", "--sim-ttft", "5ms", "--sim-prefill-tps", "1000000", "--sim-kv-tokens", "10000000",
		"--enable-prompt-tokens-details", "--sim-record", recPath)
	dataset, err := filepath.Abs("../testdata/datasets/sharegpt.json")
	if err != nil {
		t.Fatal(err)
	}
	spec := writeSpec(t, freePort(t), "", fmt.Sprintf(`
measure { max_output = 16 }
workload "replay" {
  dataset = %q
}
workload "spread" {
  prompt        = "random"
  input_tokens  = { mean = 1000, stddev = 200, min = 400, max = 1600 }
  output_tokens = 3
  seed          = 7
}
workload "shared" {
  prompt        = "random"
  input_tokens  = 64
  output_tokens = 5
  prefix        = { groups = 4, tokens = 256 }
}
workload "free" {
  prompt        = "random"
  input_tokens  = 64
  output_tokens = 200
  ignore_eos    = false
}
traffic "free" {
  workload    = "free"
  concurrency = [8]
  duration    = "1s"
  warmup      = "200ms"
}
traffic "replay_open" {
  workload = "replay"
  rate     = [20]
  duration = "1s"
  warmup   = "200ms"
}
traffic "replay" {
  workload    = "replay"
  concurrency = [4]
  duration    = "1s"
  warmup      = "200ms"
}
traffic "spread" {
  workload    = "spread"
  concurrency = [16]
  duration    = "1s"
  warmup      = "200ms"
}
traffic "shared" {
  workload    = "shared"
  concurrency = [4]
  duration    = "1s"
  warmup      = "200ms"
}
`, dataset))
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-endpoint", base, "-v", "-out", out, spec)
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	results := readResults(t, out)
	sent := readSentChat(t, recPath)
	records := readRequestRecords(t, out)

	// The ShareGPT filter, applied here to the simulator's token counts:
	// kept entries by the digest of their first turn's tokens, with the
	// second turn's token count.
	var entries []struct {
		Conversations []struct{ Value string } `json:"conversations"`
	}
	raw, err := os.ReadFile(dataset)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &entries); err != nil {
		t.Fatal(err)
	}
	kept, dropped := map[string]int{}, 0
	for _, e := range entries {
		if len(e.Conversations) < 2 {
			dropped++
			continue
		}
		p, o := tokenIDs(t, base, e.Conversations[0].Value), len(tokenIDs(t, base, e.Conversations[1].Value))
		if len(p) < 4 || o < 4 || len(p) > 1024 || len(p)+o > 2048 {
			dropped++
			continue
		}
		kept[idsSHA(p)] = o
	}
	if len(kept) == 0 || dropped == 0 {
		t.Fatalf("the testdata file keeps %d and drops %d entries: it must do both", len(kept), dropped)
	}
	cells := map[string]res.TrafficCell{}
	for _, c := range results.Traffic {
		cells[c.Traffic] = c
		if c.Status != vocab.StatusValid || c.Launched == 0 || c.Completed != c.Launched {
			t.Errorf("%s: %s (%s), %d of %d completed; want valid, all completed", c.Ref().Name(), c.Status, c.Reason, c.Completed, c.Launched)
		}
	}
	for _, label := range []string{"replay_open", "replay"} {
		c := cells[label]
		counted := slices.ContainsFunc(c.Warnings, func(w warning.Warning) bool {
			k, _ := w.Figure(warning.FigKept)
			d, _ := w.Figure(warning.FigDropped)
			return w.Code == warning.DatasetCounts && int(k) == len(kept) && int(d) == dropped
		})
		if !counted {
			t.Errorf("%s: warnings %q do not count the dataset's entries (%d kept, %d dropped)", label, c.Warnings, len(kept), dropped)
		}
	}
	// Which form the prompts took, in results.json and in the report, with
	// the dataset's warnings (reuse, counts) among the report's.
	for label, want := range map[string]string{"replay": "raw text on /v1/completions, untemplated", "spread": "token IDs on /v1/completions (no template)"} {
		if c := cells[label]; c.Workload != label || c.Prompts != want {
			t.Errorf("%s: workload %q, prompts %q; want %q, %q", label, c.Workload, c.Prompts, label, want)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The two replay blocks' cells carry the same dataset counts: report.md
	// lists them once, after both cells.
	open := cells["replay_open"]
	ci := slices.IndexFunc(open.Warnings, func(w warning.Warning) bool { return w.Code == warning.DatasetCounts })
	if ci < 0 {
		t.Fatalf("%s: no dataset_counts warning among %+v", open.Ref().Name(), open.Warnings)
	}
	counts := open.Warnings[ci].String() // as recorded: the report and the console print it
	// The reuse line counts each cell's requests sent, so the two cells'
	// lines differ.
	wants := []string{`; workload "replay", its prompts sent as raw text on /v1/completions, untemplated`,
		"- " + open.Ref().Name() + ", traffic/replay/conc=4 (2 cells): " + counts}
	for _, c := range []res.TrafficCell{open, cells["replay"]} {
		i := slices.IndexFunc(c.Warnings, func(w warning.Warning) bool { return w.Code == warning.DatasetReused })
		if i < 0 {
			t.Fatalf("%s: no reuse warning among %q", c.Ref().Name(), c.Warnings)
		}
		wants = append(wants, "- "+c.Ref().Name()+": "+c.Warnings[i].String())
	}
	for _, want := range wants {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	if n := strings.Count(string(md), counts); n != 1 {
		t.Errorf("report.md has the dataset counts %d times, want once", n)
	}
	// The console too: in full under the first cell, then a line naming it.
	if n := strings.Count(r.Stdout, counts); n != 1 || !strings.Contains(r.Stdout, "warning: as under sim/"+open.Ref().Name()+" (the 2nd cell with it)") {
		t.Errorf("the console prints the dataset counts %d times, want once and then a line naming the first cell:\n%s", n, r.Stdout)
	}
	if c := cells["replay"]; c.Concurrency != 4 || c.Rate != 0 || c.ConcurrencyAvg < 3.5 || c.ConcurrencyAvg > 4.01 {
		t.Errorf("replay closed loop: concurrency %d rate %v, %.2f in flight on average; want 4 kept in flight", c.Concurrency, c.Rate, c.ConcurrencyAvg)
	}
	if !strings.Contains(r.Stdout, "=== RUN   sim/traffic/replay/conc=4") || !strings.Contains(r.Stdout, "req/s achieved at concurrency 4") {
		t.Errorf("the closed-loop cell's test name or line is missing:\n%s", r.Stdout)
	}

	var replayed, spread, shared, free []sentChat
	for _, s := range sent {
		if s.PromptTokens == 0 || s.limit() < 0 {
			continue
		}
		switch {
		case s.limit() == 3:
			spread = append(spread, s)
		case s.limit() == 5:
			shared = append(shared, s)
		case s.limit() == 200:
			free = append(free, s)
		default:
			replayed = append(replayed, s)
		}
	}
	if len(replayed) < 10 {
		t.Fatalf("%d replayed requests recorded, want the two cells' (dozens)", len(replayed))
	}
	for _, s := range replayed {
		out, ok := kept[s.SHA256]
		switch {
		case !ok:
			t.Fatalf("a replayed prompt of %d tokens is no kept entry's first turn (raw text, untemplated)", s.PromptTokens)
		case s.limit() != out || s.MinTokens == nil || *s.MinTokens != out || s.IgnoreEOS == nil || !*s.IgnoreEOS:
			t.Fatalf("a replayed request asks max_tokens %d min_tokens %v ignore_eos %v, want %d, %d, true (its second turn's tokens)", s.limit(), s.MinTokens, s.IgnoreEOS, out, out)
		case s.Endpoint != "/v1/completions":
			t.Fatalf("replayed on %s", s.Endpoint)
		}
	}

	distinct := map[string]float64{}
	for _, s := range spread {
		distinct[s.SHA256] = float64(s.PromptTokens)
	}
	if len(distinct) < 200 {
		t.Fatalf("%d distinct spread prompts, want ≥ 200", len(distinct))
	}
	var sum, sum2 float64
	for _, n := range distinct {
		sum += n
		sum2 += n * n
		if n < 400 || n > 1600 {
			t.Errorf("a spread prompt of %v tokens, outside [400, 1600]", n)
		}
	}
	mean := sum / float64(len(distinct))
	sd := math.Sqrt(sum2/float64(len(distinct)) - mean*mean)
	t.Logf("spread: %d distinct prompts, mean %.1f, stddev %.1f tokens", len(distinct), mean, sd)
	if math.Abs(mean-1000) > 30 || math.Abs(sd-200) > 20 {
		t.Errorf("spread: mean %.1f stddev %.1f over %d prompts, want 1000 ± 3%% and 200 ± 10%%", mean, sd, len(distinct))
	}

	// ignore_eos = false: the model stops where it will, and the records
	// say how long each output was.
	for _, s := range free {
		if s.IgnoreEOS == nil || *s.IgnoreEOS || s.MinTokens != nil {
			t.Fatalf("free: ignore_eos %v min_tokens %v, want false and none", s.IgnoreEOS, s.MinTokens)
		}
	}
	lengths, stops := map[int64]bool{}, 0
	for _, rec := range records {
		if !strings.Contains(rec.Cell, "traffic/free/") || rec.Status != res.RequestFinished {
			continue
		}
		lengths[rec.OutputTokens] = true
		if rec.FinishReason == "stop" {
			stops++
			if rec.OutputTokens > 200 {
				t.Errorf("free: a request stopped at its EOS after %d tokens, beyond max_tokens 200", rec.OutputTokens)
			}
		}
	}
	if len(free) == 0 || stops == 0 || len(lengths) < 5 {
		t.Errorf("free: %d requests sent, %d stopped at their EOS, %d distinct output lengths; want the model's own lengths, measured", len(free), stops, len(lengths))
	}

	heads := map[string]bool{}
	for _, s := range shared {
		heads[fmt.Sprint(s.Head)] = true
	}
	if len(heads) != 4 {
		t.Errorf("%d distinct 64-token heads among %d shared-prefix prompts, want 4", len(heads), len(shared))
	}
	cold, warm := 0, 0
	coldByGroup := map[string]int{}
	for _, rec := range records {
		if !strings.Contains(rec.Cell, "traffic/shared/") || rec.Status != res.RequestFinished {
			continue
		}
		switch {
		case rec.CachedTokens == nil:
			t.Fatalf("a shared-prefix record without cached_tokens (--enable-prompt-tokens-details is on)")
		case *rec.CachedTokens == 0:
			cold++
			coldByGroup[rec.PrefixGroup]++
		case *rec.CachedTokens >= 256:
			warm++
		default:
			t.Errorf("a shared-prefix request with %d cached tokens: a 256-token head is all 16 blocks or none", *rec.CachedTokens)
		}
		if rec.PrefixGroup == "" {
			t.Errorf("a shared-prefix record without prefix_group")
		}
	}
	// A head is cached once its first request's prefill is computed, as
	// in vLLM: a request of the same group admitted before that (at most
	// the 3 others in flight at concurrency 4; a loaded machine bunches
	// arrivals) finds none too.
	if len(coldByGroup) != 4 || cold > 4+3 || warm < 10 {
		t.Errorf("shared prefixes: %d requests found no cached head (%v by group), %d found their group's; want each of the 4 groups cold first, at most %d cold in all, and the rest warm",
			cold, coldByGroup, warm, 4+3)
	}
	sharedCell := cells["shared"]
	var cachedSum, promptSum float64
	for _, rec := range records {
		if strings.Contains(rec.Cell, "traffic/shared/") && rec.CachedTokens != nil {
			cachedSum += float64(*rec.CachedTokens)
			promptSum += float64(rec.PromptTokens)
		}
	}
	if v, ok := sharedCell.Metric(metric.PrefixCacheHitRate); !ok || math.Abs(v-cachedSum/promptSum) > 0.05 {
		t.Errorf("shared: prefix_cache_hit_rate %v (%v), want the records' cached share %.3f", v, ok, cachedSum/promptSum)
	}
}

// TestConversationTurns: a 3-turn conversation from a messages dataset on
// the chat endpoint sends each turn with the whole history, the server's
// own answers included, and its third turn (all but its last question
// cached) has a lower TTFT than its first (a cold 3,500-token prefill).
func TestConversationTurns(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	t.Cleanup(func() { noLeftovers(t, mark) })
	recPath := filepath.Join(t.TempDir(), "sent.jsonl")
	base := startSim(t, mark, "Qwen/Qwen3.5-4B", "--served-model-name", "qwen", "--max-model-len", "16384",
		"--sim-tbt", "1ms", "--sim-ttft", "5ms", "--sim-prefill-tps", "20000", "--sim-kv-tokens", "10000000",
		"--enable-prompt-tokens-details", "--sim-record", recPath)
	dataset, err := filepath.Abs("../testdata/datasets/conversations.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	spec := writeSpecLen(t, freePort(t), 16384, "", fmt.Sprintf(`
measure {
  endpoint   = "chat"
  max_output = 16
}
workload "chat" {
  dataset       = %q
  output_tokens = 8
}
traffic "chat" {
  workload    = "chat"
  concurrency = [2]
  duration    = "1s"
  warmup      = "200ms"
}
assert "later_turns_faster" {
  condition = chat[2].ttft_ms_turn3 < chat[2].ttft_ms_turn1
}
`, dataset))
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-endpoint", base, "-v", "-out", out, spec)
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	// A messages dataset has no ShareGPT filter: no filter counts (they
	// were all zeros) in its warnings or on the console.
	for _, c := range readResults(t, out).Traffic {
		if warning.Has(c.Warnings, warning.DatasetCounts) {
			t.Errorf("%s warns with the ShareGPT filter's counts:\n%q", c.Ref().Name(), c.Warnings)
		}
	}
	if strings.Contains(r.Stdout, "entries examined") {
		t.Errorf("the console prints the ShareGPT filter's counts for a messages dataset:\n%s", r.Stdout)
	}
	answer := sha(strings.Repeat(" a", 8)) // the simulator's 8-token answer
	thirds := 0
	for _, s := range readSentChat(t, recPath) {
		if len(s.Messages) != 6 {
			continue
		}
		thirds++
		roles := []string{}
		for _, m := range s.Messages {
			roles = append(roles, m.Role)
		}
		if got := strings.Join(roles, ","); got != "system,user,assistant,user,assistant,user" {
			t.Fatalf("a third turn sends roles %s, want system,user,assistant,user,assistant,user", got)
		}
		if s.Messages[2].ContentSHA256 != answer || s.Messages[4].ContentSHA256 != answer {
			t.Fatalf("a third turn's history does not carry the server's two answers verbatim: %+v", s.Messages)
		}
	}
	if thirds == 0 {
		t.Fatal("no third turn was sent")
	}
	type conv struct{ first, third float64 }
	convs := map[string]*conv{}
	// A conversation is one unit of its cell's schedule: its turns share
	// the unit's index; a closed loop's units have no planned time.
	units := map[string]string{} // cell and index → conversation
	for _, rec := range readRequestRecords(t, out) {
		if rec.Phase == vocab.PhaseTraffic && rec.Purpose == "" {
			if rec.Index == nil || rec.PlannedMs != nil || rec.LagMs != nil {
				t.Errorf("turn %d of conversation %s: index %v, planned_ms %v, lag_ms %v; want an index and no planned time (a closed loop)", rec.Turn, rec.Conversation, rec.Index, rec.PlannedMs, rec.LagMs)
			} else {
				key := rec.Cell + "#" + strconv.Itoa(*rec.Index)
				if c, ok := units[key]; ok && c != rec.Conversation {
					t.Errorf("%s index %d holds conversations %s and %s", rec.Cell, *rec.Index, c, rec.Conversation)
				}
				units[key] = rec.Conversation
			}
		}
		if rec.Status != res.RequestFinished || rec.TTFTMs == nil || rec.Conversation == "" {
			continue
		}
		c := convs[rec.Conversation]
		if c == nil {
			c = &conv{}
			convs[rec.Conversation] = c
		}
		switch rec.Turn {
		case 1:
			c.first = *rec.TTFTMs
		case 3:
			c.third = *rec.TTFTMs
			if rec.CachedTokens == nil || *rec.CachedTokens < 3000 {
				t.Errorf("a third turn with %v cached tokens, want the history's (> 3000)", rec.CachedTokens)
			}
		}
	}
	// The medians over the conversations, not each pair: on a loaded
	// 2-core machine one third turn queued behind another conversation's
	// prefill (CI saw 193.1 ms against its first turn's 183.9 ms).
	var firsts, thirds3 []float64
	for _, c := range convs {
		if c.first > 0 && c.third > 0 {
			firsts, thirds3 = append(firsts, c.first), append(thirds3, c.third)
		}
	}
	if len(firsts) == 0 {
		t.Fatal("no conversation completed its first and third turns")
	}
	if f, th := median(firsts), median(thirds3); th >= f {
		t.Errorf("third turns' median TTFT %.1f ms, first turns' %.1f ms over %d conversations; want the third lower (its history cached)", th, f, len(firsts))
	}
	if !strings.Contains(r.Stdout, "--- PASS: sim/assert/later_turns_faster") {
		t.Errorf("the per-turn condition did not pass:\n%s", r.Stdout)
	}
}

// TestLaterTurnsGainOnSimulator: docs/spec.md's later_turns_gain assert
// passes on the simulator as it comes (the Qwen profile, no timing flags):
// a later turn, its history a prefix-cache hit, prefills only its new
// tokens, so it is never slower than a miss; it failed at 97.6 ms against
// 11.8 ms while the simulator floored a partial hit at the warm TTFT.
// report.md and report.html table the per-turn TTFT.
func TestLaterTurnsGainOnSimulator(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	t.Cleanup(func() { noLeftovers(t, mark) })
	dataset, err := filepath.Abs("../testdata/datasets/conversations.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	spec := writeSpecLen(t, freePort(t), 16384, "", fmt.Sprintf(`
measure { endpoint = "chat" }
workload "chat" {
  dataset       = %q
  output_tokens = 16
}
traffic "chat" {
  workload    = "chat"
  concurrency = [4]
  duration    = "2s"
  warmup      = "500ms"
}
assert "later_turns_gain" {
  condition = chat[4].ttft_ms_turn3 < chat[4].ttft_ms_turn1
}
`, dataset))
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-sim", "-out", out, spec)
	if r.Code != 0 || !strings.Contains(r.Stdout, "--- PASS: sim/assert/later_turns_gain") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	c := readResults(t, out).Traffic[0]
	t1, ok1 := c.Metric("ttft_ms_turn1")
	t3, ok3 := c.Metric("ttft_ms_turn3")
	t.Logf("turn 1 %.1f ms, turn 3 %.1f ms", t1, t3)
	if !ok1 || !ok3 || t3 >= t1 {
		t.Fatalf("turn TTFTs %v (%v), %v (%v): want turn 3 below turn 1", t1, ok1, t3, ok3)
	}
	// The 3 conversations' 9 turns are fewer than the cell sends: the
	// reuse warning counts the requests sent (requests.jsonl's), not the
	// 64 planned.
	sent, turns := 0, map[string]bool{}
	for _, rec := range readRequestRecords(t, out) {
		if rec.Cell == c.Ref().Name() {
			sent++
			turns[rec.DatasetEntry+"/"+strconv.Itoa(rec.Turn)] = true
		}
	}
	reuse := slices.IndexFunc(c.Warnings, func(w warning.Warning) bool { return w.Code == warning.DatasetReused })
	if reuse < 0 || sent <= len(turns) {
		t.Fatalf("the cell sent %d requests of %d turns; warnings %q: want more sent than turns, and a reuse warning", sent, len(turns), c.Warnings)
	}
	// 9 usable turns, none dropped, reused for the requests sent, and the
	// warning on the console as recorded.
	w := c.Warnings[reuse]
	want := map[string]float64{warning.FigKept: 9, warning.FigDropped: 0, warning.FigRequests: float64(sent), warning.FigReused: float64(sent - len(turns))}
	if !cmp.Equal(w.Figures, want) || !strings.Contains(r.Stdout, w.String()) {
		t.Errorf("reuse warning %q, figures %v, want %v, on the console:\n%s", w, w.Figures, want, r.Stdout)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := fmt.Sprintf("| 4 | Valid | %s |", strings.Join([]string{numfmt.Fixed(t1, 0), numfmt.Fixed(c.Stats["ttft_ms_turn2"], 0), numfmt.Fixed(t3, 0)}, " | "))
	if !strings.Contains(string(md), "## Traffic chat (closed loop): TTFT by conversation turn") || !strings.Contains(string(md), row) {
		t.Errorf("report.md lacks the per-turn table with %q:\n%s", row, md)
	}
	page, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil || !strings.Contains(string(page), "<h2>Traffic chat (closed loop): TTFT by conversation turn</h2>") {
		t.Errorf("report.html lacks the per-turn table (%v)", err)
	}
}
