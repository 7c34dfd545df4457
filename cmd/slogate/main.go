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
	"github.com/slogate/slogate/internal/views"
)

// version and commit are set by make with -ldflags "-X main.version=…
// -X main.commit=…"; `go install` leaves them and the build info speaks.
var version, commit = "dev", ""

func main() {
	ctx := interrupt.Notify(context.Background(), func(s interrupt.Signal) { views.WriteSignal(os.Stderr, s) })
	err := runProgram(ctx, os.Stdout, os.Stderr, os.Args[1:])
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
		{Name: "run", Summary: cli.Summary("run"), Run: cmdRun},
		{Name: "validate", Summary: cli.Summary("validate"), Run: cmdValidate},
		{Name: "plan", Summary: cli.Summary("plan"), Run: cmdPlan},
		{Name: "diff", Summary: cli.Summary("diff"), Run: cmdDiff},
		{Name: "bisect", Summary: cli.Summary("bisect"), Run: cmdBisect},
		{Name: "interleave", Summary: cli.Summary("interleave"), Run: cmdInterleave},
		{Name: "report", Summary: cli.Summary("report"), Run: cmdReport},
		{Name: "noise", Summary: cli.Summary("noise"), Run: cmdNoise},
		{Name: "merge", Summary: cli.Summary("merge"), Run: cmdMerge},
		{Name: "codify", Summary: cli.Summary("codify"), Run: cmdCodify},
		{Name: "clean", Summary: cli.Summary("clean"), Run: cmdClean},
		{Name: "sim", Summary: cli.Summary("sim"), Run: cmdSim},
		{Name: "version", Summary: cli.Summary("version"), Run: cmdVersion},
	},
	Footer:  cli.HelpFooter(),
	Version: "version",
}

// runProgram is the whole program behind main: it dispatches to a subcommand.
func runProgram(ctx context.Context, stdout, stderr io.Writer, args []string) error {
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
