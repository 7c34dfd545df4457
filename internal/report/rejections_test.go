package report

import (
	"html"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// rejectedResults is a run whose server refused requests at admission
// (docs/method.md#rejections): a decode cell at 6 streams on a server that
// takes 3, a traffic cell above its capacity, and a cell of neither.
func rejectedResults() *result.Results {
	n := func(v int64) *int64 { return &v }
	return &result.Results{Server: result.Server{Name: "tiny"},
		Decode: []result.DecodeCell{
			{Matrix: "decode", Context: 1024, Concurrency: 2, Status: vocab.StatusValid, TotalTPS: 100, PerRequestTPS: 50, TTFTMs: 10, TBTMs: 20, MeasuredS: 2, Completed: 4},
			{Matrix: "decode", Context: 1024, Concurrency: 6, Status: vocab.StatusQueued, TotalTPS: 150, PerRequestTPS: 50, TTFTMs: 10, TBTMs: 20, MeasuredS: 2, Completed: 6,
				Reason: "the server refused 57 of the window's requests at admission (its queue limit), so fewer than 6 ran", Rejected: 57,
				Rejections: &result.Rejections{Client: 60, Server: n(60), ByReason: map[string]int64{"max_num_queued_reqs": 60}}},
		},
		Traffic: []result.TrafficCell{
			{Traffic: "steady", Context: 1024, Rate: 8, Arrivals: vocab.ArrivalsConstant, Status: vocab.StatusQueued, Reason: "the server refused 12 of the window's 80 requests at admission (its queue limit)",
				AchievedRPS: 8, GoodputRPS: 6.8, GoodputShare: 0.85, Launched: 80, Completed: 68, Rejected: 12, RejectedShare: 0.15,
				MeasuredS: 10, E2EMs: 300, TTFTMs: 20, TTFTMsP99: 40, TBTMs: 5, ConcurrencyAvg: 3,
				Rejections: &result.Rejections{Client: 15, Unanswered: 1, Server: n(16), ByReason: map[string]int64{"max_num_queued_reqs": 16}}},
		}}
}

// TestRejectionsInReports: the requests a server refused at admission are
// their own figure in every view of the run — the console's lines, the
// metric lines, report.md's and report.html's Rejected requests section and
// Traffic table, the CSV — and take no room where there are none.
func TestRejectionsInReports(t *testing.T) {
	res := rejectedResults()
	md, err := Render("md", res)
	if err != nil {
		t.Fatal(err)
	}
	page, err := Render("html", res)
	if err != nil {
		t.Fatal(err)
	}
	csv, err := Render("csv", res)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, got, want string
	}{
		{name: "decode line", got: DecodeLine(&res.Decode[1]),
			want: "150.0 tok/s total · 50.0 tok/s/request · TTFT 10 ms · TBT 20.0 ms · 57 rejected · queued (the server refused 57 of the window's requests at admission (its queue limit), so fewer than 6 ran)"},
		{name: "decode metric line", got: DecodeMetrics(&res.Decode[1]), want: " completed=6 rejected=57 output_tokens=0"},
		{name: "traffic line", got: TrafficSummary(&res.Traffic[0]), want: "80 launched, 68 completed, 12 rejected in 10s:"},
		{name: "traffic metric line", got: TrafficMetrics(&res.Traffic[0]), want: " unfinished=0 rejected=12 rejected_share=0.15 "},
		{name: "report.md section", got: string(md),
			want: "## Rejected requests\n\n" + legendRejections + "\n\n" +
				"- decode/ctx=1K/conc=6: 57 of the window's requests refused; over the cell 60 seen by the client, 60 counted by the server (max_num_queued_reqs 60)\n" +
				"- traffic/steady/ctx=1K/rate=8: 12 of the window's 80 requests refused (15.0%); over the cell 15 seen by the client (and 1 closed before any answer), 16 counted by the server (max_num_queued_reqs 16)\n\n"},
		{name: "report.md traffic table", got: string(md), want: "| Rate (req/s) | Status | Launched requests | Completed requests | Rejected requests | Achieved req/s |"},
		{name: "report.html section", got: html.UnescapeString(string(page)),
			want: "<h2>Rejected requests</h2><p class=\"legend\">" + legendRejections + "</p><ul><li>decode/ctx=1K/conc=6: 57 of the window's requests refused;"},
		{name: "csv rows", got: string(csv), want: "tiny,decode,decode,1024,6,,rejected,57,requests,queued,,1\n"},
		{name: "csv traffic share", got: string(csv), want: "tiny,traffic,steady,1024,,8,rejected_share,0.15,,queued,,1\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(tc.got, tc.want) {
				t.Errorf("got\n%s\nwant it to hold\n%s", tc.got, tc.want)
			}
		})
	}
	// A cell without refusals shows none of it.
	for name, got := range map[string]string{"decode line": DecodeLine(&res.Decode[0]), "metric line": DecodeMetrics(&res.Decode[0]),
		"csv": strings.Join(csvLinesOf(string(csv), "tiny,decode,decode,1024,2,"), "\n")} {
		if strings.Contains(got, "rejected") {
			t.Errorf("%s of a cell without refusals: %s", name, got)
		}
	}
	if md, _ := Render("md", &result.Results{Server: result.Server{Name: "tiny"}, Decode: res.Decode[:1]}); strings.Contains(string(md), "Rejected") {
		t.Errorf("a run without refusals has a Rejected requests section:\n%s", md)
	}
}

// csvLinesOf are the lines of csv that start with prefix.
func csvLinesOf(csv, prefix string) []string {
	var out []string
	for _, l := range strings.Split(csv, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}
