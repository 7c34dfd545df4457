package measure

import (
	"math"
	"testing"
)

func TestPercentile(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"empty", nil, 50, 0},
		{"one", []float64{3}, 99, 3},
		{"median of even count", []float64{4, 1, 3, 2}, 50, 2.5},
		{"p90 interpolates", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 90, 9.1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := percentile(tc.xs, tc.p); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("percentile = %v, want %v", got, tc.want)
			}
		})
	}
}
