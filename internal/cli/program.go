package cli

import (
	"context"
	"io"
	"strings"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/suggest"
	"github.com/slogate/slogate/internal/views/helpview"
)

// Command is one subcommand of a Program.
type Command struct {
	Name    string // "run"
	Summary string // one line for the list of commands
	// Run runs the command with the arguments after its name; given "-h" it
	// prints its help on stdout and returns nil or ErrHelp.
	Run func(ctx context.Context, stdout, stderr io.Writer, args []string) error
}

// Program is a command made of subcommands (`slogate COMMAND [flags] [args]`).
type Program struct {
	Name     string    // "slogate"
	Intro    string    // the first line of the top-level help
	Commands []Command // in the order the help lists them
	// Footer lines close the top-level help (exit codes, …).
	Footer []string
	// Version is the command that -version and --version run; it must
	// also be in Commands.
	Version string
}

// Run dispatches args to a subcommand. No arguments print the top-level
// help on stderr and exit 2; "help", -h, -help and --help print it on
// stdout; "help CMD" prints CMD's help on stdout (CMD -h); -version and
// --version run the version command. An unknown command is one usage error
// line with a suggestion, plus a line pointing at `slogate help`.
func (p *Program) Run(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	if len(args) == 0 {
		p.WriteHelp(stderr)
		return exit.Quiet(exit.Usage)
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		if name != "help" || len(rest) == 0 || rest[0] == "help" {
			p.WriteHelp(stdout)
			return nil
		}
		name, rest = rest[0], []string{"-h"}
	case "-version", "--version":
		name = p.Version
	}
	for _, c := range p.Commands {
		if c.Name == name {
			return c.Run(ctx, stdout, stderr, rest)
		}
	}
	return p.unknown(name)
}

// unknown is the usage error for a command name that is not one.
func (p *Program) unknown(name string) error {
	const hint = "\nRun '%s help' for the list of commands."
	if strings.HasPrefix(name, "-") {
		return exit.Usagef("unknown flag %s: flags go after the command (%s COMMAND [flags] [args])"+hint, name, p.Name, p.Name)
	}
	var names []string
	for _, c := range p.Commands {
		names = append(names, c.Name)
	}
	if s := suggest.Closest(name, names); s != "" {
		return exit.Usagef("unknown command %q; did you mean %q?"+hint, name, s, p.Name)
	}
	return exit.Usagef("unknown command %q"+hint, name, p.Name)
}

// WriteHelp prints the top-level help: intro, usage, commands, footer
// (the help view writes them).
func (p *Program) WriteHelp(w io.Writer) {
	cmds := make([]helpview.Command, len(p.Commands))
	for i, c := range p.Commands {
		cmds[i] = helpview.Command{Name: c.Name, Summary: c.Summary}
	}
	helpview.WriteTop(w, p.Name, p.Intro, cmds, p.Footer)
}
