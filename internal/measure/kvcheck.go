package measure

import (
	"fmt"
	"math"
	"slices"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/promread"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// This file is the KV capacity cross-check of docs/method.md#kv-capacity:
// in the first concurrency-1 decode cell of each context, the window's
// /metrics polls sample the KV cache usage gauge with the one stream
// resident, and the usage is compared with (ctx + tokens generated), in
// whole blocks where the server states the block its tokens are held in
// (promread.KVCacheInfo.TokenBlock), ÷ the capacity in use. It records what it finds in the cell and warns when the
// two disagree by more than kvCheckTolerance; it never changes the
// capacity.

// kvCheckTolerance is the disagreement beyond which the check warns.
const kvCheckTolerance = 0.25

// kvCheck collects the samples of one cell's window.
type kvCheck struct {
	context int
	samples []kvSample
	// terms names the engine's gauge and the suspect figure of a source.
	terms *engine.Status
}

// kvSample is one poll with the one stream resident: the usage of the
// engine holding it, the tokens it holds, the tokens of the blocks those
// take (held: resident rounded up to whole blocks; resident when the
// block size is unknown), and the number of engines.
type kvSample struct {
	usage          float64
	resident, held int64
	engines        int
}

// maxTokensDuringScrape bounds how far the stream may advance while
// /metrics is read for the sample to count: more means the stream
// restarted or the scrape was slow, and the token count is uncertain.
const maxTokensDuringScrape = 64

// sample records one poll. before and after are the stream's completion
// tokens read on either side of the scrape; decoding is the client's
// number of streams past their first token. A poll counts only when the
// server runs exactly one request and queues none, the client has that one
// stream decoding, and the scrape has a usage. With data parallelism each
// engine's usage is relative to its own KV cache and only one engine holds
// the stream: the largest usage is that engine's.
func (k *kvCheck) sample(snap promread.Snapshot, before, after int64, decoding int64) {
	if !snap.HasRequests || snap.Running != 1 || snap.Waiting != 0 || decoding != 1 || len(snap.KVUsage) == 0 {
		return
	}
	usage := snap.KVUsageMax()
	if usage <= 0 || usage > 1 || before <= 0 || after < before || after-before > maxTokensDuringScrape {
		return
	}
	resident := int64(k.context) + (before+after)/2
	held := resident
	if b := snap.KV.TokenBlock; b > 0 {
		held = (resident + b - 1) / b * b
	}
	k.samples = append(k.samples, kvSample{usage: usage, resident: resident, held: held, engines: len(snap.KVUsage)})
}

// implied is the capacity a sample implies: the tokens of the blocks held
// ÷ usage per engine, times the engines.
func (s kvSample) implied() float64 { return float64(s.held) / s.usage * float64(s.engines) }

// result is the check of the median sample (by implied capacity) against
// capacity from source, and a warning.KVCapacity (about the source, with
// the implied and the used capacity and their ratio) when they disagree
// by more than kvCheckTolerance (no code: none); nil without samples.
// name names the cell.
func (k *kvCheck) result(name string, capacity int64, source string) (*result.KVUsageCheck, warning.Warning) {
	if len(k.samples) == 0 {
		return nil, warning.Warning{}
	}
	ss := slices.Clone(k.samples)
	slices.SortFunc(ss, func(a, b kvSample) int {
		switch ia, ib := a.implied(), b.implied(); {
		case ia < ib:
			return -1
		case ia > ib:
			return 1
		}
		return 0
	})
	s := ss[len(ss)/2]
	implied := s.implied()
	c := &result.KVUsageCheck{
		UsagePerc:             Round(s.usage, 8),
		ResidentTokens:        s.resident,
		ImpliedCapacityTokens: int64(math.Round(implied)),
		Engines:               s.engines,
		Samples:               len(ss),
	}
	if capacity <= 0 {
		return c, warning.Warning{}
	}
	perEngine := float64(capacity) / float64(s.engines)
	c.CapacityTokens, c.CapacitySource = capacity, source
	c.ExpectedPerc = Round(float64(s.held)/perEngine, 8)
	c.FootprintTokens = int64(math.Round(s.usage * perEngine))
	ratio := float64(capacity) / implied
	if math.Abs(ratio-1) <= kvCheckTolerance {
		return c, warning.Warning{}
	}
	held := numfmt.Int(s.resident)
	if s.held != s.resident {
		held += fmt.Sprintf(" (%s in whole blocks)", numfmt.Int(s.held))
	}
	text := fmt.Sprintf("KV cross-check (%s): one stream holding %s tokens uses %.4g%% of an engine's KV cache (%s), "+
		"which implies a capacity of %s tokens; the capacity in use, %s tokens from %s, is %.2f× that: %s",
		name, held, s.usage*100, k.terms.KVUsage, numfmt.Int(c.ImpliedCapacityTokens), numfmt.Int(capacity), source, ratio, suspect(k.terms, source))
	return c, warning.New(warning.KVCapacity, text, "", map[string]float64{
		warning.FigImpliedTokens:  float64(c.ImpliedCapacityTokens),
		warning.FigCapacityTokens: float64(c.CapacityTokens),
		warning.FigRatio:          float64(c.CapacityTokens) / float64(c.ImpliedCapacityTokens),
	}).About(source)
}

// suspect says which source of the capacity a failed cross-check points
// at (docs/method.md#kv-capacity), in the engine's terms.
func suspect(terms *engine.Status, source string) string {
	if source == vocab.KVSourceSpec {
		return "the spec's kv_cache_tokens is suspect"
	}
	if s := terms.KVSuspect(source); s != "" {
		return s
	}
	return "the capacity's source is suspect"
}
