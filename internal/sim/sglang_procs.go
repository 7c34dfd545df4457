package sim

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
)

// The hidden commands that imitate SGLang's escaped DP schedulers
// (docs/sglang.md#process-tree): `sim __sglang-detach RANK` starts
// `sim __sglang-scheduler RANK` and exits at once, so the scheduler is
// reparented (to init or a subreaper) while staying in the server's process
// group, as #23627 observed; it then holds on until a signal ends it (SIGINT
// or SIGTERM, which cancel ctx, or SIGKILL) — kill_process_tree's walk from
// the server's pid cannot find it, only a signal to the group can.
const (
	detachCommand    = "__sglang-detach"
	schedulerCommand = "__sglang-scheduler"
)

// schedulerName is the process title SGLang gives a scheduler, which the
// simulator's escaped stand-in shows as its argv[0].
func schedulerName(rank int) string {
	return fmt.Sprintf("sglang::scheduler_DP%d_TP%d_EP%d", rank, rank, rank)
}

// spawnEscapedSchedulers starts one escaped stand-in per DP rank.
func spawnEscapedSchedulers(ranks int) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	for r := range ranks {
		cmd := exec.Command(exe, "sim", detachCommand, strconv.Itoa(r))
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("starting the DP%d scheduler stand-in: %w", r, err)
		}
	}
	return nil
}

// runHiddenCommand runs a hidden command; handled is false for any other
// argument list.
func runHiddenCommand(ctx context.Context, args []string) (handled bool, err error) {
	if len(args) != 2 || (args[0] != detachCommand && args[0] != schedulerCommand) {
		return false, nil
	}
	rank, err := strconv.Atoi(args[1])
	if err != nil {
		return true, fmt.Errorf("%s: bad rank %q", args[0], args[1])
	}
	if args[0] == detachCommand {
		exe, err := os.Executable()
		if err != nil {
			return true, err
		}
		cmd := &exec.Cmd{Path: exe, Args: []string{schedulerName(rank), "sim", schedulerCommand, args[1]}}
		return true, cmd.Start() // and exit: the scheduler is orphaned, in the same process group
	}
	<-ctx.Done() // the scheduler: holds its GPU memory until a signal ends it
	return true, nil
}
