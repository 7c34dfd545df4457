package sim

// defaultReasoningShare is the mean share of a chat request's output a
// server launched with a reasoning parser spends reasoning when
// --sim-reasoning-share is not given.
const defaultReasoningShare = 0.5

// reasoningShare is --sim-reasoning-share, else defaultReasoningShare.
func (c *Config) reasoningShare() float64 {
	if c.ReasoningShare > 0 {
		return c.ReasoningShare
	}
	return defaultReasoningShare
}

// reasoningShare is the share of a chat request's output the simulated
// model spends reasoning before its answer, on a server launched with a
// reasoning parser (docs/method.md#reasoning): mean × (0.5 + u), u
// uniform in [0, 1), at most 1 (mean 2 reasons through the whole
// output). u is a function of the prompt and the seeds only, as
// naturalLength's draw is, so the same request always reasons as long.
// With ignore_eos the reasoning is that share of max_tokens; otherwise
// the answer keeps its natural length and the reasoning before it makes
// that share of the whole (the output grows as the reasoning does), at
// most max_tokens (engineRequest).
func reasoningShare(promptHash, simSeed, requestSeed uint64, mean float64) float64 {
	x := mix64(promptHash ^ mix64(simSeed^0x7468696e6b) ^ mix64(requestSeed+0x7e450))
	u := (float64(x>>11) + 0.5) / (1 << 53)
	return min(1, mean*(0.5+u))
}
