// Package cli is the plumbing the subcommands of cmd/slogate share: the
// dispatch to subcommands and the top-level help (Program), their flag sets
// with flags anywhere and help on stdout (FlagSet), the version, and the
// files they name (results files, specs, folders of specs), each problem a
// usage error (exit 2) that says what to pass instead.
package cli

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/result"
)

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
		return nil, exit.Usagef("%s: %s does not exist: pass the results.json that `slogate run` wrote into its -out folder (without -out, slogate-out/<spec>/<server>/latest/results.json is the last one that completed)", cmd, path)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, exit.Usagef("%s: cannot read %s: %v", cmd, path, pe.Err)
	}
	return nil, exit.Usagef("%s: %v", cmd, err)
}

// WriteOutput writes the document b of command cmd to stdout, or to the
// file path (-o FILE) when path is set, atomically: a reader never sees
// half a file.
func WriteOutput(cmd string, stdout io.Writer, path string, b []byte) error {
	if path == "" {
		if _, err := stdout.Write(b); err != nil {
			return exit.Infraf("%s: writing output: %w", cmd, err)
		}
		return nil
	}
	if err := result.WriteFileAtomic(path, b); err != nil {
		return exit.Usagef("%s: -o %s: %v (does its folder exist and can you write to it?)", cmd, path, err)
	}
	return nil
}
