package exit

import (
	"errors"
	"fmt"
	"testing"
)

func TestCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{name: "nil", err: nil, want: OK},
		{name: "usage", err: Usagef("bad flag"), want: Usage},
		{name: "infra", err: Infraf("server died"), want: Infra},
		{name: "fail", err: &Error{Code: Fail, Err: errors.New("slow")}, want: Fail},
		{name: "wrapped keeps its code", err: fmt.Errorf("run: %w", Usagef("x")), want: Usage},
		{name: "plain error is infrastructure, never a test failure", err: errors.New("boom"), want: Infra},
		{name: "quiet", err: Quiet(Fail), want: Fail},
		{name: "signal", err: With(SIGTERM, errors.New("terminated")), want: SIGTERM},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Code(tt.err); got != tt.want {
				t.Errorf("Code(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
	if With(Usage, nil) != nil {
		t.Error("With(code, nil) != nil")
	}
	if !IsQuiet(fmt.Errorf("x: %w", Quiet(Usage))) || IsQuiet(Usagef("x")) {
		t.Error("IsQuiet wrong")
	}
}

func TestWorst(t *testing.T) {
	order := []int{OK, Inconclusive, Fail, Usage, Infra, SIGINT, SIGTERM}
	for i, a := range order {
		for j, b := range order {
			want := order[max(i, j)]
			if got := Worst(a, b); got != want {
				t.Errorf("Worst(%d, %d) = %d, want %d", a, b, got, want)
			}
		}
	}
}
