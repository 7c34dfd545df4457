package helpview

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestWriteCommand: the flags' texts line up after the widest synopsis up
// to synopsisWidth; a longer synopsis puts its text on the next line; the
// sections a help lacks are left out.
func TestWriteCommand(t *testing.T) {
	tests := []struct {
		name string
		help CommandHelp
		want string
	}{
		{
			name: "usage only",
			help: CommandHelp{Usage: "slogate version"},
			want: "Usage: slogate version\n",
		},
		{
			name: "flags aligned and a long synopsis wrapped",
			help: CommandHelp{
				Usage: "slogate x [flags]", Doc: []string{"Does x."},
				Flags: []Flag{
					{"-o FILE", "write to FILE"},
					{"-allow-settings-change-and-more", "compare anyway"},
				},
				Examples: []string{"slogate x -o f"},
			},
			want: "Usage: slogate x [flags]\n\nDoes x.\n\n" +
				"Flags (before or after the arguments; -flag and --flag are the same; -- ends them):\n" +
				"  -o FILE                     write to FILE\n" +
				"  -allow-settings-change-and-more\n" +
				"                              compare anyway\n" +
				"\nExamples:\n  slogate x -o f\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			WriteCommand(&b, tt.help)
			if d := cmp.Diff(tt.want, b.String()); d != "" {
				t.Errorf("help (-want +got):\n%s", d)
			}
		})
	}
}

// TestVersionLine: the commit, its time and a modified tree in the
// parentheses, "commit unknown" without one.
func TestVersionLine(t *testing.T) {
	tests := []struct {
		name string
		v    Version
		want string
	}{
		{"unknown commit", Version{Version: "dev", Go: "go1.26.0", Platform: "linux/amd64"}, "slogate dev (commit unknown) go1.26.0 linux/amd64"},
		{"stamped and modified", Version{Version: "v1.2.0", Commit: "0123456789ab", Time: time.Date(2026, 11, 30, 20, 0, 0, 0, time.UTC), Modified: true, Go: "go1.26.0", Platform: "linux/amd64"},
			"slogate v1.2.0 (commit 0123456789ab, 2026-11-30T20:00:00Z, modified) go1.26.0 linux/amd64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := VersionLine(tt.v); got != tt.want {
				t.Errorf("VersionLine = %q, want %q", got, tt.want)
			}
		})
	}
}
