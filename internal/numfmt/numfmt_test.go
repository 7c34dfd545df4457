package numfmt

import (
	"math"
	"strconv"
	"testing"
)

func TestGroup(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "empty", in: "", want: ""},
		{name: "short", in: "999", want: "999"},
		{name: "thousand", in: "1000", want: "1,000"},
		{name: "millions", in: "24000000", want: "24,000,000"},
		{name: "negative", in: "-1234", want: "-1,234"},
		{name: "decimals untouched", in: "12247.5125", want: "12,247.5125"},
		{name: "negative with decimals", in: "-123456.7", want: "-123,456.7"},
		{name: "zero with decimals", in: "0.5", want: "0.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Group(tt.in); got != tt.want {
				t.Errorf("Group(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestInt(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 425424: "425,424", -1234: "-1,234"} {
		if got := Int(n); got != want {
			t.Errorf("Int(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestFixed(t *testing.T) {
	tests := []struct {
		name string
		v    float64
		prec int
		want string
	}{
		{name: "thousands", v: 6018.44, prec: 1, want: "6,018.4"},
		{name: "rounds half up", v: 1026.6, prec: 0, want: "1,027"},
		{name: "negative", v: -1234.5, prec: 1, want: "-1,234.5"},
		{name: "negative zero loses its sign", v: -0.01, prec: 1, want: "0.0"},
		{name: "negative zero without decimals", v: -0.4, prec: 0, want: "0"},
		{name: "NaN", v: math.NaN(), prec: 1, want: NotANumber},
		{name: "Inf", v: math.Inf(-1), prec: 1, want: NotANumber},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Fixed(tt.v, tt.prec); got != tt.want {
				t.Errorf("Fixed(%v, %d) = %q, want %q", tt.v, tt.prec, got, tt.want)
			}
		})
	}
}

func TestThousands(t *testing.T) {
	tests := []struct {
		name string
		v    float64
		want string
	}{
		{name: "one decimal", v: 46700, want: "46.7K"},
		{name: "no trailing .0", v: 12000, want: "12K"},
		{name: "grouped", v: 1234567, want: "1,234.6K"},
		{name: "below ten thousand", v: 1500, want: "1.5K"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Thousands(tt.v); got != tt.want {
				t.Errorf("Thousands(%v) = %q, want %q", tt.v, got, tt.want)
			}
		})
	}
}

func TestShortest(t *testing.T) {
	for v, want := range map[float64]string{30: "30", 1.5: "1.5", 1500: "1,500", 1234.25: "1,234.25"} {
		if got := Shortest(v); got != want {
			t.Errorf("Shortest(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestValue(t *testing.T) {
	tests := []struct {
		name string
		in   float64
		want string
	}{
		{name: "throughput", in: 5421.34, want: "5421.3"},
		{name: "round thousands", in: 6000, want: "6000"},
		{name: "milliseconds", in: 12.345, want: "12.35"},
		{name: "ratio", in: 0.81254, want: "0.8125"},
		{name: "zero", in: 0, want: "0"},
		{name: "negative", in: -3.5, want: "-3.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Value(tt.in); got != tt.want {
				t.Errorf("Value(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestDeltaAndPercent(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{name: "delta down", got: Delta(-0.0962), want: "-9.6%"},
		{name: "delta up has a plus", got: Delta(0.004), want: "+0.4%"},
		{name: "delta rounding to zero", got: Delta(-0.0004), want: "0.0%"},
		{name: "percent whole", got: Percent(0.05), want: "5%"},
		{name: "percent fraction", got: Percent(0.125), want: "12.5%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

func TestList(t *testing.T) {
	tests := []struct {
		name string
		in   []int
		want string
	}{
		{name: "none", in: nil, want: ""},
		{name: "one", in: []int{8}, want: "8"},
		{name: "several in order", in: []int{1, 64, 8}, want: "1, 64, 8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := List(tt.in, strconv.Itoa); got != tt.want {
				t.Errorf("List(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestParsePercent: a percentage or a fraction, spaces allowed, the
// range left to the caller; no number is an error.
func TestParsePercent(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want float64
		err  bool
	}{
		{name: "percent", in: "5%", want: 0.05},
		{name: "fraction", in: "0.05", want: 0.05},
		{name: "decimal percent", in: "12.5%", want: 0.125},
		{name: "spaces", in: " 10 % ", want: 0.1},
		{name: "zero", in: "0", want: 0},
		{name: "out of a caller's range is still a number", in: "5", want: 5},
		{name: "negative", in: "-5%", want: -0.05},
		{name: "words", in: "five", err: true},
		{name: "not a number", in: "NaN%", err: true},
		{name: "infinite", in: "Inf", err: true},
		{name: "a sign alone", in: "%", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePercent(tt.in)
			if (err != nil) != tt.err || (err == nil && math.Abs(got-tt.want) > 1e-12) {
				t.Errorf("ParsePercent(%q) = %v, %v; want %v (error %v)", tt.in, got, err, tt.want, tt.err)
			}
		})
	}
}

// TestLag: three significant digits, at most two decimals, no grouping.
func TestLag(t *testing.T) {
	tests := []struct {
		name string
		ms   float64
		want string
	}{
		{name: "hundreds rounded to whole ms", ms: 142.6, want: "143"},
		{name: "thousands not grouped", ms: 12345.4, want: "12345"},
		{name: "tens with one decimal", ms: 12.34, want: "12.3"},
		{name: "under ten with two decimals", ms: 1.254, want: "1.25"},
		{name: "zero", ms: 0, want: "0.00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Lag(tt.ms); got != tt.want {
				t.Errorf("Lag(%v) = %q, want %q", tt.ms, got, tt.want)
			}
		})
	}
}
