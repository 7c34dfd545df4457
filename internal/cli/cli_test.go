package cli

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFlagsAnywhere(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantPos []string
		wantTol string
		wantErr bool
	}{
		{name: "flags first", args: []string{"-tolerance", "9%", "a", "b"}, wantPos: []string{"a", "b"}, wantTol: "9%"},
		{name: "flags last", args: []string{"a", "b", "-tolerance", "9%"}, wantPos: []string{"a", "b"}, wantTol: "9%"},
		{name: "flags between", args: []string{"a", "-tolerance=9%", "b"}, wantPos: []string{"a", "b"}, wantTol: "9%"},
		{name: "double dash ends flags", args: []string{"a", "--", "-tolerance", "b"}, wantPos: []string{"a", "-tolerance", "b"}, wantTol: "5%"},
		{name: "no arguments", args: nil, wantPos: nil, wantTol: "5%"},
		{name: "unknown flag after a file", args: []string{"a", "-x"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fls := NewFlagSet("test", &bytes.Buffer{})
			tol := fls.String("tolerance", "5%", "")
			pos, err := ParseAnywhere(fls, tt.args)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if diff := cmp.Diff(tt.wantPos, pos); diff != "" {
				t.Errorf("positional arguments (-want +got):\n%s", diff)
			}
			if *tol != tt.wantTol {
				t.Errorf("-tolerance = %q, want %q", *tol, tt.wantTol)
			}
		})
	}
}

func TestPercent(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want float64
		ok   bool
	}{
		{"percent", "5%", 0.05, true},
		{"fraction", "0.1", 0.1, true},
		{"zero", "0", 0, true},
		{"negative", "-1%", 0, false},
		{"words", "five", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Percent("-tolerance", tc.in)
			if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
				t.Errorf("Percent(%q) = %v, %v", tc.in, got, err)
			}
		})
	}
}
