package views

import (
	"testing"

	"github.com/slogate/slogate/internal/result"
)

// TestReadingLine: a comparison's line, k6-style, with the other side as
// written when it is no literal, then ": ok" or the distance from the
// threshold; a value read outside a comparison as name = value.
func TestReadingLine(t *testing.T) {
	tests := []struct {
		name string
		r    result.Reading
		want string
	}{
		{"failed", result.Reading{Subject: `decode["8K"][64].total_tps`, Value: "5421.3", Op: ">=", Threshold: "6000", Gap: -0.09645, HasGap: true},
			`decode["8K"][64].total_tps = 5421.3, want >= 6000 (-9.6% from the threshold)`},
		{"held", result.Reading{Subject: "x", Value: "1", Op: "<=", Threshold: "2", Held: true}, "x = 1, want <= 2: ok"},
		{"against an expression", result.Reading{Subject: "a", Value: "5421.3", Op: ">=", Threshold: "5714.8", Against: `14 * decode["8K"][1].total_tps`, Gap: -0.0513, HasGap: true},
			`a = 5421.3, want >= 5714.8 (14 * decode["8K"][1].total_tps) (-5.1% from the threshold)`},
		{"failed without a gap", result.Reading{Subject: "server.kv_cache_dtype", Value: `"auto"`, Op: "==", Threshold: `"fp8"`}, `server.kv_cache_dtype = "auto", want == "fp8"`},
		{"expected", result.Reading{Subject: "ttft_ms", Value: "50", Op: "<=", Threshold: "44", Against: "40 + 10%", Gap: 0.25, HasGap: true, FromExpected: true},
			"ttft_ms = 50, want <= 44 (40 + 10%) (+25.0% from expected)"},
		{"expected and held", result.Reading{Subject: "tps", Value: "38000", Op: ">=", Threshold: "36575", Against: "38500 - 5%", Held: true, Gap: -0.013, HasGap: true, FromExpected: true},
			"tps = 38000, want >= 36575 (38500 - 5%) (-1.3% from expected)"},
		{"read", result.Reading{Subject: `decode["8K"][1].total_tps`, Value: "408.2"}, `decode["8K"][1].total_tps = 408.2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ReadingLine(tt.r); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	if ReadingLines(nil) != nil {
		t.Error("ReadingLines(nil) is not nil")
	}
}
