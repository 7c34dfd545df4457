package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ExpandSpecPaths replaces each folder among paths by every *.hcl file
// below it, in lexical order (folders whose names start with "." are
// skipped: .git and the like); other paths stay as given, so that a
// missing file is reported by the loader like any unreadable spec. A
// folder without a single spec is a usage error of command cmd.
func ExpandSpecPaths(cmd string, paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil || !info.IsDir() {
			out = append(out, p)
			continue
		}
		n := len(out)
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && path != p && strings.HasPrefix(d.Name(), "."):
				return filepath.SkipDir
			case !d.IsDir() && strings.HasSuffix(d.Name(), ".hcl"):
				out = append(out, path)
			}
			return nil
		})
		if err != nil {
			return nil, Usagef(cmd, "reading folder %s: %v", p, err)
		}
		if len(out) == n {
			return nil, Usagef(cmd, "no *.hcl spec file in folder %s", p)
		}
	}
	return out, nil
}
