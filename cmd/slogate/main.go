// Command slogate is a declarative, spec-driven test runner for LLM inference
// servers: it boots the server a spec describes, measures prefill and
// sustained decode, checks every threshold and reports pass/fail like go test.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/slogate/slogate/internal/cli"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/interrupt"
)

// version and commit are set by make with -ldflags "-X main.version=…
// -X main.commit=…"; `go install` leaves them and the build info speaks.
var version, commit = "dev", ""

func main() {
	ctx := interrupt.Notify(context.Background(), os.Stderr)
	err := run(ctx, os.Stdout, os.Stderr, os.Args[1:])
	if err != nil && !exit.IsQuiet(err) {
		fmt.Fprintln(os.Stderr, "slogate:", err)
	}
	os.Exit(exit.Code(err))
}

// program is slogate's command line: its subcommands, in the order the help
// lists them.
var program = &cli.Program{
	Name:  "slogate",
	Intro: "slogate: declarative SLO tests for LLM inference servers",
	Commands: []cli.Command{
		{Name: "run", Summary: "boot, measure, assert, report: the main job", Run: cmdRun},
		{Name: "validate", Summary: "check spec files or folders of them; print diagnostics", Run: cmdValidate},
		{Name: "plan", Summary: "print the launch command and the cells to measure", Run: cmdPlan},
		{Name: "diff", Summary: "compare two results files cell by cell", Run: cmdDiff},
		{Name: "report", Summary: "re-render a saved run (md, html, json)", Run: cmdReport},
		{Name: "noise", Summary: "per cell: the measured noise, the change it lets a gate catch, the repeats it needs", Run: cmdNoise},
		{Name: "merge", Summary: "combine the results folders of several runs into one", Run: cmdMerge},
		{Name: "codify", Summary: "print HCL expect/assert blocks from a measured run", Run: cmdCodify},
		{Name: "clean", Summary: "remove containers a killed run left behind", Run: cmdClean},
		{Name: "sim", Summary: "run the built-in vLLM- or SGLang-compatible simulator", Run: cmdSim},
		{Name: "version", Summary: "print slogate's version, commit and Go version", Run: cmdVersion},
	},
	Footer:  []string{"Exit codes: 0 pass, 1 assertion failed, 2 usage or invalid spec, 3 infrastructure error."},
	Version: "version",
}

// run is the whole program behind main: it dispatches to a subcommand.
func run(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	return program.Run(ctx, stdout, stderr, args)
}

// buildVersion is the running binary's version, from the -ldflags stamps
// or the build info.
func buildVersion() cli.Version {
	info, _ := debug.ReadBuildInfo()
	return cli.BuildVersion(version, commit, info)
}

// cmdVersion is `slogate version` (also -version, --version).
func cmdVersion(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	return cli.RunVersion(stdout, args, buildVersion())
}
