package views

import (
	"encoding/json"
	"io"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// DiffSchema names the version of diff -format json's document; its JSON
// Schema is docs/diff.schema.json.
const DiffSchema = "slogate-diff/1"

// diffJSON is diff -format json's document (docs/diff.schema.json).
type diffJSON struct {
	Schema   string        `json:"schema"`
	Verdict  string        `json:"verdict"`
	Outcome  vocab.Outcome `json:"outcome"`
	ExitCode int           `json:"exit_code"`
	A        runJSON       `json:"a"`
	B        runJSON       `json:"b"`
	Policy   policyJSON    `json:"policy"`
	// Settings are the measurement settings that differ (compared with
	// -allow-settings-change), Server the server differences.
	Settings    []differenceJSON `json:"settings"`
	Server      []differenceJSON `json:"server"`
	InformsOnly bool             `json:"informs_only"`
	// Warnings are the comparison's own (warning.MachineDiffers).
	Warnings []warning.Warning `json:"warnings,omitempty"`
	// Rows are the cells and metrics (results.json's comparison rows).
	Rows    []result.ComparisonRow `json:"rows"`
	Lost    []lostJSON             `json:"lost"`
	Traffic []trafficJSON          `json:"traffic"`
	Method  methodJSON             `json:"method"`
	Summary map[string]int         `json:"summary"`
	// Correctness are B's correctness blocks compared with A's
	// (docs/method.md#correctness), each refusal and divergence with its
	// rule, figures and words (wordCorrectness); absent when B has none.
	Correctness []result.CorrectnessComparison `json:"correctness,omitempty"`
	// Capacity are the rate searches of both runs compared
	// (docs/method.md#capacity-lost), each with its rule, figures and
	// reason in words (CapacityReason); absent when none.
	Capacity []result.CapacityComparison `json:"capacity,omitempty"`
	// Rejected are the decode cells whose server refused requests of the
	// window at admission in either run (docs/method.md#rejections);
	// absent when neither refused any.
	Rejected []rejectedJSON `json:"rejected,omitempty"`
}

type runJSON struct {
	Path    string `json:"path"`
	Server  string `json:"server"`
	Model   string `json:"model"`
	Engine  string `json:"engine"`
	Version string `json:"version"`
	Started string `json:"started,omitempty"`
}

type policyJSON struct {
	Tolerance    float64  `json:"tolerance"`
	Alpha        float64  `json:"alpha"`
	Inconclusive string   `json:"inconclusive"`
	Metrics      []string `json:"metrics"`
}

// differenceJSON is a setting that differs; a side without it is null.
type differenceJSON struct {
	Setting string  `json:"setting"`
	A       *string `json:"a"`
	B       *string `json:"b"`
	Text    string  `json:"text"`
}

type rejectedJSON struct {
	Cell string `json:"cell"`
	A    int    `json:"a"`
	B    int    `json:"b"`
	Text string `json:"text"`
}

type lostJSON struct {
	Cell     string `json:"cell"`
	Decision string `json:"decision"`
	Text     string `json:"text"`
}

type trafficJSON struct {
	Cell    string       `json:"cell"`
	AStatus vocab.Status `json:"a_status,omitempty"`
	BStatus vocab.Status `json:"b_status,omitempty"`
	// Mode is how the requests were compared (paired, unpaired, values,
	// none), Note why not paired; Requests the baseline's requests
	// compared, Missing (paired) those of its window not in this run's,
	// left out; Unlike what differs between the schedules.
	Mode     string             `json:"mode"`
	Note     string             `json:"note,omitempty"`
	Requests int                `json:"requests"`
	Missing  int                `json:"missing,omitempty"`
	Unlike   []string           `json:"unlike,omitempty"`
	Outcome  vocab.Outcome      `json:"outcome"`
	Values   []trafficValueJSON `json:"values"`
	Text     string             `json:"text"`
	Lines    []string           `json:"lines"`
}

type trafficValueJSON struct {
	Metric string   `json:"metric"`
	Unit   string   `json:"unit,omitempty"`
	A      float64  `json:"a"`
	B      float64  `json:"b"`
	Change *float64 `json:"change"`
	// Decided: the metric gates; Decision and Outcome are its decision,
	// Lower and Upper the bounds of the change when a bootstrap decided
	// it (null when the tolerance rule did).
	Decided  bool          `json:"decided"`
	Decision string        `json:"decision,omitempty"`
	Outcome  vocab.Outcome `json:"outcome,omitempty"`
	Lower    *float64      `json:"lower,omitempty"`
	Upper    *float64      `json:"upper,omitempty"`
}

type methodJSON struct {
	Statistical bool   `json:"statistical"`
	Tested      int    `json:"tested"`
	Untested    int    `json:"untested"`
	Note        string `json:"note"`
}

// JSON writes the diff as one JSON document (docs/diff.schema.json): the
// verdict, outcome and exit code, both runs, the policy, the settings and
// server differences, a row per cell and metric with both values, the
// change, its bounds, the decision and the outcome, the cells whose server
// refused requests at admission, the lost cells, the traffic cells
// decided, the method and the counts, and the rate searches' capacity
// compared.
func (d Diff) JSON(w io.Writer) error {
	c := d.C
	doc := diffJSON{
		Schema: DiffSchema, Verdict: d.Verdict(), Outcome: c.Outcome, ExitCode: c.ExitCode(),
		A: runOf(d.PathA, c.A), B: runOf(d.PathB, c.B),
		Policy:      policyJSON{Tolerance: c.Policy.Tolerance, Alpha: c.Policy.Alpha, Inconclusive: compare.InconclusivePolicies[c.Policy.Inconclusive], Metrics: metricNames(c)},
		Settings:    differences(c.Settings),
		Server:      differences(c.Server),
		InformsOnly: c.EngineChanged,
		Warnings:    c.Warnings,
		Rows:        []result.ComparisonRow{},
		Lost:        []lostJSON{},
		Traffic:     []trafficJSON{},
		Method:      methodJSON{Statistical: c.Method.Statistical(), Tested: c.Method.Tested, Untested: c.Method.Untested, Note: MethodNote(c.Method)},
		Summary:     map[string]int{},
	}
	if rec := c.Record(); rec != nil {
		doc.Rows, doc.Correctness, doc.Capacity = rec.Rows, rec.Correctness, rec.Capacity
		for i := range doc.Capacity { // results.json keeps the rule; diff's JSON words it too
			doc.Capacity[i].Reason = CapacityReason(&c.Capacity[i], c.Policy.Tolerance)
		}
		for i := range doc.Correctness { // and the correctness rules the same way
			wordCorrectness(&doc.Correctness[i])
		}
	}
	for _, f := range c.Lost {
		doc.Lost = append(doc.Lost, lostJSON{Cell: f.Ref.Name(), Decision: f.Change.Key(), Text: FindingText(f)})
	}
	for i := range c.Cells {
		if cr := &c.Cells[i]; cr.Rejected() {
			doc.Rejected = append(doc.Rejected, rejectedJSON{Cell: cr.Ref.Name(), A: cr.RejectedA, B: cr.RejectedB, Text: rejectedChange(cr)})
		}
	}
	for i := range c.Traffic {
		p := &c.Traffic[i]
		lines := TrafficBlock(p, c.Policy.Tolerance)
		t := trafficJSON{Cell: p.Ref.Name(), Mode: p.Mode.String(), Note: p.Note, Requests: p.Requests, Missing: p.Missing, Unlike: p.Unlike,
			Outcome: p.Outcome, Values: []trafficValueJSON{}, Text: lines[0], Lines: trimIndent(lines[1:])}
		if p.A != nil {
			t.AStatus = p.A.Status
		}
		if p.B != nil {
			t.BStatus = p.B.Status
		}
		for j := range p.Values {
			v := &p.Values[j]
			tv := trafficValueJSON{Metric: v.Metric.Name, Unit: v.Metric.Unit, A: v.A, B: v.B, Change: trafficValueChange(v), Decided: v.Decided}
			if v.Decided {
				tv.Decision, tv.Outcome = v.Change.Key(), v.Outcome
			}
			if v.Bounded {
				tv.Lower, tv.Upper = ptrTo(v.Lower-1), ptrTo(v.Upper-1)
			}
			t.Values = append(t.Values, tv)
		}
		doc.Traffic = append(doc.Traffic, t)
	}
	for ch, n := range c.Summary() {
		doc.Summary[ch.Key()] = n
	}
	for _, k := range []compare.Change{compare.Unchanged, compare.Improved, compare.Regressed, compare.Inconclusive, compare.Lost, compare.Errored} {
		doc.Summary[k.Key()] += 0 // every count present, 0 included
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func runOf(path string, r *result.Results) runJSON {
	j := runJSON{Path: path, Server: r.Server.Name, Model: r.Server.Model, Engine: r.Server.EngineName(), Version: r.Server.Version}
	if !r.Started.IsZero() {
		j.Started = r.Started.UTC().Format("2006-01-02T15:04:05Z")
	}
	return j
}

// metricNames are the metrics compared, in the tables' order, each once.
func metricNames(c *compare.Comparison) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, t := range c.Tables {
		if !seen[t.Metric.Name] {
			seen[t.Metric.Name] = true
			out = append(out, t.Metric.Name)
		}
	}
	return out
}

func differences(ds []compare.Difference) []differenceJSON {
	out := []differenceJSON{}
	for _, d := range ds {
		j := differenceJSON{Setting: d.Setting, Text: d.String()}
		if d.HasA {
			a := d.A
			j.A = &a
		}
		if d.HasB {
			b := d.B
			j.B = &b
		}
		out = append(out, j)
	}
	return out
}

// wordCorrectness sets cc's sentences beside its rules, as diff's JSON
// carries them: why the blocks were not compared (refused) and why each
// diverged prompt diverged (why).
func wordCorrectness(cc *result.CorrectnessComparison) {
	if cc.Refusal != nil {
		cc.Refused = report.RefusalText(cc.Name, cc.Refusal)
	}
	for j := range cc.Diverged {
		cc.Diverged[j].Why = report.DivergenceWhy(&cc.Diverged[j])
	}
}
