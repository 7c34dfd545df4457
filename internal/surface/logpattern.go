package surface

import (
	"bufio"
	"io"
	"regexp"
	"strings"
)

var (
	// kvLineRe finds the KV capacity lines of vLLM's startup log (the
	// forms internal/engine/vllm/facts.go reads).
	kvLineRe = regexp.MustCompile(`KV cache size: |Maximum concurrency for `)
	// argsRe cuts the non-default args line after its label.
	argsRe = regexp.MustCompile(`non-default args: .*`)

	pidRe    = regexp.MustCompile(`\bpid=\d+`)
	stampRe  = regexp.MustCompile(`\b\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?\b`)
	sourceRe = regexp.MustCompile(`\[([\w./-]+\.py):\d+\]`)
	groupRe  = regexp.MustCompile(`\b\d{1,3}(,\d{3})+\b`)
	floatRe  = regexp.MustCompile(`\b\d+\.\d+`)
	intRe    = regexp.MustCompile(`\b\d+\b`)
)

// Pattern is a log line with what varies between runs and servers
// replaced: the pid (pid=<pid>), the timestamp (<time>), the source line
// (file.py:<line>), and numbers by their form — <n,nnn> with thousands
// separators, <n.nn> with decimals, <n> bare — so that the numbers' form
// (which slogate's parser must read) stays and their values go.
func Pattern(line string) string {
	line = pidRe.ReplaceAllString(line, "pid=<pid>")
	line = stampRe.ReplaceAllString(line, "<time>")
	line = sourceRe.ReplaceAllString(line, "[$1:<line>]")
	line = groupRe.ReplaceAllString(line, "<n,nnn>")
	line = floatRe.ReplaceAllString(line, "<n.nn>")
	return intRe.ReplaceAllString(line, "<n>")
}

// readLog picks the lines Log holds out of a startup log.
func readLog(r io.Reader) (Log, error) {
	l := Log{KV: []string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case kvLineRe.MatchString(line):
			l.KV = append(l.KV, Pattern(line))
		case l.NonDefaultArgs == "" && argsRe.MatchString(line):
			l.NonDefaultArgs = Pattern(argsRe.ReplaceAllString(line, "non-default args: {…}"))
		}
	}
	return l, sc.Err()
}
