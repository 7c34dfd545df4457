package warning

import (
	"encoding/json"
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
