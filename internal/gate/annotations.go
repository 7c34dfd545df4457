package gate

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/result"
)

// writeAnnotations prints a GitHub Actions ::error command for every failed,
// inconclusive or errored verdict, pointing at the rule's file and line.
func writeAnnotations(w io.Writer, verdicts []result.Verdict) {
	for _, v := range verdicts {
		if !v.Outcome.Failed() {
			continue
		}
		var props []string
		if v.File != "" {
			props = append(props, "file="+ghProperty(v.File))
			if v.Line > 0 {
				props = append(props, "line="+strconv.Itoa(v.Line))
			}
		}
		props = append(props, "title="+ghProperty(v.Test))
		msg := append([]string(nil), v.Details...)
		if v.Message != "" && !containsLine(msg, v.Message) {
			msg = append(msg, v.Message)
		}
		if len(msg) == 0 {
			msg = []string{v.Outcome.String()}
		}
		fmt.Fprintf(w, "::error %s::%s\n", strings.Join(props, ","), ghData(strings.Join(msg, "\n")))
	}
}

// ghData escapes a workflow command's message (GitHub's escapeData).
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// ghProperty escapes a workflow command property (GitHub's escapeProperty).
func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
