package hostenv

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestReadGroup: every thread of every process of the group summed, a
// process of another group and one whose name holds ") 7 " left out, a
// task without schedstat skipped; the running test's own group read from
// the real /proc.
func TestReadGroup(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("100/stat", "100 (llama-server) S 1 100 100 0 -1\n")
	write("100/task/100/schedstat", "1000 300 5\n")
	write("100/task/101/schedstat", "2000 700 9\n")
	write("200/stat", "200 (python3 engine) S 100 100 100 0 -1\n")
	write("200/task/200/schedstat", "500 500 2\n")
	write("200/task/201/stat", "no schedstat here\n")
	write("300/stat", "300 (odd) 7 (name) S 1 300 300 0 -1\n")
	write("300/task/300/schedstat", "9999 9999 1\n")
	write("self/stat", "1 (x) S 0 100 100\n")
	defer func(old string) { Root = old }(Root)
	Root = dir
	got := ReadGroup(100)
	want := Sched{Threads: map[int]ThreadSched{100: {1000, 300}, 101: {2000, 700}, 200: {500, 500}}, OK: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReadGroup(100) = %+v; want %+v", got, want)
	}
	if got := ReadGroup(999); got.OK {
		t.Errorf("ReadGroup of no process = %+v; want not OK", got)
	}
	Root = "/proc"
	if got := ReadGroup(os.Getpid()); got.OK {
		t.Logf("this test's own group (it leads none): %+v", got)
	}
	if g, ok := groupOf(filepath.Join("/proc", "self")); !ok || g <= 0 {
		t.Errorf("groupOf(/proc/self) = %d, %v", g, ok)
	} else if s := ReadGroup(g); !s.OK || len(s.Threads) == 0 {
		t.Errorf("ReadGroup(%d), this test's group = %+v; want its running threads", g, s)
	}
}

// TestWaitShare: each thread's share of ready time spent waiting,
// weighted by what it ran, and the CPUs used; what reads as no share.
func TestWaitShare(t *testing.T) {
	th := func(pairs ...uint64) Sched {
		s := Sched{Threads: map[int]ThreadSched{}, OK: true}
		for i := 0; i+1 < len(pairs); i += 2 {
			s.Threads[i/2+1] = ThreadSched{RunNs: pairs[i], WaitNs: pairs[i+1]}
		}
		return s
	}
	tests := []struct {
		name          string
		before, after Sched
		wall          int64
		pct, cpus     float64
		ok            bool
	}{
		{name: "one thread, a quarter waited", before: th(1000, 100), after: th(4000, 1100), wall: 3000, pct: 25, cpus: 1, ok: true},
		// The case the weighting is for: a compute thread that ran 2.6 s
		// and waited 15 %, an HTTP thread that ran 30 ms and waited 90 %.
		{name: "a short thread's long wait weighs by what it ran", before: th(0, 0, 0, 0), after: th(2600, 459, 30, 270), wall: 2660,
			pct: 100 * (2600*459.0/3059 + 30*270.0/300) / 2630, cpus: 2630.0 / 2660, ok: true},
		{name: "a thread started since counts from zero", before: th(1000, 0), after: th(1000, 0, 300, 100), wall: 400, pct: 25, cpus: 0.75, ok: true},
		{name: "idle", before: th(5, 0), after: th(5, 3), wall: 10},
		{name: "unread", after: th(5, 1), wall: 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pct, cpus, ok := WaitShare(tt.before, tt.after, tt.wall)
			if ok != tt.ok || math.Abs(pct-tt.pct) > 1e-9 || math.Abs(cpus-tt.cpus) > 1e-9 {
				t.Errorf("WaitShare = %v %v %v; want %v %v %v", pct, cpus, ok, tt.pct, tt.cpus, tt.ok)
			}
		})
	}
}

// TestWaitedAndStarved: the rise over the cell's least wait flags a
// moved run, the absolute share a starved one; each bound just inside
// and past it.
func TestWaitedAndStarved(t *testing.T) {
	tests := []struct {
		name        string
		least       Snapshot
		pct, cpus   float64
		wantMoved   bool
		wantStarved bool
	}{
		{name: "vLLM's own threads on two cores", least: Snapshot{ServerWait: 22, ServerWaitOK: true}, pct: 27, cpus: 1.5},
		{name: "20 points up", least: Snapshot{ServerWait: 5, ServerWaitOK: true}, pct: 25, cpus: 1},
		{name: "21 points up", least: Snapshot{ServerWait: 5, ServerWaitOK: true}, pct: 26, cpus: 1, wantMoved: true},
		{name: "no least read yet", pct: 45, cpus: 1},
		{name: "half", least: Snapshot{ServerWait: 40, ServerWaitOK: true}, pct: 50, cpus: 1},
		{name: "past half", least: Snapshot{ServerWait: 40, ServerWaitOK: true}, pct: 50.1, cpus: 1, wantStarved: true},
		{name: "a hog on both cores", least: Snapshot{ServerWait: 4, ServerWaitOK: true}, pct: 80, cpus: 0.3, wantMoved: true, wantStarved: true},
		// llama-server at 85 % used 0.17 CPUs and waited 0.96.
		{name: "starved down to a sixth of a CPU", least: Snapshot{ServerWait: 5, ServerWaitOK: true}, pct: 85, cpus: 0.17, wantMoved: true, wantStarved: true},
		// The simulator on a busy machine: 66 to 76 % of moments, 0.03
		// CPUs used, 0.07 waited.
		{name: "a server that hardly runs", least: Snapshot{ServerWait: 40, ServerWaitOK: true}, pct: 76, cpus: 0.03},
		{name: "just under the floor", least: Snapshot{ServerWait: 5, ServerWaitOK: true}, pct: 60, cpus: 0.16},
		{name: "just over the floor", least: Snapshot{ServerWait: 5, ServerWaitOK: true}, pct: 60, cpus: 0.17, wantMoved: true, wantStarved: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mv, moved := Waited(tt.least, tt.pct, tt.cpus)
			if moved != tt.wantMoved || (moved && (mv.Kind != ServerWait || mv.Before != tt.least.ServerWait || mv.After != tt.pct)) {
				t.Errorf("Waited = %+v, %v; want moved %v", mv, moved, tt.wantMoved)
			}
			if got := Starved(tt.pct, tt.cpus); got != tt.wantStarved {
				t.Errorf("Starved(%v, %v) = %v; want %v", tt.pct, tt.cpus, got, tt.wantStarved)
			}
		})
	}
}
