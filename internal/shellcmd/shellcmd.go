// Package shellcmd is how slogate shows a command line: words quoted for a
// POSIX shell only where they need it, and the placeholder that stands for
// a secret wherever slogate prints or saves one. The spec renders launches
// with it, the reports, the plan and the server log show them with it.
package shellcmd

import (
	"sort"
	"strings"
)

// Redacted replaces secrets wherever slogate prints or saves them.
const Redacted = "<redacted>"

// Line renders env and argv as one line a person can paste into a
// shell: `env K=V … 'cmd' serve …`, each word quoted only when it needs it.
// Pass argv with its secrets replaced by Redacted (spec.Server.RedactedArgv),
// never the argv run.
func Line(env map[string]string, argv []string) string {
	var words []string
	if len(env) > 0 {
		words = append(words, "env")
		keys := make([]string, 0, len(env))
		for k := range env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			words = append(words, Quote(k+"="+env[k]))
		}
	}
	for _, a := range argv {
		words = append(words, Quote(a))
	}
	return strings.Join(words, " ")
}

// Quote quotes one word for a POSIX shell, leaving it bare when safe.
// "<redacted>" is left bare so it reads as a placeholder.
func Quote(w string) string {
	if w == Redacted {
		return w
	}
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
