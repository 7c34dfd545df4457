// Command slogate is a declarative, spec-driven test runner for LLM inference
// servers: it boots the server a spec describes, measures prefill and
// sustained decode, checks every threshold and reports pass/fail like go test.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/interrupt"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx := interrupt.Notify(context.Background(), os.Stderr)
	err := run(ctx, os.Stdout, os.Stderr, os.Args[1:])
	if err != nil && !exit.IsQuiet(err) {
		fmt.Fprintln(os.Stderr, "slogate:", err)
	}
	os.Exit(exit.Code(err))
}

// command is one subcommand: it gets the arguments after its name.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, stdout, stderr io.Writer, args []string) error
}

// commands lists the subcommands in the order usage shows them.
func commands() []command {
	return []command{
		{"run", "boot, measure, assert, report: the main job", cmdRun},
		{"validate", "parse and check specs; print diagnostics", cmdValidate},
		{"plan", "print the launch command and the cells to measure", cmdPlan},
		{"diff", "compare two results files cell by cell", cmdDiff},
		{"report", "re-render a saved run (md, html, json)", cmdReport},
		{"merge", "combine the results folders of several runs into one", cmdMerge},
		{"codify", "print HCL expect/assert blocks from a measured run", cmdCodify},
		{"sim", "run the built-in vLLM-compatible simulator", cmdSim},
		{"version", "print slogate's version", cmdVersion},
	}
}

// run is the whole program behind main: it dispatches to a subcommand.
func run(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return exit.Quiet(exit.Usage)
		}
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, stdout, stderr, args[1:])
		}
	}
	usage(stderr)
	return exit.Usagef("unknown command %q: the commands are listed above", args[0])
}

// usage lists the commands and the exit codes.
func usage(w io.Writer) {
	fmt.Fprintln(w, "slogate: declarative SLO tests for LLM inference servers")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: slogate COMMAND [flags] [args]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Exit codes: 0 pass, 1 assertion failed, 2 usage or invalid spec, 3 infrastructure error.")
	fmt.Fprintln(w, "Run 'slogate COMMAND -h' for a command's flags.")
}

// cmdVersion is `slogate version`: it prints the version set at build time.
func cmdVersion(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fmt.Fprintln(stdout, "slogate", version)
	return nil
}
