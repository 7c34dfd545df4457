package sglang

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"

	"github.com/slogate/slogate/internal/engine"
)

// SGLang's startup lines that state a rank's KV pool (docs/sglang.md#log-lines):
//
//   - the pool's own line, KVCache._finalize_allocation_log
//     (python/sglang/srt/mem_cache/memory_pool.py): "KV Cache is
//     allocated. dtype: torch.bfloat16, #tokens: N, K size: …" in 2026
//     builds, "KV Cache is allocated. #tokens: N, …" before; one per pool
//     and per scheduler (every TP rank), a draft model's pool after the
//     target's (one slot per target token, so the same #tokens);
//   - a hybrid sliding-window model's "SWAKVPool mem usage: X GB, swa size:
//     S, full size: F" after its two inner pools' lines (swa first, then
//     full; mem_cache/swa_memory_pool.py): F is the capacity;
//   - the scheduler's summary "max_total_num_tokens=N, …", logged by TP
//     rank 0 only (managers/scheduler.py): each DP rank's first scheduler
//     under plain data parallelism, DP0's alone under DP attention.
//
// The rank is "DP{d}" and "TP{t}" anywhere before the message (the
// scheduler's "[time DP1 TP2 EP2]", after any prefix a container runtime
// or log collector adds); no DP is rank 0, no TP is TP 0.
var (
	sglangKVAllocRe = regexp.MustCompile(`KV Cache is allocated\. (?:dtype: [^,]*, )?#tokens: (\d+)`)
	sglangSWARe     = regexp.MustCompile(`SWAKVPool mem usage: [^,]*, swa size: \d+, full size: (\d+)`)
	sglangMaxTotRe  = regexp.MustCompile(`max_total_num_tokens=(\d+)`)
	// sglangMaxRunningRe is the summary line's resolved running limit.
	sglangMaxRunningRe = regexp.MustCompile(`\bmax_running_requests=(\d+)`)
	sglangDPRe         = regexp.MustCompile(`\bDP(\d+)\b`)
	sglangTPRe         = regexp.MustCompile(`\bTP(\d+)\b`)
)

// sglangRank is what one DP rank's lines state, from its lowest TP rank.
type sglangRank struct {
	tp      int     // the TP rank the pools were read from
	pools   []int64 // its "KV Cache is allocated" lines, in order
	swaFull int64   // its SWAKVPool line's full size
	summary int64   // the scheduler's max_total_num_tokens=
}

// capacity is the rank's KV capacity in tokens: the SWAKVPool's full pool,
// else its first pool (the target's: the draft's is allocated after it),
// else the summary; draft is a later pool's tokens when they differ from
// the first's (a draft model's), 0 otherwise.
func (r *sglangRank) capacity() (tokens, draft int64) {
	switch {
	case r.swaFull > 0:
		return r.swaFull, 0
	case len(r.pools) > 0:
		for _, n := range r.pools[1:] {
			if n != r.pools[0] {
				return r.pools[0], n
			}
		}
		return r.pools[0], 0
	}
	return r.summary, 0
}

// sglangKVFromLog sums the KV capacity of each DP rank the log names
// (sglangRank.capacity). With fewer ranks than dp the ranks are taken as
// alike (mean × dp) with a warning saying so; under DP attention the
// summary line is DP0's alone, so a log that states the pools by the
// summary only names one rank.
func sglangKVFromLog(path string, dp int) (tokens int64, read engine.KVRead, warning string) {
	f, err := os.Open(path)
	if err != nil {
		return 0, engine.KVRead{}, ""
	}
	defer f.Close()
	ranks := map[int]*sglangRank{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		readSGLangKVLine(sc.Text(), ranks)
	}
	return sumSGLangRanks(ranks, dp)
}

// readSGLangKVLine records a KV line's value under its DP rank, from the
// lowest TP rank that states it.
func readSGLangKVLine(line string, ranks map[int]*sglangRank) {
	var m []int
	kind := ""
	for _, k := range []struct {
		name string
		re   *regexp.Regexp
	}{{"pool", sglangKVAllocRe}, {"swa", sglangSWARe}, {"summary", sglangMaxTotRe}} {
		if m = k.re.FindStringSubmatchIndex(line); m != nil {
			kind = k.name
			break
		}
	}
	if m == nil {
		return
	}
	n, err := strconv.ParseInt(line[m[2]:m[3]], 10, 64)
	if err != nil || n <= 0 {
		return
	}
	before := line[:m[0]]
	dp, tp := lastRank(sglangDPRe, before), lastRank(sglangTPRe, before)
	r := ranks[dp]
	if r == nil || tp < r.tp {
		r = &sglangRank{tp: tp}
		ranks[dp] = r
	} else if tp > r.tp {
		return // another TP rank of this DP rank states the same pools
	}
	switch kind {
	case "pool":
		r.pools = append(r.pools, n)
	case "swa":
		if r.swaFull == 0 {
			r.swaFull = n // a draft's SWA pool would come after the target's
		}
	case "summary":
		r.summary = n
	}
}

// lastRank is the number of the last match of re ("DP1", "TP2") in s, 0
// when there is none.
func lastRank(re *regexp.Regexp, s string) int {
	all := re.FindAllStringSubmatch(s, -1)
	if len(all) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(all[len(all)-1][1])
	return n
}

// sumSGLangRanks adds the ranks' capacities (sglangKVFromLog).
func sumSGLangRanks(ranks map[int]*sglangRank, dp int) (tokens int64, read engine.KVRead, warning string) {
	if len(ranks) == 0 {
		return 0, engine.KVRead{}, ""
	}
	var order []int
	for r := range ranks {
		order = append(order, r)
	}
	sort.Ints(order)
	read.Rule = engine.KVLogParts
	onlySummary := true
	for _, r := range order {
		n, draft := ranks[r].capacity()
		tokens += n
		read.Parts = append(read.Parts, engine.KVPart{Rule: engine.KVRankTokens, Index: r, Tokens: n, Draft: draft})
		if len(ranks[r].pools) > 0 || ranks[r].swaFull > 0 {
			onlySummary = false
		}
	}
	if dp > len(ranks) {
		mean := tokens / int64(len(ranks))
		warning = fmt.Sprintf("the server log has KV lines for %d of %d data-parallel ranks: the ranks are taken as alike, %d tokens each", len(ranks), dp, mean)
		if onlySummary {
			warning += " (the max_total_num_tokens= summary is logged by TP rank 0 only, DP0's alone under DP attention, and no \"KV Cache is allocated\" line was found)"
		}
		tokens = mean * int64(dp)
	}
	return tokens, read, warning
}
