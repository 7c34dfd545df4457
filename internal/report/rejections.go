package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
)

// This file is the report's Rejected requests section: the cells whose
// server refused requests at admission, its queue full
// (docs/method.md#rejections), each with its own figures.

// legendRejections heads the Rejected requests section.
const legendRejections = "The server refused these requests at admission, a queue limit it was launched with reached: " +
	"a decode stream refused asks again after a pause, a refused traffic request counts against goodput, " +
	"and a cell with refusals in its window is queued."

// rejectionLines are the Rejected requests section's lines, one per cell
// (decode, traffic, a search's probes) whose window or whole run counted a
// refusal, in the order of the results: "decode/ctx=8K/conc=6: 57 requests
// of the window refused; over the cell 60 seen by the client, 60 counted
// by the server (max_num_queued_reqs 60)".
func rejectionLines(res *result.Results) []string {
	var out []string
	add := func(name, window string, r *result.Rejections) {
		if window == "" && r == nil {
			return
		}
		line := name + ": "
		if window != "" {
			line += window
		} else {
			line += "none of the window's requests refused"
		}
		if r != nil {
			line += "; " + overCell(r)
		}
		out = append(out, line)
	}
	decode := func(c *result.DecodeCell) {
		window := ""
		if c.Rejected > 0 {
			window = fmt.Sprintf("%s of the window's requests refused", numfmt.Int(int64(c.Rejected)))
		}
		add(c.Ref().Name(), window, c.Rejections)
	}
	traffic := func(c *result.TrafficCell) {
		window := ""
		if c.Rejected > 0 {
			window = fmt.Sprintf("%s of the window's %s requests refused (%s%%)", numfmt.Int(int64(c.Rejected)), numfmt.Int(int64(c.Launched)), numfmt.Fixed(c.RejectedShare*100, 1))
		}
		add(c.Ref().Name(), window, c.Rejections)
	}
	for i := range res.Decode {
		decode(&res.Decode[i])
	}
	for i := range res.Traffic {
		traffic(&res.Traffic[i])
	}
	for _, s := range res.Search {
		for i := range s.Probes {
			if p := s.Probes[i].Traffic; p != nil {
				traffic(p)
			} else {
				decode(&s.Probes[i].Cell)
			}
		}
	}
	return out
}

// overCell says what the client and the server counted over a whole cell:
// "over the cell 60 seen by the client, 60 counted by the server
// (max_num_queued_reqs 60)", with the requests closed unanswered and a
// disagreement said.
func overCell(r *result.Rejections) string {
	s := fmt.Sprintf("over the cell %s seen by the client", numfmt.Int(int64(r.Client)))
	if r.Unanswered > 0 {
		s += fmt.Sprintf(" (and %s closed before any answer)", numfmt.Int(int64(r.Unanswered)))
	}
	if r.Server == nil {
		return s + "; the server exports no count of them"
	}
	s += fmt.Sprintf(", %s counted by the server", numfmt.Int(*r.Server))
	if len(r.ByReason) > 0 {
		reasons := make([]string, 0, len(r.ByReason))
		for reason := range r.ByReason {
			reasons = append(reasons, reason)
		}
		sort.Strings(reasons)
		for i, reason := range reasons {
			reasons[i] = reason + " " + numfmt.Int(r.ByReason[reason])
		}
		s += " (" + strings.Join(reasons, ", ") + ")"
	}
	if !r.Agree() {
		s += ", which do not agree (see Warnings)"
	}
	return s
}
