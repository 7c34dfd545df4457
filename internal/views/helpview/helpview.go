// Package helpview is the help view (a view, so under internal/views): what
// `slogate help`, `slogate help CMD`, `CMD -h` and `slogate version` print.
// package cli owns the commands' table, their flags and the version's
// figures; this package writes them and decides nothing. It imports no
// other package of slogate, so that cli's plumbing does not reach the
// report view through it.
package helpview

import (
	"fmt"
	"io"
	"time"
)

// Command is one line of the top-level help's list of commands.
type Command struct {
	Name    string // "run"
	Summary string // what it does, in a few words
}

// WriteTop writes the top-level help of program name: intro, usage, the
// commands, the footer lines, and where a command's help is.
func WriteTop(w io.Writer, name, intro string, commands []Command, footer []string) {
	fmt.Fprintf(w, "%s\n\nUsage: %s COMMAND [flags] [args]\n\nCommands:\n", intro, name)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %s\n", c.Name, c.Summary)
	}
	fmt.Fprintln(w)
	for _, l := range footer {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintf(w, "Run '%s help COMMAND' (or '%s COMMAND -h') for a command's flags and examples.\n", name, name)
}

// Flag is one flag of a command's help.
type Flag struct {
	Synopsis string // "-duration D", "-sim"
	Usage    string // what it does, with its default
}

// CommandHelp is what a command's help shows.
type CommandHelp struct {
	Usage    string   // the usage line without "Usage: "
	Doc      []string // what the command does, one string per line
	Flags    []Flag   // in the order the help lists them
	Examples []string // command lines, each optionally followed by "  # what it does"
}

// synopsisWidth is the widest flag synopsis that keeps its text on the
// same line; a longer one puts its text on the next line.
const synopsisWidth = 26

// WriteCommand writes a command's help: usage line, description, every flag
// with its meaning, and the examples.
func WriteCommand(w io.Writer, h CommandHelp) {
	fmt.Fprintf(w, "Usage: %s\n", h.Usage)
	if len(h.Doc) > 0 {
		fmt.Fprintln(w)
		for _, l := range h.Doc {
			fmt.Fprintln(w, l)
		}
	}
	width := 0
	for _, f := range h.Flags {
		width = max(width, len(f.Synopsis))
	}
	width = min(width, synopsisWidth)
	if len(h.Flags) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Flags (before or after the arguments; -flag and --flag are the same; -- ends them):")
		for _, f := range h.Flags {
			if len(f.Synopsis) > width {
				fmt.Fprintf(w, "  %s\n  %-*s  %s\n", f.Synopsis, width, "", f.Usage)
				continue
			}
			fmt.Fprintf(w, "  %-*s  %s\n", width, f.Synopsis, f.Usage)
		}
	}
	if len(h.Examples) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Examples:")
		for _, e := range h.Examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

// Version is which slogate a binary is: the figures of `slogate version`.
type Version struct {
	Version  string    // "v1.2.0", a pseudo-version, `git describe` output, or "dev"
	Commit   string    // the VCS revision; "" when unknown
	Time     time.Time // the commit's time; zero when unknown
	Modified bool      // built from a tree with uncommitted changes
	Go       string    // "go1.26.0"
	Platform string    // "linux/amd64"
}

// String is the one line `slogate version` prints (VersionLine):
// "slogate v1.2.0 (commit 0123456789ab, 2026-11-30T20:00:00Z, modified) go1.26.0 linux/amd64".
func (v Version) String() string { return VersionLine(v) }

// VersionLine is the one line `slogate version` prints:
// "slogate v1.2.0 (commit 0123456789ab, 2026-11-30T20:00:00Z, modified) go1.26.0 linux/amd64".
func VersionLine(v Version) string {
	commit := "commit unknown"
	if v.Commit != "" {
		commit = "commit " + v.Commit
	}
	if !v.Time.IsZero() {
		commit += ", " + v.Time.UTC().Format(time.RFC3339)
	}
	if v.Modified {
		commit += ", modified"
	}
	return fmt.Sprintf("slogate %s (%s) %s %s", v.Version, commit, v.Go, v.Platform)
}

// WriteVersion writes v's line.
func WriteVersion(w io.Writer, v Version) error {
	_, err := fmt.Fprintln(w, VersionLine(v))
	return err
}
