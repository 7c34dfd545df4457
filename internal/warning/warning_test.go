package warning

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestString: a warning reads as its summary, then ": " and its detail
// when it has one; Strings keeps the order.
func TestString(t *testing.T) {
	tests := []struct {
		name string
		w    Warning
		want string
	}{
		{name: "summary and detail", w: New(NoMetrics, "no /metrics around the window", "server_total_tps not measured", nil),
			want: "no /metrics around the window: server_total_tps not measured"},
		{name: "summary alone", w: New(ServerTPSGap, "server_total_tps 331.1 differs from total_tps 378.5 by -12.5%", "", nil),
			want: "server_total_tps 331.1 differs from total_tps 378.5 by -12.5%"},
		{name: "a text of no kind", w: untyped("3 of the window's requests"), want: "3 of the window's requests"},
		{name: "one repeat's figures", w: Warning{Code: ServerTPSGap, Summary: "server_total_tps 197.6 differs from total_tps 246.4 by -19.8%",
			Figures: map[string]float64{FigTotalTPS: 246.4}, Repeats: []int{1}, Of: 2},
			want: "in repeat 1 of 2 (its own figures, not the median): server_total_tps 197.6 differs from total_tps 246.4 by -19.8%"},
		{name: "some repeats, no figures", w: Warning{Code: SpeculativeIdle, Summary: "no speculative step ran", Repeats: []int{1, 3, 4}, Of: 5},
			want: "in repeats 1, 3 and 4 of 5: no speculative step ran"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.w.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
	if got := Strings([]Warning{tests[0].w, tests[2].w}); !cmp.Equal(got, []string{tests[0].want, tests[2].want}) {
		t.Errorf("Strings = %q", got)
	}
}

// TestJSON: results.json holds a warning as an object (code, summary,
// detail, figures) and reads it back equal; a results.json written before
// warnings had codes holds plain strings, read as warnings of no kind with
// the same text; anything else is an error.
func TestJSON(t *testing.T) {
	slow := New(SlowScrape, "GET /metrics took 10.1 ms on average (max 55.0 ms, 49 scrapes at one per 50ms)",
		"polling may perturb the server (docs/method.md#polling)",
		map[string]float64{FigMeanMs: 10.1, FigMaxMs: 55, FigScrapes: 49, FigIntervalMs: 50})
	b, err := json.Marshal([]Warning{slow, untyped("plain")})
	if err != nil {
		t.Fatal(err)
	}
	const want = `[{"code":"slow_scrape","summary":"GET /metrics took 10.1 ms on average (max 55.0 ms, 49 scrapes at one per 50ms)","detail":"polling may perturb the server (docs/method.md#polling)","figures":{"interval_ms":50,"max_ms":55,"mean_ms":10.1,"scrapes":49}},{"summary":"plain"}]`
	if string(b) != want {
		t.Errorf("marshalled\n %s\nwant\n %s", b, want)
	}
	tests := []struct {
		name, in string
		want     []Warning
		wantErr  bool
	}{
		{name: "objects", in: want, want: []Warning{slow, untyped("plain")}},
		{name: "an old file's strings", in: `["server_total_tps 331.1 differs from total_tps 378.5 by -12.5%", "no /metrics around the window: server_total_tps not measured"]`,
			want: []Warning{untyped("server_total_tps 331.1 differs from total_tps 378.5 by -12.5%"), untyped("no /metrics around the window: server_total_tps not measured")}},
		{name: "a number", in: `[3]`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Warning
			err := json.Unmarshal([]byte(tt.in), &got)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if !tt.wantErr && !cmp.Equal(got, tt.want) {
				t.Errorf("read %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestAppendNew: a warning whose code and text are already held is not
// appended again, even when a figure differs (the first is kept); one of
// another text, or of the same text and another code, is.
func TestAppendNew(t *testing.T) {
	a := New(ServerTPSGap, "gap", "", map[string]float64{FigGap: 0.1})
	a2 := New(ServerTPSGap, "gap", "", map[string]float64{FigGap: 0.1000001})
	b := New(ServerTPSGap, "gap 2", "", map[string]float64{FigGap: 0.2})
	got := AppendNew([]Warning{a}, a, a2, b, b, untyped("gap"))
	if want := []Warning{a, b, untyped("gap")}; !cmp.Equal(got, want) {
		t.Errorf("AppendNew = %+v, want %+v", got, want)
	}
	if !Has(got, ServerTPSGap) || Has(got, SlowScrape) {
		t.Errorf("Has: %v %v, want true false", Has(got, ServerTPSGap), Has(got, SlowScrape))
	}
}

// TestTextless: a warning without its words keeps its code, subject and
// figures, so two warnings of one kind and figures but other words are
// equal textless, and two of other subjects or figures are not.
func TestTextless(t *testing.T) {
	dropped := func(summary, metric string, reported float64) Warning {
		return New(MetricDropped, summary, "", map[string]float64{FigReported: reported, FigRepeats: 2}).About(metric)
	}
	a := dropped("spec_accept_rate dropped", "spec_accept_rate", 1)
	tests := []struct {
		name      string
		b         Warning
		wantEqual bool
	}{
		{name: "other words", b: dropped("reworded", "spec_accept_rate", 1), wantEqual: true},
		{name: "another subject", b: dropped("spec_accept_rate dropped", "spec_accept_len", 1)},
		{name: "another figure", b: dropped("spec_accept_rate dropped", "spec_accept_rate", 2)},
		{name: "another code", b: New(Deferred, a.Summary, "", a.Figures).About(a.Subject)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := a.Textless().Equal(tt.b.Textless()); got != tt.wantEqual {
				t.Errorf("textless equal = %v, want %v", got, tt.wantEqual)
			}
		})
	}
	if got := Textless([]Warning{a}); len(got) != 1 || got[0].Summary != "" || got[0].Subject != a.Subject || !cmp.Equal(got[0].Figures, a.Figures) || a.Summary == "" {
		t.Errorf("Textless = %+v (of %+v): want the code, subject and figures, and the original untouched", got, a)
	}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var back Warning
	if err := json.Unmarshal(b, &back); err != nil || !back.Equal(a) {
		t.Errorf("round trip of %s = %+v (%v), want %+v", b, back, err, a)
	}
}

// TestOfRepeats: a cell's repeats' warnings combined: one every repeat
// carried is kept once as it is (the cell's); one only some carried is
// kept once, marked with those repeats, its figures theirs; order first
// seen; one repeat is itself.
func TestOfRepeats(t *testing.T) {
	gap := func(server, client float64) Warning {
		return New(ServerTPSGap, fmt.Sprintf("server_total_tps %.1f differs from total_tps %.1f", server, client), "",
			map[string]float64{FigServerTotalTPS: server, FigTotalTPS: client})
	}
	idle := New(SpeculativeIdle, "no speculative step ran", "", nil)
	tagged := func(w Warning, of int, repeats ...int) Warning {
		w.Repeats, w.Of = repeats, of
		return w
	}
	tests := []struct {
		name string
		runs [][]Warning
		want []Warning
	}{
		{name: "one repeat", runs: [][]Warning{{gap(1, 2)}}, want: []Warning{gap(1, 2)}},
		{name: "every repeat: the cell's", runs: [][]Warning{{idle}, {idle}, {idle}}, want: []Warning{idle}},
		{name: "figures differ: each its repeat's", runs: [][]Warning{{gap(197.6, 246.4), idle}, {idle}, {gap(385.6, 305.6), idle}},
			want: []Warning{tagged(gap(197.6, 246.4), 3, 1), idle, tagged(gap(385.6, 305.6), 3, 3)}},
		{name: "the same text in two of three", runs: [][]Warning{{idle}, nil, {idle, idle}},
			want: []Warning{tagged(idle, 3, 1, 3)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(Textless(tt.want), Textless(OfRepeats(tt.runs))); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
