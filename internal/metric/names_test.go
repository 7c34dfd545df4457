package metric

import (
	"slices"
	"testing"
)

// names are the name constants of names.go.
var names = []string{TPS,
	TotalTPS, PerRequestTPS, TTFTMs, TTFTMsP90, TTFTMsP99, TBTMs, TBTMsP90, TBTMsP99, ITLMs, TPOTMs,
	ActiveAvg, Completed, Rejected, OutputTokens, MeasuredS, ServerTotalTPS, SpecAcceptRate, SpecAcceptLen, ServerTTFTMsMean, ServerITLMsMean, ServerE2EMsMean,
	AchievedRPS, GoodputRPS, GoodputShare, Launched, Unfinished, RejectedShare, E2EMs, E2EMsP90, E2EMsP99, E2EMsMean, ConcurrencyAvg, PrefixCacheHitRate, OutputTPS,
	TTFOMs, TTFOMsP90, TTFOMsP99, ReasoningTokens, ContentTokens, ReasoningTPS, ContentTPS}

// TestNamesAreTheTable: every name constant names a metric of Table, and
// every metric of Table has a constant, so that code outside the table
// never needs to spell a metric name.
func TestNamesAreTheTable(t *testing.T) {
	var table []string
	for _, m := range Table {
		table = append(table, m.Name)
		if !slices.Contains(names, m.Name) {
			t.Errorf("the %s metric %q has no name constant in names.go", m.Phase, m.Name)
		}
	}
	for _, n := range names {
		if !slices.Contains(table, n) {
			t.Errorf("name constant %q names no metric of Table", n)
		}
	}
}
