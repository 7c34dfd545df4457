package cli

// Flags are parsed by a small hand-written loop over the standard flag
// package's definitions and values rather than by a library. We evaluated
// github.com/peterbourgon/ff/v4 (v4.0.0-alpha.4, the newest on the proxy):
// its FlagSet stops at the first positional argument, so
// `slogate run spec.hcl -sim` leaves -sim unparsed, and its native flag set
// reads Go-style `-sim` as the short flags -s -i -m (only its adapter over a
// flag.FlagSet keeps single-dash long names, and that adapter still stops at
// the first argument). spf13/pflag (and gotestsum's fork dnephin/pflag)
// intersperse, but also read `-sim` as a cluster of shorthands. So no
// library does both things a Go user's hands expect; the loop below is the
// permutation `go test` itself effectively offers, in some 40 lines, and the
// standard flag package still owns definitions, values and defaults.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/suggest"
	"github.com/slogate/slogate/internal/views/helpview"
)

// Help is what `slogate help CMD` and `slogate CMD -h` print around the
// flags: a usage line, what the command does, and examples.
type Help struct {
	// Usage is the usage line without "Usage: ", e.g.
	// "slogate run [flags] SPEC...".
	Usage string
	// Doc says what the command does, one string per line.
	Doc []string
	// Examples are two or three command lines, each optionally followed by
	// "  # what it does".
	Examples []string
}

// FlagSet is a subcommand's flag set: the standard library's flag.FlagSet
// (define flags on it as usual, with the placeholder in backquotes in the
// usage text: "results `DIR`"), parsed by Parse with flags anywhere on the
// command line.
type FlagSet struct {
	*flag.FlagSet
	help Help
}

// NewFlagSet returns the empty flag set of subcommand name ("run"),
// described by h.
func NewFlagSet(name string, h Help) *FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // Parse and WriteHelp do all the talking
	fs.Usage = func() {}
	return &FlagSet{FlagSet: fs, help: h}
}

// ErrHelp is returned by Parse after it printed the help for -h or --help:
// the command stops and slogate exits 0 without printing more.
var ErrHelp error = &exit.Error{Code: exit.OK, Err: errors.New("help printed"), Quiet: true}

// Parse sets the flags found anywhere in args and returns the other
// arguments in order: `-name value`, `-name=value`, `--name value` and
// `--name=value` all set flag name, a boolean flag takes no separate value
// (`-sim`, `-sim=false`), and "--" ends the flags (everything after it is an
// argument). -h, -help, --h and --help print the help on stdout and return
// ErrHelp. Every other problem is a usage error of one line that names the
// flag and what it wants, plus one line pointing at `slogate help CMD`.
func (f *FlagSet) Parse(stdout io.Writer, args []string) ([]string, error) {
	var pos []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			return append(pos, args[i+1:]...), nil
		}
		if len(arg) < 2 || arg[0] != '-' {
			pos = append(pos, arg) // "-" alone is an argument too (stdin), as in flag
			continue
		}
		dashes := "-"
		name := arg[1:]
		if strings.HasPrefix(name, "-") {
			dashes, name = "--", name[1:]
		}
		name, value, hasValue := strings.Cut(name, "=")
		fl := f.Lookup(name)
		if fl == nil {
			if name == "h" || name == "help" {
				f.WriteHelp(stdout)
				return nil, ErrHelp
			}
			return nil, f.unknownFlag(dashes, name)
		}
		if !hasValue {
			if isBool(fl) {
				value = "true"
			} else if i+1 < len(args) {
				i++
				value = args[i]
			} else {
				return nil, f.Usagef("%s%s needs a value: %s", dashes, name, synopsis(fl))
			}
		}
		if err := f.Set(name, value); err != nil {
			if fe, ok := err.(flagError); ok {
				return nil, f.Usagef("-%s%s", name, fe) // "-format is text or json, not …"
			}
			return nil, f.Usagef("invalid value %q for %s: %s", value, synopsis(fl), expectedForm(fl, err))
		}
	}
	return pos, nil
}

// Usagef returns a usage error (exit 2) of this command: the message, then
// a line pointing at the command's help.
func (f *FlagSet) Usagef(format string, args ...any) error {
	return Usagef(f.Name(), format, args...)
}

// Usagef returns a usage error (exit 2) of subcommand cmd: "cmd: message",
// then a line pointing at `slogate help cmd`. It is what a command returns
// when its command line is wrong, instead of dumping its whole usage.
func Usagef(cmd, format string, args ...any) error {
	return exit.Usagef("%s: %s\nRun 'slogate help %s' for usage.", cmd, fmt.Sprintf(format, args...), cmd)
}

// WantArgs checks that exactly n arguments were given, else returns a usage
// error naming what was wanted ("two results files (A.json B.json)").
func (f *FlagSet) WantArgs(args []string, n int, what string) error {
	if len(args) == n {
		return nil
	}
	return f.Usagef("want exactly %s, got %d", what, len(args))
}

// unknownFlag is the error for -name that the command does not define,
// suggesting the closest flag it does define.
func (f *FlagSet) unknownFlag(dashes, name string) error {
	var names []string
	f.VisitAll(func(fl *flag.Flag) { names = append(names, fl.Name) })
	if s := suggest.Closest(name, names); s != "" {
		return f.Usagef("unknown flag %s%s; did you mean %s%s?", dashes, name, dashes, s)
	}
	return f.Usagef("unknown flag %s%s", dashes, name)
}

// isBool reports whether fl is a boolean flag (set by its name alone).
func isBool(fl *flag.Flag) bool {
	b, ok := fl.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// synopsis is how the help writes a flag: "-duration D", "-sim".
func synopsis(fl *flag.Flag) string {
	if p := placeholder(fl); p != "" {
		return "-" + fl.Name + " " + p
	}
	return "-" + fl.Name
}

// placeholder is the name of a flag's value in the help: the backquoted word
// of its usage text in upper case (`runtime` → RUNTIME, so that every
// command's help looks alike), else one derived from its type (D for a
// duration, N for a number, VALUE otherwise); "" for a boolean flag.
func placeholder(fl *flag.Flag) string {
	name, _ := flag.UnquoteUsage(fl)
	switch name {
	case "":
		return ""
	case "duration":
		return "D"
	case "int", "uint":
		return "N"
	case "float":
		return "X"
	case "string", "value":
		return "VALUE"
	}
	return strings.ToUpper(name)
}

// expectedForm says what a flag wants after its value was refused with err:
// the form of its type for the standard ones, else err's own text.
func expectedForm(fl *flag.Flag, err error) string {
	if g, ok := fl.Value.(flag.Getter); ok {
		switch g.Get().(type) {
		case time.Duration:
			return "want a duration such as 2s, 500ms or 1m30s"
		case bool:
			return "want true or false"
		case int, int64, uint, uint64:
			return "want a whole number"
		case float64:
			return "want a number"
		}
	}
	return err.Error()
}

// WriteHelp prints the command's help: usage line, description, every flag
// with its placeholder, default and meaning, and the examples (the help
// view writes them).
func (f *FlagSet) WriteHelp(w io.Writer) {
	h := helpview.CommandHelp{Usage: f.help.Usage, Doc: f.help.Doc, Examples: f.help.Examples}
	f.VisitAll(func(fl *flag.Flag) {
		_, usage := flag.UnquoteUsage(fl)
		if d := fl.DefValue; !slices.Contains([]string{"", "0", "0s", "false", "[]"}, d) {
			usage += " (default " + d + ")"
		}
		h.Flags = append(h.Flags, helpview.Flag{Synopsis: synopsis(fl), Usage: usage})
	})
	helpview.WriteCommand(w, h)
}
