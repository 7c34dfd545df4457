package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
	seconds    float64
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes runs as one JUnit XML document: one <testsuite> per spec
// file (Results grouped by Spec, in first-seen order), one <testcase> per
// test — each prefill and decode cell, each verdict, and the run itself when
// it ended with an infrastructure error. A failed verdict is a <failure>
// whose message is the assertion's message and whose text holds the values
// read; errors (verdicts, cells that could not be measured, a crashed
// server) are <error>; over-capacity cells, skipped verdicts and search
// probes that missed their objective are <skipped>.
func WriteJUnit(w io.Writer, runs []*result.Results) error {
	views := make([]*view, len(runs))
	for i, res := range runs {
		views[i] = newView(res)
	}
	return writeJUnit(w, views)
}

// writeJUnit lays the runs' views out as one JUnit document (WriteJUnit).
func writeJUnit(w io.Writer, views []*view) error {
	doc := junitSuites{Name: "slogate"}
	index := map[string]int{}
	var total float64
	keys := make([]vocab.RunKey, len(views))
	for i, v := range views {
		keys[i] = vocab.RunKey{Spec: v.Res.Spec, Server: v.Res.Server.Name}
	}
	names := vocab.RunNames(keys)
	for ri, v := range views {
		res := v.Res
		i, ok := index[res.Spec]
		if !ok {
			i = len(doc.Suites)
			index[res.Spec] = i
			doc.Suites = append(doc.Suites, junitSuite{Name: res.Spec})
			if !res.Started.IsZero() {
				doc.Suites[i].Timestamp = res.Started.UTC().Format("2006-01-02T15:04:05")
			}
		}
		s := &doc.Suites[i]
		addRun(s, v, names[ri])
		if !res.Started.IsZero() && res.Finished.After(res.Started) {
			secs := res.Finished.Sub(res.Started).Seconds()
			s.seconds += secs
			total += secs
		}
	}
	for i := range doc.Suites {
		s := &doc.Suites[i]
		s.Time = fmt.Sprintf("%.3f", s.seconds)
		for _, c := range s.Cases {
			s.Tests++
			switch {
			case c.Failure != nil:
				s.Failures++
			case c.Error != nil:
				s.Errors++
			case c.Skipped != nil:
				s.Skipped++
			}
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
	}
	doc.Time = fmt.Sprintf("%.3f", total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// addRun adds the test cases of one run to s, its tests named after run
// (vocab.RunNames: the server, or <spec>/<server> when another run of the
// document has a server of the same name).
func addRun(s *junitSuite, v *view, run string) {
	res := v.Res
	srv := run
	prop := func(name, value string) {
		if value != "" {
			s.Properties = append(s.Properties, junitProperty{srv + "." + name, value})
		}
	}
	prop("model", res.Server.Model)
	prop("version", res.Server.Version)
	prop("hardware", v.hardwareName())
	if res.Server.Simulated {
		prop("simulated", "true")
	}
	newCase := func(name string, seconds float64) junitCase {
		return junitCase{Classname: res.Spec, Name: name, Time: fmt.Sprintf("%.3f", seconds)}
	}
	if res.Error != "" || res.Interrupted {
		c := newCase(srv, 0)
		msg := res.Error
		if msg == "" {
			msg = "interrupted"
		}
		c.Error = &junitProblem{Message: msg, Type: "infrastructure", Text: msg}
		s.Cases = append(s.Cases, c)
	}
	// cellCase is one cell's test case: its summary line as output, its
	// status as the problem.
	cellCase := func(ref vocab.CellRef, elapsedS float64, summary string, st vocab.Status, reason string) {
		c := newCase(ref.TestName(srv), elapsedS)
		c.SystemOut = summary
		cellProblem(&c, st, reason)
		s.Cases = append(s.Cases, c)
	}
	for i := range res.Prefill {
		p := &res.Prefill[i]
		cellCase(p.Ref(), p.ElapsedS, prefillSummary(v.Prefill[i]), p.Status, p.Reason)
	}
	for i := range res.Decode {
		d := &res.Decode[i]
		cellCase(d.Ref(), d.ElapsedS, decodeSummary(d), d.Status, d.Reason)
	}
	for i := range res.Traffic {
		tc := &res.Traffic[i]
		cellCase(tc.Ref(), tc.ElapsedS, trafficCellSummary(tc), tc.Status, tc.Reason)
	}
	for i := range res.Search {
		for j := range res.Search[i].Probes {
			p := &res.Search[i].Probes[j]
			if tc := p.Traffic; tc != nil {
				c := newCase(tc.Ref().TestName(srv), tc.ElapsedS)
				c.SystemOut = probeSummary(p)
				if p.Decision != result.DecisionUnmeasurable {
					cellProblem(&c, tc.Status, tc.Reason)
				}
				probeSkipped(&c, p)
				s.Cases = append(s.Cases, c)
				continue
			}
			c := newCase(p.Cell.Ref().TestName(srv), p.Cell.ElapsedS)
			c.SystemOut = probeSummary(p)
			cellProblem(&c, p.Cell.Status, p.Cell.Reason)
			probeSkipped(&c, p)
			s.Cases = append(s.Cases, c)
		}
	}
	for _, v := range res.Verdicts {
		test := v.Test
		if rest, ok := strings.CutPrefix(test, res.Server.Name+"/"); ok {
			test = run + "/" + rest
		}
		c := newCase(test, 0)
		text := verdictText(v)
		msg := v.Message
		if msg == "" && len(v.Details) > 0 {
			msg = v.Details[0]
		}
		switch v.Outcome {
		case vocab.Fail:
			c.Failure = &junitProblem{Message: msg, Type: v.Kind, Text: text}
		case vocab.Inconclusive:
			// A failure of its own type, so that CI can tell "measure more"
			// from "regressed".
			c.Failure = &junitProblem{Message: msg, Type: "inconclusive", Text: text}
		case vocab.Error:
			c.Error = &junitProblem{Message: msg, Type: v.Kind, Text: text}
		case vocab.Skip:
			if msg == "" {
				msg = "skipped"
			}
			c.Skipped = &junitProblem{Message: msg}
		default:
			c.SystemOut = text
		}
		s.Cases = append(s.Cases, c)
	}
}

// verdictText is a verdict's rule, where it is written and the values read.
func verdictText(v result.Verdict) string {
	var lines []string
	where := v.Where()
	if v.Rule != "" {
		if where != "" {
			lines = append(lines, where+": "+v.Rule)
		} else {
			lines = append(lines, v.Rule)
		}
	} else if where != "" {
		lines = append(lines, where)
	}
	lines = append(lines, v.Details...)
	if v.Message != "" {
		lines = append(lines, v.Message)
	}
	return strings.Join(lines, "\n")
}

// probeSkipped skips the case of a search probe the search did not take
// as meeting its objective, as the console does (docs/method.md#search):
// such a probe is how a search finds its bound, neither a pass nor a
// failure. A case that already has its problem keeps it.
func probeSkipped(c *junitCase, p *result.SearchProbe) {
	if p.Passed || c.Error != nil || c.Skipped != nil {
		return
	}
	msg := "objective not met"
	switch p.Decision { // worded as the console words it
	case result.DecisionUndecided:
		msg = "objective undecided"
	case result.DecisionUnmeasurable:
		msg = "unmeasurable"
	}
	if why := ProbeReason(p); why != "" {
		msg += ": " + why
	}
	c.Skipped = &junitProblem{Message: msg}
}

func cellProblem(c *junitCase, s vocab.Status, reason string) {
	switch s {
	case vocab.StatusOverCapacity:
		c.Skipped = &junitProblem{Message: "over capacity"}
	case vocab.StatusError:
		if reason == "" {
			reason = "cell could not be measured"
		}
		c.Error = &junitProblem{Message: reason, Type: "infrastructure", Text: reason}
	case vocab.StatusUnmeasurable:
		// Neither passed nor failed: a failure of type unmeasurable, as an
		// inconclusive verdict is one of type inconclusive.
		c.Failure = &junitProblem{Message: "unmeasurable: " + reason, Type: "unmeasurable", Text: reason}
	case vocab.StatusSaturated:
		// Past the server's capacity: a failure (judge.Decide), its
		// evidence the text.
		c.Failure = &junitProblem{Message: "saturated: " + reason, Type: "saturated", Text: reason}
	}
}

// prefillSummary is a prefill cell in one line, from its row r of the
// Prefill table: "46.7K tok/s · 175 ms TTFT"; a cell not measured, its
// status and reason.
func prefillSummary(r prefillRow) string {
	if !r.cell.Status.Measured() {
		return withReason(r.Status(), r.cell.Reason)
	}
	return r.TPS() + " tok/s · " + r.TTFT() + " TTFT"
}

// trafficCellSummary is a traffic cell in one line: TrafficSummary; a
// cell not measured, its status and reason.
func trafficCellSummary(c *result.TrafficCell) string {
	if !c.Status.Measured() {
		return withReason(statusWord(c.Status), c.Reason)
	}
	return TrafficSummary(c)
}

// decodeSummary is a decode cell in one line: "6,018.4 tok/s · 95.9 tok/s
// per request · 1,027 ms TTFT · 10.4 ms between tokens", with "requests
// queued" appended for a queued cell.
func decodeSummary(c *result.DecodeCell) string {
	if !c.Status.Measured() {
		return withReason(statusWord(c.Status), c.Reason)
	}
	s := decodeText(c, metric.TotalTPS) + " tok/s · " + decodeText(c, metric.PerRequestTPS) + " tok/s per request · " +
		decodeText(c, metric.TTFTMs) + " TTFT · " + decodeText(c, metric.TBTMs) + " between tokens"
	if c.Status == vocab.StatusQueued {
		s += " · requests queued"
	}
	return s
}

func withReason(word, reason string) string {
	if reason == "" {
		return word
	}
	return word + ": " + reason
}

// probeSummary is a probe's decode summary and whether it met the objective.
func probeSummary(p *result.SearchProbe) string {
	if p.Traffic != nil {
		line := trafficCellSummary(p.Traffic)
		d := p.Decision
		if d == "" {
			d = "not judged"
		}
		line += fmt.Sprintf("\n%d windows; objective %s", p.Windows, d)
		if why := ProbeReason(p); why != "" {
			line += ": " + why
		}
		return line
	}
	line := decodeSummary(&p.Cell)
	switch {
	case p.Passed:
		return line + "\nobjective met"
	case p.Reason != "":
		return line + "\nobjective not met: " + p.Reason
	}
	return line + "\nobjective not met"
}
