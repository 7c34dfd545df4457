package numfmt

import "testing"

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
