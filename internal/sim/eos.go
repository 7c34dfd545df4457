package sim

import "math"

// defaultEOSMean is the mean answer length, in tokens, of a request that
// lets the model stop (ignore_eos false) when --sim-eos-mean is not given.
const defaultEOSMean = 256

// eosSigma is the spread of the log of the natural answer length: the
// simulated model's answers are log-normal (median = mean × e^(−σ²/2),
// about 0.6 × mean at σ = 1), a long right tail as chat answers have.
const eosSigma = 1.0

// naturalLength is where the simulated model ends its answer with an EOS
// token, counting the EOS: log-normal with the given mean, at least 1,
// and a function of the prompt and the seeds only, so the same request
// always stops at the same token (as a greedy model does) while different
// prompts differ. requestSeed is the request's seed field (0 without).
func naturalLength(promptHash, simSeed, requestSeed uint64, mean float64) int {
	x := mix64(promptHash ^ mix64(simSeed^0x656f73) ^ mix64(requestSeed+0x5eed))
	// Two uniforms from x's halves, then Box–Muller.
	u1 := (float64(x>>32) + 0.5) / (1 << 32)
	u2 := (float64(x&0xffffffff) + 0.5) / (1 << 32)
	z := math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
	mu := math.Log(mean) - eosSigma*eosSigma/2
	return max(1, int(math.Round(math.Exp(mu+eosSigma*z))))
}

// outputLimit is how many tokens a request generates, and whether its
// last one is EOS: max_tokens with ignore_eos; otherwise the model's
// natural length, but never below min_tokens + 1 (vLLM masks EOS until
// min_tokens are out, and the model that wanted to stop does so at the
// next token), and never beyond max_tokens, which then ends it by length
// (vLLM's check_stop, vllm/v1/core/sched/utils.py, tests the EOS before
// the length: an EOS drawn as the max_tokens-th token is a stop).
func outputLimit(maxTokens, minTokens int, ignoreEOS bool, natural int) (limit int, eos bool) {
	if ignoreEOS {
		return maxTokens, false
	}
	n := natural
	if n <= minTokens {
		n = minTokens + 1
	}
	if n > maxTokens {
		return maxTokens, false
	}
	return n, true
}
