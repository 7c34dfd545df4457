package report

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestCSVSeeds: `report -format csv` of each seed run (rebuilt from the
// seed report, as TestMarkdownReproducesSeeds does) opens with the header
// docs/ci.md#exports documents, then one row per cell and metric; the rows
// are golden (testdata/<seed>.csv; go test ./report -update).
func TestCSVSeeds(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	header := strings.Join(CSVHeader, ",")
	if !strings.Contains(string(doc), "\n"+header+"\n") {
		t.Errorf("docs/ci.md does not show the CSV header %q on a line of its own", header)
	}
	for _, sd := range seeds {
		t.Run(sd.name, func(t *testing.T) {
			res := seedResults(t, sd, readSeed(t, sd.name))
			b, err := Render("csv", res)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, sd.name+".csv", b)
			rows, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(rows[0], CSVHeader) {
				t.Fatalf("first row %q, want the documented header %q", rows[0], CSVHeader)
			}
			// Every measured decode cell has its total_tps row, with the
			// value results.json holds; every unmeasured one a status row.
			for _, c := range res.Decode {
				found := false
				for _, r := range rows[1:] {
					if r[1] == "decode" && r[3] == itoa(c.Context) && r[4] == itoa(c.Concurrency) &&
						(c.Status.Measured() && r[6] == "total_tps" && r[7] == ftoa(c.TotalTPS) || !c.Status.Measured() && r[6] == "" && r[9] == string(c.Status)) {
						found = true
					}
				}
				if !found {
					t.Errorf("no row for decode %d × %d (%s, total_tps %v)", c.Context, c.Concurrency, c.Status, c.TotalTPS)
				}
			}
		})
	}
}

func itoa(n int) string     { return strconv.Itoa(n) }
func ftoa(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// TestCSVTrafficKeys: a traffic row names its cell as the spec does: the
// context (empty when the workload sets the lengths), and the rate of an
// open loop or the concurrency of a closed one.
func TestCSVTrafficKeys(t *testing.T) {
	res := &result.Results{Schema: result.Schema, Server: result.Server{Name: "q"}, Traffic: []result.TrafficCell{
		{Traffic: "steady", Context: 8192, Rate: 0.5, Status: vocab.StatusError},
		{Traffic: "replay", Concurrency: 8, Status: vocab.StatusError},
		{Traffic: "closed", Context: 1024, Concurrency: 4, Status: vocab.StatusError},
	}}
	b, err := Render("csv", res)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, r := range rows[1:] {
		got = append(got, r[1:6])
	}
	want := [][]string{
		{"traffic", "steady", "8192", "", "0.5"},
		{"traffic", "replay", "", "8", ""},
		{"traffic", "closed", "1024", "4", ""},
	}
	if !slices.EqualFunc(got, want, slices.Equal[[]string]) {
		t.Errorf("traffic rows' kind, label, context, concurrency, rate = %q, want %q", got, want)
	}
}
