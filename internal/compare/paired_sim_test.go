package compare

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// The error rates of the traffic comparison by Monte Carlo over the
// decision code itself (docs/method.md#comparing-traffic): simulated
// windows of requests, each request's latency its own size and the load
// at its arrival (shared by both runs of a paired replay) times each run's
// own noise, go through bootstrapStats and Shift.Decide: windows of 1,000
// requests (a minute at 16 req/s), each request with 10 % noise of its own
// on each side. By default 40 windows a case; SLOGATE_SIM_ERRORS=1 runs
// 1,000 and prints the rates the docs quote:
//
//	SLOGATE_SIM_ERRORS=1 go test -run TestTrafficErrorRates -v ./internal/compare

// simWindow is one window of n requests on both sides: request i has the
// latent factor of its size and load (lognormal, σ 0.6), the same on both
// sides, and each side's own noise (lognormal, σ noise); B is slow times
// slower. A request meets the SLO when its TTFT is at most 250 ms.
func simWindow(r *rand.Rand, n int, noise, slow float64) (a, b []reqFigures) {
	for range n {
		latent := math.Exp(0.6 * r.NormFloat64())
		tok := math.Exp(0.3 * r.NormFloat64())
		side := func(f float64) reqFigures {
			e := math.Exp(noise * r.NormFloat64())
			q := reqFigures{ttft: 100 * latent * e * f, tbt: 10 * tok * e * f, hasTTFT: true, done: true, hasTBT: true}
			q.e2e = q.ttft + 128*q.tbt
			q.met = q.ttft <= 250
			return q
		}
		a, b = append(a, side(1)), append(b, side(slow))
	}
	return a, b
}

// simStats are the statistics the error rates are taken of.
var simStats = []trafficStat{{Kind: statTTFT, P: 0.5}, {Kind: statTTFT, P: 0.99}, {Kind: statE2E, P: 0.5}, {Kind: statMet}}

// TestTrafficErrorRates: on identical sides a paired comparison calls a
// regression at most α of the time and its upper bound lies below the
// true ratio (1) at most about α of the time; a side 10 % slower is
// regressed beyond a 5 % tolerance in ≥ 90 % of windows at the median; and
// the paired interval of the TTFT change is narrower than the unpaired
// one on the same requests.
func TestTrafficErrorRates(t *testing.T) {
	trials, long := 40, os.Getenv("SLOGATE_SIM_ERRORS") == "1"
	if long {
		trials = 1000
	}
	const n, tol, alpha, noise = 1000, 0.05, 0.05, 0.1
	r := rand.New(rand.NewPCG(31, 2))
	type tally struct{ regressed, missed, caught int }
	same := make([]tally, len(simStats))
	slow := make([]tally, len(simStats))
	var widthPaired, widthUnpaired float64
	for trial := range trials {
		a, b := simWindow(r, n, noise, 1)
		res, ok := bootstrapStats(a, b, true, simStats, 400, alpha, uint64(trial))
		un, okU := bootstrapStats(a, b, false, simStats, 400, alpha, uint64(trial))
		for i, s := range simStats {
			if !ok[i] || !okU[i] {
				t.Fatalf("stat %d not bootstrapped", i)
			}
			sh := Shift{Ratio: res[i].Ratio, Lower: res[i].Lower, Upper: res[i].Upper}
			higher := s.Kind == statMet
			if sh.Decide(tol, higher) == Regressed {
				same[i].regressed++
			}
			if (!higher && res[i].Upper < 1) || (higher && res[i].Lower > 1) {
				same[i].missed++ // the better-side bound excludes the truth
			}
		}
		widthPaired += math.Log(res[0].Upper / res[0].Lower)
		widthUnpaired += math.Log(un[0].Upper / un[0].Lower)
		a, b = simWindow(r, n, noise, 1.10)
		res, _ = bootstrapStats(a, b, true, simStats, 400, alpha, uint64(trial))
		for i, s := range simStats {
			sh := Shift{Ratio: res[i].Ratio, Lower: res[i].Lower, Upper: res[i].Upper}
			if sh.Decide(tol, s.Kind == statMet) == Regressed {
				slow[i].caught++
			}
		}
	}
	names := []string{"ttft p50", "ttft p99", "e2e p50", "slo share"}
	// The bounds allow the binomial noise of trials draws: 3 standard
	// errors above α.
	slack := alpha + 3*math.Sqrt(alpha*(1-alpha)/float64(trials))
	for i := range simStats {
		rate := func(k int) float64 { return float64(k) / float64(trials) }
		t.Logf("%s: identical regressed %.3f, bound missed 1 %.3f; 10%% slower regressed %.3f",
			names[i], rate(same[i].regressed), rate(same[i].missed), rate(slow[i].caught))
		if rate(same[i].regressed) > alpha {
			t.Errorf("%s: identical sides regressed in %.3f of windows, want ≤ α = %v", names[i], rate(same[i].regressed), alpha)
		}
		if rate(same[i].missed) > slack {
			t.Errorf("%s: the bound excluded the true ratio in %.3f of windows, want ≤ %.3f", names[i], rate(same[i].missed), slack)
		}
	}
	for _, i := range []int{0, 2} {
		if rate := float64(slow[i].caught) / float64(trials); rate < 0.9 {
			t.Errorf("%s: a 10%% slower side regressed in %.3f of windows, want ≥ 0.9", names[i], rate)
		}
	}
	wp, wu := widthPaired/float64(trials), widthUnpaired/float64(trials)
	t.Logf("ttft p50 interval width (log ratio): paired %.4f, unpaired %.4f (%.1f× the requests unpaired for the same width)", wp, wu, (wu/wp)*(wu/wp))
	if wp >= wu {
		t.Errorf("paired width %.4f is not below the unpaired %.4f", wp, wu)
	}
}
