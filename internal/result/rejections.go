package result

// Rejections is the cross-check of a cell's rejected requests
// (docs/method.md#rejections): what the client and the server counted of
// the requests the server refused at admission, over the whole cell — from
// a /metrics read before its first request to one after its last ended,
// warm-up, steady-state gate and drain included, so that no request of the
// cell is in flight at either read and no other request is counted.
type Rejections struct {
	// Client is the cell's requests answered with a refusal.
	Client int `json:"client"`
	// Unanswered is the cell's requests the client closed before any
	// answer came (the window's end, a drain's cool-down arrivals): each
	// may have been refused without the client seeing it.
	Unanswered int `json:"unanswered,omitempty"`
	// Server is Δ of the server's admission-rejection counter over the
	// cell, ByReason the same by the engine's reason label (the limit that
	// refused them: vLLM's max_num_queued_reqs, max_num_queued_tokens);
	// nil where the server exports no such counter.
	Server   *int64           `json:"server,omitempty"`
	ByReason map[string]int64 `json:"by_reason,omitempty"`
}

// Agree reports whether the server's count fits the client's: every
// refusal the client saw is counted, and at most Unanswered more (Client ≤
// Server ≤ Client + Unanswered); true without a server count.
func (r *Rejections) Agree() bool {
	if r == nil || r.Server == nil {
		return true
	}
	s := *r.Server
	return s >= int64(r.Client) && s <= int64(r.Client+r.Unanswered)
}
