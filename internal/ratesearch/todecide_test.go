package ratesearch

import (
	"testing"

	"github.com/slogate/slogate/internal/metric"
)

// windowsOf is a Share's data of w windows, each n requests with the good
// ones cycling through ks (the windows' spread).
func windowsOf(w, n int, ks ...int) Data {
	d := Data{Metric: metric.GoodputShare, Kind: Share}
	for i := range w {
		k := ks[i%len(ks)]
		d.K, d.N = d.K+k, d.N+n
		d.Windows = append(d.Windows, Window{K: k, N: n})
	}
	return d
}

// TestWindowsToDecide: the windows an undecided probe is said to need
// decide it when measured with the same values and spread (ks's cycle
// repeated; its between-window variance, over W − 1, shrinks by up to
// 1 ÷ 8 as whole cycles are added, within the margins), and a fifth fewer
// do not: with windows all alike (the binomial's bounds) and with windows
// that spread (a design effect above 1, its t factor shrinking as windows
// are added); a probe on the objective's edge or of one window needs
// MaxToDecide; a decided one 0.
func TestWindowsToDecide(t *testing.T) {
	st := Settings{Lo: 1, Hi: 16}
	obj := shareObjective(0.95)
	judge := func(d Data, maxWindows int) Judgement {
		s := st
		s.MaxWindows = maxWindows
		j, err := Decide([]Data{d}, s.LookAlpha(), obj)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	tests := []struct {
		name string
		n    int
		ks   []int
	}{
		{name: "windows alike", n: 100, ks: []int{97, 97, 97, 97}},
		{name: "windows spread", n: 300, ks: []int{300, 282, 291, 285, 296, 288, 279, 294}},
		{name: "below the line, spread", n: 300, ks: []int{270, 285, 279, 276, 281, 273, 287, 278}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := len(tt.ks) // the windows measured: one cycle of ks
			s := st
			s.MaxWindows = w
			if j := judge(windowsOf(w, tt.n, tt.ks...), w); j.Decision != Undecided {
				t.Fatalf("premise: %d windows decided %s", w, j.Decision)
			}
			need := s.WindowsToDecide([]Data{windowsOf(w, tt.n, tt.ks...)}, w, obj)
			if need <= w || need >= MaxToDecide {
				t.Fatalf("WindowsToDecide = %d, want a count above %d", need, w)
			}
			// More windows repeat ks's cycle, whole cycles only, so that
			// the pooled values stay those seen.
			more, fewer := (need*5/4+w-1)/w*w, need*4/5/w*w
			if got := judge(windowsOf(more, tt.n, tt.ks...), need).Decision; got == Undecided {
				t.Errorf("said %d windows decide it; %d (a quarter more) at max_windows %d are still undecided", need, more, need)
			}
			if fewer > w {
				if got := judge(windowsOf(fewer, tt.n, tt.ks...), need).Decision; got != Undecided {
					t.Errorf("said %d windows decide it; %d (a fifth fewer) at max_windows %d decide it already (%s)", need, fewer, need, got)
				}
			}
			t.Logf("%d windows undecided; said %d decide it", w, need)
		})
	}
	for _, c := range []struct {
		name    string
		data    Data
		windows int
		want    int
	}{
		{name: "on the edge", data: windowsOf(4, 300, 285, 280, 290, 285), windows: 4, want: MaxToDecide}, // 0.95 exactly
		{name: "one window", data: windowsOf(1, 300, 290), windows: 1, want: MaxToDecide},
		{name: "decided", data: windowsOf(4, 300, 300), windows: 4, want: 0},
	} {
		if got := st.WindowsToDecide([]Data{c.data}, c.windows, obj); got != c.want {
			t.Errorf("%s: WindowsToDecide = %d, want %d", c.name, got, c.want)
		}
	}
}

// TestJudged: Settings.Judged is told every look of every judged probe,
// in order, the last of each marked final and equal to the answer's probe
// (its decision, windows and, undecided at MaxWindows, ToDecide); the
// looks before it undecided.
func TestJudged(t *testing.T) {
	// Below 5 req/s every window is all good (decided met at the third,
	// windows alike); above, windows spread about the line, undecided.
	probe := func(rate float64, windows int) (Outcome, error) {
		d := windowsOf(windows, 300, 300)
		if rate > 5 {
			d = windowsOf(windows, 300, 290, 280, 296, 270)
		}
		return Outcome{Data: []Data{d}, Objective: shareObjective(0.95)}, nil
	}
	type look struct {
		p     Probe
		final bool
	}
	var looks []look
	st := Settings{Lo: 1, Hi: 16, Precision: 0.25, MaxWindows: 4, Judged: func(p Probe, final bool) { looks = append(looks, look{p, final}) }}
	ans, err := st.Search(probe)
	if err != nil {
		t.Fatal(err)
	}
	var finals []Probe
	for i, l := range looks {
		if !l.final {
			if l.p.Decision != Undecided || l.p.ToDecide != 0 || i+1 == len(looks) || looks[i+1].p.Rate != l.p.Rate || looks[i+1].p.Windows != l.p.Windows+1 {
				t.Errorf("look %d %+v: a look before a probe's last should be undecided, without ToDecide, and followed by the same rate's next window", i, l.p)
			}
			continue
		}
		finals = append(finals, l.p)
	}
	if len(finals) != len(ans.Probes) {
		t.Fatalf("%d final looks, %d probes", len(finals), len(ans.Probes))
	}
	for i, p := range ans.Probes {
		f := finals[i]
		if f.Rate != p.Rate || f.Decision != p.Decision || f.Windows != p.Windows || f.ToDecide != p.ToDecide {
			t.Errorf("probe %d: told %v %s in %d windows (to decide %d), the answer has %v %s in %d (%d)", i, f.Rate, f.Decision, f.Windows, f.ToDecide, p.Rate, p.Decision, p.Windows, p.ToDecide)
		}
		if p.Decision == Undecided && (p.Windows != 4 || p.ToDecide <= 4) {
			t.Errorf("probe %d at %v undecided in %d windows, ToDecide %d: want 4 windows and a count above them", i, p.Rate, p.Windows, p.ToDecide)
		}
	}
	if ans.Probes[0].Decision != Met || ans.Probes[0].Windows != 3 || ans.Probes[1].Decision != Undecided {
		t.Errorf("premise: lo met in 3 windows, hi undecided; got %+v", ans.Probes[:2])
	}
}
