package hostenv

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestReadProc: the three files as a 6.x kernel writes them, and a
// machine without PSI.
func TestReadProc(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		want     Snapshot
		pressure bool
	}{
		{name: "all three", files: map[string]string{
			"loadavg":      "10.21 8.03 4.11 12/345 6789\n",
			"stat":         "cpu  100 0 50 800 10 0 0 40 7 0\ncpu0 50 0 25 400 5 0 0 20 0 0\n",
			"pressure/cpu": "some avg10=63.50 avg60=40.00 avg300=10.00 total=123\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"},
			want: Snapshot{Load1: 10.21, LoadOK: true, Total: 1000, Steal: 40, StatOK: true, Pressure: 63.5, PressureOK: true}},
		{name: "no PSI", files: map[string]string{"loadavg": "0.50 0.40 0.30 1/100 42\n", "stat": "cpu  1 2 3 4 5 6 7 8\n"},
			want: Snapshot{Load1: 0.5, LoadOK: true, Total: 36, Steal: 8, StatOK: true}},
		{name: "an old kernel's stat without steal", files: map[string]string{"stat": "cpu  1 2 3 4\n"},
			want: Snapshot{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range tt.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := readProc(dir); got != tt.want {
				t.Errorf("readProc = %+v; want %+v", got, tt.want)
			}
		})
	}
}

// TestMoved: each bound, just inside and past it, either way; the
// calibration and the pressure against the cell's first reading, the
// steal during the run.
func TestMoved(t *testing.T) {
	ms := time.Millisecond
	steady := func(s Snapshot) Snapshot { s.Calibration = ms; return s }
	tests := []struct {
		name                 string
		first, before, after Snapshot
		want                 Kind
	}{
		{name: "quiet"},
		{name: "calibration 1.4x slower", first: Snapshot{Calibration: 10 * ms}, after: Snapshot{Calibration: 14 * ms}},
		{name: "calibration 1.6x slower", first: Snapshot{Calibration: 10 * ms}, after: Snapshot{Calibration: 16 * ms}, want: Calibration},
		{name: "calibration 1.6x faster: the reference was busy, not this run", first: Snapshot{Calibration: 16 * ms}, after: Snapshot{Calibration: 10 * ms}},
		{name: "calibration moved since the first run, not during this one", first: Snapshot{Calibration: 10 * ms},
			before: Snapshot{Calibration: 16 * ms}, after: Snapshot{Calibration: 16 * ms}, want: Calibration},
		{name: "steal 9 %", first: steady(Snapshot{}), before: steady(Snapshot{StatOK: true, Total: 1000, Steal: 0}), after: steady(Snapshot{StatOK: true, Total: 2000, Steal: 90})},
		{name: "steal 11 %", first: steady(Snapshot{}), before: steady(Snapshot{StatOK: true, Total: 1000, Steal: 0}), after: steady(Snapshot{StatOK: true, Total: 2000, Steal: 110}), want: Steal},
		{name: "pressure up 35 points", first: steady(Snapshot{PressureOK: true, Pressure: 5}), after: steady(Snapshot{PressureOK: true, Pressure: 40})},
		{name: "pressure up 45 points", first: steady(Snapshot{PressureOK: true, Pressure: 5}), after: steady(Snapshot{PressureOK: true, Pressure: 50}), want: Pressure},
		{name: "pressure up 45 points since the first run", first: steady(Snapshot{PressureOK: true, Pressure: 5}),
			before: steady(Snapshot{PressureOK: true, Pressure: 50}), after: steady(Snapshot{PressureOK: true, Pressure: 50}), want: Pressure},
		{name: "pressure down 60 points", first: steady(Snapshot{PressureOK: true, Pressure: 65}), after: steady(Snapshot{PressureOK: true, Pressure: 5})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, moved := Moved(tt.first, tt.before, tt.after)
			if moved != (tt.want != "") || m.Kind != tt.want {
				t.Errorf("Moved = %+v, %v; want %q", m, moved, tt.want)
			}
		})
	}
}

// TestCalibrate: the fixed work takes some time, and not a second (it
// runs twice around every run of a cell).
func TestCalibrate(t *testing.T) {
	if d := Calibrate(); d <= 0 || d > time.Second {
		t.Errorf("Calibrate = %v", d)
	}
}
