// Command slogate is a declarative, spec-driven test runner for LLM inference
// servers: it boots the server a spec describes, measures prefill and
// sustained decode, checks every threshold and reports pass/fail like go test.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/slogate/slogate/internal/exit"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	force := make(chan struct{})
	ctx = withForceStop(ctx, force)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		n := 0
		for sig := range sigs {
			if n++; n == 2 {
				// The server may ignore SIGTERM or take its time: a second
				// signal skips the grace period and kills its group now.
				fmt.Fprintln(os.Stderr, "slogate: second signal: killing the server's process group now")
				close(force)
				continue
			}
			if n > 2 {
				continue
			}
			code := exit.SIGINT
			if sig == syscall.SIGTERM {
				code = exit.SIGTERM
			}
			fmt.Fprintf(os.Stderr, "slogate: %v: stopping the server and writing what was measured (signal again to kill the server now)\n", sig)
			cancel(exit.With(code, fmt.Errorf("interrupted by %v", sig)))
		}
	}()
	err := run(ctx, os.Stdout, os.Stderr, os.Args[1:])
	if err != nil && !exit.IsQuiet(err) {
		fmt.Fprintln(os.Stderr, "slogate:", err)
	}
	os.Exit(exit.Code(err))
}

// forceStopKey carries the channel main closes on a second signal.
type forceStopKey struct{}

// withForceStop returns ctx carrying force, closed when the user signals a
// second time and the server must be killed without waiting out its grace.
func withForceStop(ctx context.Context, force <-chan struct{}) context.Context {
	return context.WithValue(ctx, forceStopKey{}, force)
}

// forceStop returns the channel of withForceStop, or nil (never fires).
func forceStop(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(forceStopKey{}).(<-chan struct{})
	return ch
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
