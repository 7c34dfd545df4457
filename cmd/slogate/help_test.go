package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/cli"
)

// The help of every command comes from one table, cli.Commands (summary,
// synopses, exit codes, examples), and cli.ExitCodes; these tests check
// `slogate help`, `slogate help CMD`, README and docs against it. `slogate
// help` listed no exit 4, 130 or 143, said "report (md, html, json)"
// though csv works; `help merge` said "3 > 2 > 1 > 0" though merge exits
// 4; `help run`'s example named specs/qwen.hcl, which does not exist.

// repoRoot is the repository, two folders up.
const repoRoot = "../.."

// TestHelpFromTable: the program's commands are the table's, in its order;
// `slogate help` lists each with the table's summary and every exit code
// with its meaning and the precedence; `slogate help CMD` has the first
// synopsis as its usage line, the command's exit codes and its examples.
func TestHelpFromTable(t *testing.T) {
	var names, table []string
	for _, c := range program.Commands {
		names = append(names, c.Name)
	}
	for _, c := range cli.Commands {
		table = append(table, c.Name)
	}
	if !slices.Equal(names, table) {
		t.Fatalf("commands %v, the help table's %v", names, table)
	}
	top, _, _ := cliRun(t, "help")
	for _, c := range cli.Commands {
		if want := "\n  " + padRight(c.Name, 9) + " " + c.Summary + "\n"; !strings.Contains(top, want) {
			t.Errorf("slogate help lacks %q", want)
		}
	}
	for _, e := range cli.ExitCodes {
		if want := "\n  " + padRight(strconv.Itoa(e.Code), 3) + "  " + e.Meaning + "\n"; !strings.Contains(top, want) {
			t.Errorf("slogate help lacks exit code %q", want)
		}
	}
	if !strings.Contains(top, "the worst wins: "+cli.PrecedenceText()) {
		t.Errorf("slogate help does not give the precedence %s:\n%s", cli.PrecedenceText(), top)
	}
	for _, c := range cli.Commands {
		if c.Name == "sim" {
			continue // the simulator prints vllm serve's help (TestHelp)
		}
		t.Run(c.Name, func(t *testing.T) {
			help, _, code := cliRun(t, "help", c.Name)
			if code != 0 || !strings.HasPrefix(help, "Usage: slogate "+strings.TrimSpace(c.Name+" "+strings.Join(c.Synopses[:min(1, len(c.Synopses))], ""))+"\n") {
				t.Errorf("exit %d; help does not start with the table's usage line:\n%s", code, help)
			}
			if want := cli.ExitCodesText(c.Exits); !strings.Contains(help, want+"\n") {
				t.Errorf("help lacks %q:\n%s", want, help)
			}
			for _, e := range c.Examples {
				if !strings.Contains(help, "\n  "+e+"\n") {
					t.Errorf("help lacks the example %q", e)
				}
			}
		})
	}
	merge, _, _ := cliRun(t, "help", "merge")
	if !strings.Contains(merge, "("+cli.PrecedenceText()+")") || !strings.Contains(merge, " 4 inconclusive") {
		t.Errorf("help merge does not give exit 4 and the precedence %s:\n%s", cli.PrecedenceText(), merge)
	}
}

// TestUsageLineNamesEveryFlag: a usage line that lists its flags (every
// command's but run's "[flags]" and sim's, which prints its own help)
// names each flag the command defines, as `help CMD`'s Flags section
// lists them: `help diff` lacked -inconclusive, `help plan` -var,
// `help validate` -format, `help bisect` -var, -duration, -alpha and
// -stream-timeout.
func TestUsageLineNamesEveryFlag(t *testing.T) {
	flagRow := regexp.MustCompile(`(?m)^  (-[a-z][a-z-]*)`)
	for _, c := range cli.Commands {
		if c.Name == "sim" {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			help, _, code := cliRun(t, "help", c.Name)
			usage, rest, _ := strings.Cut(help, "\n")
			_, flags, _ := strings.Cut(rest, "\nFlags (")
			flags, _, _ = strings.Cut(flags, "\n\n")
			if code != 0 {
				t.Fatalf("help %s exits %d", c.Name, code)
			}
			if strings.Contains(usage, "[flags]") {
				return // the Flags section lists them
			}
			named := map[string]bool{}
			for _, f := range regexp.MustCompile(`-[a-z][a-z-]*`).FindAllString(usage, -1) {
				named[f] = true
			}
			for _, m := range flagRow.FindAllStringSubmatch(flags, -1) {
				if !named[m[1]] {
					t.Errorf("%s defines %s; its usage line does not name it:\n%s", c.Name, m[1], usage)
				}
			}
		})
	}
}

func padRight(s string, n int) string { return s + strings.Repeat(" ", max(0, n-len(s))) }

// TestREADMEFromTable: README's Commands block has one line per synopsis
// of the table, "slogate NAME SYNOPSIS   SUMMARY"; its Exit codes table has
// exactly the table's codes, as do docs/ci.md's and docs/commands.md's
// (the details); every precedence README and docs write is the
// table's; the -format words README lists for each command are the ones
// the command accepts.
func TestREADMEFromTable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	// The section's first block (a docs-test marker may sit above it).
	_, after, _ := strings.Cut(readme, "\n## Commands\n")
	_, after, _ = strings.Cut(after, "```\n")
	block, _, ok := strings.Cut(after, "\n```")
	if !ok {
		t.Fatal("README has no Commands block")
	}
	var want []string
	for _, c := range cli.Commands {
		syns := c.Synopses
		if len(syns) == 0 {
			syns = []string{""}
		}
		for _, s := range syns {
			want = append(want, strings.Join(strings.Fields("slogate "+c.Name+" "+s+" | "+c.Summary), " "))
		}
	}
	var got []string
	gap := regexp.MustCompile(`\S(\s{2,})\S`)
	for _, l := range strings.Split(block, "\n") {
		// The summary is after the last run of two or more spaces past the
		// command name.
		name := strings.Fields(l)
		if len(name) < 2 {
			continue
		}
		rest := strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(l, "slogate"), " "), " ")
		rest = strings.TrimLeft(strings.TrimPrefix(rest, name[1]), " ")
		locs := gap.FindAllStringSubmatchIndex(rest, -1)
		syn, sum := "", rest
		if len(locs) > 0 {
			last := locs[len(locs)-1]
			syn, sum = rest[:last[2]], rest[last[3]:]
		}
		got = append(got, strings.Join(strings.Fields("slogate "+name[1]+" "+syn+" | "+sum), " "))
	}
	if !slices.Equal(got, want) {
		t.Errorf("README's Commands block is not the help table:\n got %q\nwant %q", got, want)
	}

	var table []string
	for _, e := range cli.ExitCodes {
		table = append(table, strconv.Itoa(e.Code))
	}
	ci, err := os.ReadFile(filepath.Join(repoRoot, "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	commands, err := os.ReadFile(filepath.Join(repoRoot, "docs", "commands.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, doc, heading string }{
		{"README", readme, "\n## Exit codes\n"},
		{"docs/ci.md", string(ci), "\n### 5. What each exit code means\n"},
		{"docs/commands.md", string(commands), "\n## Exit codes\n"},
	} {
		if codes := exitCodeRows(tt.doc, tt.heading); !slices.Equal(codes, table) {
			t.Errorf("%s's exit codes %v, the table's %v", tt.name, codes, table)
		}
	}

	docs, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	order := regexp.MustCompile(`\b\d+(?: > \d+){2,}`)
	for _, f := range append(docs, filepath.Join(repoRoot, "README.md")) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range order.FindAllString(string(b), -1) {
			if m != cli.PrecedenceText() {
				t.Errorf("%s gives the exit code precedence %q, the table %q", filepath.Base(f), m, cli.PrecedenceText())
			}
		}
	}

	formats := regexp.MustCompile("`(\\w+)`: ((?:\\w+, )*\\w+)")
	_, sentence, _ := strings.Cut(strings.Join(strings.Fields(readme), " "), "`-format` picks the output format (")
	sentence, _, _ = strings.Cut(sentence, ")")
	listed := formats.FindAllStringSubmatch(sentence, -1)
	if len(listed) < 4 {
		t.Fatalf("README's -format sentence lists %d commands: %q", len(listed), sentence)
	}
	accepted := regexp.MustCompile(`-format is (.*), not "bogus"`)
	for _, l := range listed {
		_, stderr, code := cliRun(t, l[1], "-format", "bogus", "x")
		m := accepted.FindStringSubmatch(stderr)
		if code != 2 || m == nil {
			t.Errorf("%s -format bogus: exit %d, %q", l[1], code, stderr)
			continue
		}
		if words := strings.ReplaceAll(m[1], " or ", ", "); words != l[2] {
			t.Errorf("README says %s's formats are %q; it accepts %q", l[1], l[2], words)
		}
	}
}

// TestHelpExamplesSpecs: every spec path an example of the help names (a
// .hcl file, a folder of them, a glob) exists and validates.
func TestHelpExamplesSpecs(t *testing.T) {
	checked := 0
	for _, c := range cli.Commands {
		for _, e := range c.Examples {
			cmdline, _, _ := strings.Cut(e, "#")
			args := strings.Fields(cmdline)
			for i, a := range args {
				if i > 0 && slices.Contains([]string{"-o", "-out", ">", ">>"}, args[i-1]) {
					continue // what the command writes
				}
				if !strings.HasSuffix(a, ".hcl") && !strings.HasPrefix(a, "specs/") {
					continue
				}
				paths, err := filepath.Glob(filepath.Join(repoRoot, a))
				if err != nil || len(paths) == 0 {
					t.Errorf("%s's example %q names %s, which does not exist", c.Name, e, a)
					continue
				}
				for _, p := range paths {
					if _, stderr, code := cliRun(t, "validate", p); code != 0 {
						t.Errorf("%s's example %q: %s does not validate (exit %d):\n%s", c.Name, e, a, code, stderr)
					}
					checked++
				}
			}
		}
	}
	if checked < 5 {
		t.Errorf("checked %d example spec paths, want the run, validate and plan examples' at least", checked)
	}
}

// exitCodeRows are the codes of the first column of the table under
// heading in doc ("130 / 143" is two), up to the next heading.
func exitCodeRows(doc, heading string) []string {
	_, section, ok := strings.Cut(doc, heading)
	if !ok {
		return nil
	}
	var codes []string
	for _, l := range strings.Split(section, "\n") {
		if strings.HasPrefix(l, "#") {
			break
		}
		if f := strings.Split(l, "|"); len(f) > 2 && !slices.Contains([]string{"code", "exit"}, strings.TrimSpace(f[1])) && !strings.HasPrefix(strings.TrimSpace(f[1]), "-") {
			codes = append(codes, strings.Fields(strings.ReplaceAll(f[1], "/", " "))...)
		}
	}
	return codes
}

// TestDocsRunFlags: docs/commands.md's table of run's flags (under
// "## Running") names every flag `slogate help run` lists, and no other:
// it lacked -inconclusive.
func TestDocsRunFlags(t *testing.T) {
	help, _, code := cliRun(t, "help", "run")
	if code != 0 {
		t.Fatalf("help run: exit %d", code)
	}
	_, flags, ok := strings.Cut(help, "\nFlags")
	if !ok {
		t.Fatalf("help run has no Flags section:\n%s", help)
	}
	flags, _, _ = strings.Cut(flags, "\n\n")
	var want []string
	for _, m := range regexp.MustCompile(`(?m)^  (-[a-z-]+)`).FindAllStringSubmatch(flags, -1) {
		want = append(want, m[1])
	}
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "commands.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, running, _ := strings.Cut(string(b), "\n## Running\n")
	running, _, _ = strings.Cut(running, "\n## ")
	var got []string
	for _, row := range regexp.MustCompile("(?m)^\\| (`-[^|]*)\\|").FindAllStringSubmatch(running, -1) {
		for _, m := range regexp.MustCompile("`(-[a-z-]+)").FindAllStringSubmatch(row[1], -1) {
			got = append(got, m[1])
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(want) < 15 || !slices.Equal(got, want) {
		t.Errorf("docs/commands.md's run flags\n %q\nhelp run's\n %q", got, want)
	}
}
