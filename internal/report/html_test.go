package report

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

func renderHTML(t *testing.T, res *result.Results) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, res); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestHTMLContent checks, for each seed and for a run with every status,
// that report.html holds the charts, every number of the All measurements
// table and every matrix cell, and nothing that would reach the network.
func TestHTMLContent(t *testing.T) {
	type tc struct {
		name string
		res  *result.Results
	}
	var tests []tc
	for _, sd := range seeds {
		tests = append(tests, tc{sd.name, seedResults(t, sd, readSeed(t, sd.name))})
	}
	tests = append(tests, tc{"every status", sampleRun("specs/a.hcl", "qwen")})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := renderHTML(t, tt.res)
			if n := strings.Count(h, "<svg "); n != 2 {
				t.Errorf("%d inline SVG charts, want 2 (decode lines, prefill; the matrix table is the heat map)", n)
			}
			for _, bad := range []string{"http://", "https://", "<script", "<link", "@import", "url(http", "src="} {
				if strings.Contains(h, bad) {
					t.Errorf("report.html contains %q: it must be self-contained", bad)
				}
			}
			v := newView(tt.res)
			for _, row := range v.All {
				for _, cell := range row.Texts() {
					if !strings.Contains(h, ">"+cell+"<") {
						t.Errorf("All measurements value %q missing", cell)
					}
				}
			}
			for _, m := range v.Matrices {
				for _, row := range m.Cells {
					for _, c := range row {
						mc := matrixCell{c}
						for _, s := range []string{mc.TPS(), mc.TTFT(), mc.Word()} {
							if s != "" && !strings.Contains(h, ">"+s+"<") {
								t.Errorf("matrix cell text %q missing", s)
							}
						}
						if c != nil && c.Status == vocab.StatusQueued && !strings.Contains(h, `<td class="queued shaded" style="background:#`) {
							t.Error("queued cell not marked and shaded in the matrix")
						}
						if c != nil && c.Status == vocab.StatusOverCapacity && !strings.Contains(h, `<td class="over_capacity">`) {
							t.Error("over-capacity cell not hatched in the matrix")
						}
					}
				}
			}
			for _, p := range v.Prefill {
				if !strings.Contains(h, ">"+p.TPS()+"<") {
					t.Errorf("prefill %s tok/s %q missing", p.Context(), p.TPS())
				}
			}
			for _, vd := range tt.res.Verdicts {
				if !strings.Contains(h, ">"+vd.Test+"<") {
					t.Errorf("verdict %s missing", vd.Test)
				}
			}
			if !strings.Contains(h, "<title>"+htmlEscape(v.Title())+" · slogate</title>") {
				t.Error("page title missing")
			}
		})
	}
}

func htmlEscape(s string) string {
	var b bytes.Buffer
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestHTMLEscapes feeds markup through every free-text field.
func TestHTMLEscapes(t *testing.T) {
	res := sampleRun("specs/<b>.hcl", "q")
	res.Server.Model = `evil/<script>alert(1)</script>`
	res.Server.Labels = map[string]string{"gpu": `<img src=x onerror=alert(1)>`}
	res.Verdicts[1].Message = `<iframe src="javascript:alert(1)">`
	res.Warnings = []warning.Warning{warning.New(warning.FactDisagrees, "<style>body{display:none}</style>", "", nil)}
	h := renderHTML(t, res)
	for _, bad := range []string{"<script>", "<img", "<iframe", "<style>body"} {
		if strings.Contains(h, bad) {
			t.Errorf("unescaped %q in report.html", bad)
		}
	}
}

// TestHTMLScreenshot renders report.html in headless Chromium through
// scripts/screenshot-report.sh and checks the PNG has real content.
func TestHTMLScreenshot(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser: skipped with -short")
	}
	found := false
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if _, err := exec.LookPath(b); err == nil {
			found = true
		}
	}
	if !found {
		t.Skip("chromium is not installed (apt-get install -y chromium); the HTML report is not rendered in a browser by this run")
	}
	dir := t.TempDir()
	sd := seeds[1]
	report := filepath.Join(dir, "report.html")
	if err := os.WriteFile(report, []byte(renderHTML(t, seedResults(t, sd, readSeed(t, sd.name)))), 0o644); err != nil {
		t.Fatal(err)
	}
	img := screenshot(t, report, filepath.Join(dir, "report.png"))
	bounds := img.Bounds()
	if bounds.Dx() != 1400 || bounds.Dy() != 2400 {
		t.Errorf("screenshot is %v, want 1400×2400", bounds)
	}
	// A blank or error page is nearly one colour; the report has text,
	// tables and colourful charts. Count distinct colours on a grid.
	colours := map[[3]uint32]bool{}
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 7 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 7 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, b >> 8}] = true
		}
	}
	if len(colours) < 200 {
		t.Errorf("screenshot has only %d distinct colours: the page did not render", len(colours))
	}
	// The heat map's viridis colours only appear if the SVG rendered.
	yellowish := 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 3 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 3 {
			r, g, b, _ := img.At(x, y).RGBA()
			if r>>8 > 200 && g>>8 > 200 && b>>8 < 80 {
				yellowish++
			}
		}
	}
	if yellowish < 50 {
		t.Errorf("no heat-map colours in the screenshot (%d yellow samples): the SVG did not render", yellowish)
	}

	// A report of a traffic block and a search answered at the top of its
	// range: the goodput line (the only blue of the page) shows where it
	// coincides with achieved (orange), and the answer's label is whole.
	res := trafficResults()
	sr := searchResults()
	res.Search = sr.Search
	res.Search[0].Concurrency, res.Search[0].ConfirmedBy = 16, 0
	for i := range res.Search[0].Probes {
		res.Search[0].Probes[i].Passed = true
		res.Search[0].Probes[i].Cell.PerRequestTPS = 90
	}
	page := filepath.Join(dir, "traffic.html")
	if err := os.WriteFile(page, []byte(renderHTML(t, res)), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "traffic.png")
	img = screenshot(t, page, shot)
	count := func(want [3]uint32) int {
		n := 0
		for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
			for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
				r, g, b, _ := img.At(x, y).RGBA()
				if absDiff(r>>8, want[0]) < 40 && absDiff(g>>8, want[1]) < 40 && absDiff(b>>8, want[2]) < 40 {
					n++
				}
			}
		}
		return n
	}
	blue, orange := count([3]uint32{0x00, 0x72, 0xB2}), count([3]uint32{0xE6, 0x9F, 0x00})
	t.Logf("goodput %d px, achieved %d px", blue, orange)
	if blue < 400 || orange < 400 {
		t.Errorf("goodput (blue) %d px, achieved (orange) %d px: want both lines visible", blue, orange)
	}
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// screenshot renders page with scripts/screenshot-report.sh at 1400×2400
// into out and decodes it.
func screenshot(t *testing.T, page, out string) image.Image {
	t.Helper()
	cmd := exec.Command("../../scripts/screenshot-report.sh", page, out)
	cmd.Env = append(os.Environ(), "WINDOW_SIZE=1400,2400")
	done := make(chan struct{})
	var output []byte
	var err error
	go func() { output, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("screenshot script did not finish within 90s")
	}
	if err != nil {
		t.Fatalf("screenshot: %v\n%s", err, output)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	return img
}

// BenchmarkReports renders the largest seed (GLM: 9 prefill and 64 decode
// cells) in each format.
func BenchmarkReports(b *testing.B) {
	sd := seeds[1]
	res := seedResults(b, sd, readSeed(b, sd.name))
	for _, f := range []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"markdown", func(w *bytes.Buffer) error { return WriteMarkdown(w, res) }},
		{"html", func(w *bytes.Buffer) error { return WriteHTML(w, res) }},
		{"junit", func(w *bytes.Buffer) error { return WriteJUnit(w, []*result.Results{res}) }},
	} {
		b.Run(f.name, func(b *testing.B) {
			var w bytes.Buffer
			for b.Loop() {
				w.Reset()
				if err := f.render(&w); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestMatrixShading: report.html's decode table is the heat map: each
// measured cell is shaded by its total tok/s on the viridis scale (the
// matrix's highest the top colour, yellow) beside its own numbers, a cell
// without numbers keeps its class, and no SVG draws the matrix again.
func TestMatrixShading(t *testing.T) {
	tests := []struct {
		name string
		res  *result.Results
	}{
		{"every status", sampleRun("specs/a.hcl", "qwen")},
	}
	for _, sd := range seeds {
		tests = append(tests, struct {
			name string
			res  *result.Results
		}{sd.name, seedResults(t, sd, readSeed(t, sd.name))})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := renderHTML(t, tt.res)
			if strings.Contains(h, "heat map") || strings.Contains(h, `class="chart heat"`) {
				t.Error("an SVG heat map repeats the matrix table")
			}
			measured, top := 0, 0
			for _, m := range newView(tt.res).Matrices {
				shades := matrixShades(m)
				for i, row := range m.Cells {
					for j, c := range row {
						shade := string(shades[i][j])
						if c == nil || !c.Status.Measured() {
							if shade != "" {
								t.Errorf("cell %d,%d without numbers shaded %q", i, j, shade)
							}
							continue
						}
						measured++
						if shade == "" || !strings.HasPrefix(shade, "background:#") {
							t.Errorf("%s: not shaded (%q)", c.Ref().Name(), shade)
						}
						if shade == "background:"+viridisAt(1)+";color:#000" {
							top++
						}
						want := `style="` + shade + `"><span class="tps">` + m.Rows()[i].Cells[j].TPS() + "</span>"
						if !strings.Contains(h, want) {
							t.Errorf("%s: report.html lacks %q", c.Ref().Name(), want)
						}
					}
				}
			}
			if measured == 0 || top == 0 {
				t.Fatalf("%d measured decode cells, %d in the top colour: want the highest yellow", measured, top)
			}
		})
	}
}
