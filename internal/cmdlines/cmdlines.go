// Package cmdlines finds the slogate command lines that documentation and
// CI examples show, and checks them against the real binary: the
// subcommand exists and every flag is one its help lists. The tests of
// examples/ and docs/ check their files with it, so that neither can drift
// from the command line slogate has.
package cmdlines

import (
	"bytes"
	"os/exec"
	"regexp"
	"strconv"
	"strings"

	"github.com/mattn/go-shellwords"
)

// Command is one slogate command line found in a file.
type Command struct {
	File string
	Line int      // of the command's first line in File (1-based)
	Args []string // after "slogate": the subcommand, then its arguments as shell words
}

// String is "FILE:LINE: slogate ARGS".
func (c Command) String() string {
	return c.File + ":" + strconv.Itoa(c.Line) + ": slogate " + strings.Join(c.Args, " ")
}

// commandRE finds "slogate SUBCOMMAND" where slogate is a word of its own
// or the last element of a path (bin/slogate, /usr/local/bin/slogate).
var commandRE = regexp.MustCompile(`(?:^|[\s/"'` + "`" + `])slogate[ \t]+([a-z]+)\b([^\n]*)`)

// comment is a shell comment: a # that starts a word.
var comment = regexp.MustCompile(`(^|\s)#`)

// Find returns the slogate command lines in shell text that starts at line
// first of file: continuation lines ("\" at the end) are joined, the
// arguments are split into words as the shell splits them (quotes removed,
// $VARIABLES and globs kept as written), and a command ends where the
// shell ends it (; & | > or a comment).
func Find(file string, first int, text string) []Command {
	var out []Command
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		start := i
		line := lines[i]
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + " " + lines[i]
		}
		// A command shown in a comment counts too (a Dockerfile's "#   docker
		// run … slogate run …"): the comment's text before it is not part of it.
		for _, m := range commandRE.FindAllStringSubmatchIndex(line, -1) {
			out = append(out, Command{File: file, Line: first + start, Args: append([]string{line[m[2]:m[3]]}, words(line[m[4]:m[5]])...)})
		}
	}
	return out
}

// words splits the rest of a command line into shell words, up to where
// the shell ends the command; a line the parser refuses (an unbalanced
// quote in prose) is split at blanks.
func words(rest string) []string {
	if loc := comment.FindStringIndex(rest); loc != nil {
		rest = rest[:loc[0]]
	}
	rest = rest[:substitutionEnd(rest)]
	var out []string
	for {
		p := shellwords.NewParser()
		w, err := p.Parse(rest)
		if err != nil {
			return append(out, strings.Fields(rest)...)
		}
		out = append(out, w...)
		// A | between two words is a synopsis's choice ("text|json"), not
		// a pipe: the words after it belong to the same line.
		at := p.Position
		if at <= 0 || at+1 >= len(rest) || rest[at] != '|' || rest[at-1] == ' ' || rest[at+1] == ' ' {
			return out
		}
		rest = rest[at+1:]
	}
}

// substitutionEnd is where a command run by $(…) or (…) ends: the first
// ")" outside quotes without its "(" in rest; len(rest) when there is none.
func substitutionEnd(rest string) int {
	depth := 0
	var quote byte
	for i := 0; i < len(rest); i++ {
		switch c := rest[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return len(rest)
}

// flagLine finds the flags a help text lists: "  -name …" lines, and
// aliases after a comma ("  -o, -out DIR", "  --host H, --port P").
var flagLine = regexp.MustCompile(`(?m)^\s+(?:\[no-\])?-{1,2}([A-Za-z][\w-]*)((?:[^,\n]*,\s*-{1,2}[A-Za-z][\w-]*)*)`)

var flagName = regexp.MustCompile(`-{1,2}([A-Za-z][\w-]*)`)

// Flags is the set of flag names a subcommand's help lists, without dashes.
type Flags map[string]bool

// HelpFlags asks the binary bin which flags subcommand sub has
// (`slogate SUB -h`); ok is false when sub is not a subcommand.
func HelpFlags(bin, sub string) (flags Flags, ok bool) {
	var out bytes.Buffer
	c := exec.Command(bin, sub, "-h")
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil {
		return nil, false
	}
	flags = Flags{"h": true, "help": true}
	for _, m := range flagLine.FindAllStringSubmatch(out.String(), -1) {
		flags[m[1]] = true
		for _, alias := range flagName.FindAllStringSubmatch(m[2], -1) {
			flags[alias[1]] = true
		}
	}
	return flags, len(flags) > 2
}

// Unknown returns the flags of args (a command's arguments after the
// subcommand) that the set lacks, as written. A synopsis's optional flags
// count too ("[-format FORMAT]"); "--" ends the flags; "-" alone and
// negative numbers are arguments.
func (f Flags) Unknown(args []string) []string {
	var out []string
	for _, a := range args {
		a = strings.TrimLeft(a, "[")
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		name = strings.TrimRight(name, "]")
		if !strings.HasPrefix(a, "-") || name == "" || (name[0] >= '0' && name[0] <= '9') {
			continue
		}
		if !f[name] {
			out = append(out, a)
		}
	}
	return out
}
