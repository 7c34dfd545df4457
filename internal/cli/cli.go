// Package cli is the plumbing the subcommands of cmd/slogate share: their
// flag sets, positional arguments, and the files they name (results files,
// specs), each problem a usage error (exit 2) that says what to pass instead.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/slogate/slogate/assert"
	"github.com/slogate/slogate/compare"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/report"
	"github.com/slogate/slogate/result"
	"github.com/slogate/slogate/spec"
)

// NewFlagSet returns the flag set of subcommand name: parse errors and -h go
// to stderr, and the usage is the given lines followed by the flags.
func NewFlagSet(name string, stderr io.Writer, usage ...string) *flag.FlagSet {
	fls := flag.NewFlagSet(name, flag.ContinueOnError)
	fls.SetOutput(stderr)
	fls.Usage = func() {
		for _, l := range usage {
			fmt.Fprintln(stderr, l)
		}
		fls.PrintDefaults()
	}
	return fls
}

// FlagsError is what a subcommand returns when its flags did not parse: -h
// printed the usage and succeeds; any other error has already been printed
// by the flag package, with the usage, so it exits 2 without more text.
func FlagsError(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return exit.Quiet(exit.Usage)
}

// ParseAnywhere parses fls from args allowing flags after the positional
// arguments too (`slogate diff A.json B.json -tolerance 5%`), which the
// flag package alone stops at. "--" ends flag parsing. It returns the
// positional arguments in order.
func ParseAnywhere(fls *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fls.Parse(args); err != nil {
			return nil, err
		}
		rest := fls.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// WantArgs checks that exactly n positional arguments were given; if not it
// prints the usage and returns a usage error naming what was wanted ("two
// results files (A.json B.json)").
func WantArgs(fls *flag.FlagSet, args []string, n int, what string) error {
	if len(args) == n {
		return nil
	}
	fls.Usage()
	return exit.Usagef("%s: want exactly %s, got %d", fls.Name(), what, len(args))
}

// ReadResults reads a results.json named on the command line of subcommand
// cmd. Every failure is a usage error (exit 2) that names the file and, when
// it is missing or unreadable, says which file to pass instead.
func ReadResults(cmd, path string) (*result.Results, error) {
	res, err := result.Read(path)
	if err == nil {
		return res, nil
	}
	if info, statErr := os.Stat(path); statErr == nil && info.IsDir() {
		return nil, exit.Usagef("%s: %s is a folder: pass the results.json inside it (%s)", cmd, path, filepath.Join(path, "results.json"))
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, exit.Usagef("%s: %s does not exist: pass the results.json that `slogate run` wrote into its -out folder (default slogate-out/<server>/results.json)", cmd, path)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, exit.Usagef("%s: cannot read %s: %v", cmd, path, pe.Err)
	}
	return nil, exit.Usagef("%s: %v", cmd, err)
}

// LoadSpecs loads each path and checks its conditions statically
// (assert.Check), printing every diagnostic (warnings too) on stderr. It returns the valid specs, and exit.Quiet(exit.Usage) when any
// spec had an error.
func LoadSpecs(stderr io.Writer, paths []string, vars spec.Vars) ([]*spec.Spec, error) {
	// Diagnostics use colour on the same terms as the console (a terminal,
	// NO_COLOR unset, TERM not dumb).
	color := report.ConsoleOptionsFor(stderr, nil).Color
	var ok []*spec.Spec
	failed := false
	for _, path := range paths {
		s, diags := spec.Load(path, spec.LoadOptions{Vars: vars})
		if !diags.HasErrors() {
			diags = append(diags, assert.Check(s)...) // conditions that can never be true or false
		}
		if len(diags) > 0 {
			if err := spec.WriteDiagnostics(stderr, s.Files, diags, color); err != nil {
				return nil, exit.Infraf("writing diagnostics: %w", err)
			}
		}
		if diags.HasErrors() {
			failed = true
			continue
		}
		ok = append(ok, s)
	}
	if failed {
		return ok, exit.Quiet(exit.Usage)
	}
	return ok, nil
}

// Percent reads a percentage flag, "5%" or "0.05", as a fraction; a bad
// value is a usage error naming the flag (e.g. "diff: -tolerance").
func Percent(flag, value string) (float64, error) {
	v, err := compare.ParsePercent(value)
	if err != nil {
		return 0, exit.Usagef("%s: %v", flag, err)
	}
	return v, nil
}
