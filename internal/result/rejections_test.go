package result

import "testing"

// TestRejectionsAgree: the server's count of refused requests fits the
// client's when it counts every refusal the client saw and at most the
// requests the client closed unanswered more (docs/method.md#rejections).
func TestRejectionsAgree(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	tests := []struct {
		name string
		r    *Rejections
		want bool
	}{
		{name: "equal", r: &Rejections{Client: 57, Server: n(57)}, want: true},
		{name: "one more, one unanswered", r: &Rejections{Client: 57, Unanswered: 1, Server: n(58)}, want: true},
		{name: "two more, one unanswered", r: &Rejections{Client: 57, Unanswered: 1, Server: n(59)}},
		{name: "fewer than the client saw", r: &Rejections{Client: 57, Unanswered: 3, Server: n(56)}},
		{name: "no server count", r: &Rejections{Client: 57}, want: true},
		{name: "none recorded", want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.Agree(); got != tc.want {
				t.Errorf("Agree(%+v) = %v, want %v", tc.r, got, tc.want)
			}
		})
	}
}
