package docs_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/cmdlines"
)

// The commands the README and docs/*.md show in code (fenced blocks and
// inline code spans) are checked against the real binary and the
// repository, so that the docs cannot drift from either: every subcommand
// exists, every flag is one its help lists (a simulator line's --sim-*
// flags too), every repository file a command names exists, and the
// commands that can run here as written do (validate, plan, report on a
// results file of the repository's, the simulator until it is healthy).

// buildOnce builds the slogate binary the commands are checked against.
var buildOnce = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "slogate-docs-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "slogate")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/slogate").CombinedOutput(); err != nil {
		return "", fmt.Errorf("building slogate: %v\n%s", err, out)
	}
	return bin, nil
})

// docFiles are the documents whose commands are checked.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(files) < 4 {
		t.Fatalf("docs/*.md: %v %v", files, err)
	}
	return append(files, filepath.Join(root, "README.md"))
}

var (
	fence      = regexp.MustCompile("^\\s*(```|~~~)")
	inlineCode = regexp.MustCompile("`([^`]+)`")
)

// docCommands finds the slogate commands in the code of one Markdown file:
// its fenced blocks, and its inline code spans (a span may wrap a line).
func docCommands(t *testing.T, path string) []cmdlines.Command {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	name, _ := filepath.Rel(root, path)
	lines := strings.Split(string(b), "\n")
	var out []cmdlines.Command
	var prose []string // with the line each starts at
	var proseStart []int
	for i := 0; i < len(lines); i++ {
		if !fence.MatchString(lines[i]) {
			prose, proseStart = append(prose, lines[i]), append(proseStart, i+1)
			continue
		}
		start := i + 1
		for i++; i < len(lines) && !fence.MatchString(lines[i]); i++ {
		}
		out = append(out, cmdlines.Find(name, start+1, strings.Join(lines[start:min(i, len(lines))], "\n"))...)
	}
	// Inline spans, paragraph by paragraph (a span can wrap a line).
	for i := 0; i < len(prose); {
		j := i
		for j < len(prose) && strings.TrimSpace(prose[j]) != "" {
			j++
		}
		para := strings.Join(prose[i:j], "\n")
		for _, loc := range inlineCode.FindAllStringSubmatchIndex(para, -1) {
			span := strings.ReplaceAll(para[loc[2]:loc[3]], "\n", " ")
			line := proseStart[i] + strings.Count(para[:loc[0]], "\n")
			out = append(out, cmdlines.Find(name, line, span)...)
		}
		i = j + 1
	}
	return out
}

// placeholder matches an argument that stands for something (SPEC, DIR…,
// A.json, N=V, [flags], $SPECS, …) rather than being one.
var placeholder = regexp.MustCompile(`…|\.\.\.|[\[\]$<>|*]|^[A-Z][A-Z0-9_]*(\.[a-z]+)?$|^[A-Z]+=[A-Z]+$|^CMD$`)

// outputFlags take the name of a file or folder the command writes.
var outputFlags = []string{"-o", "-out", "-junit"}

// repoFile reports whether arg names a file of the repository: a spec
// (.hcl), or a path under one of the repository's own top-level folders
// (not slogate-out, what runs write).
func repoFile(arg string, top map[string]bool) bool {
	if strings.HasPrefix(arg, "-") || strings.Contains(arg, "=") || strings.Contains(arg, "://") {
		return false
	}
	first, _, nested := strings.Cut(arg, "/")
	return strings.HasSuffix(arg, ".hcl") || (nested && top[first])
}

// TestDocCommands checks every slogate command of the README and docs.
func TestDocCommands(t *testing.T) {
	bin, err := buildOnce()
	if err != nil {
		t.Fatal(err)
	}
	top := map[string]bool{}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if n := e.Name(); e.IsDir() && !strings.HasPrefix(n, ".") && n != "bin" && n != "slogate-out" {
			top[n] = true
		}
	}
	known := map[string]cmdlines.Flags{}
	var cmds []cmdlines.Command
	for _, f := range docFiles(t) {
		cmds = append(cmds, docCommands(t, f)...)
	}
	ran := map[string]int{}
	for _, c := range cmds {
		sub, args := c.Args[0], c.Args[1:]
		flags, seen := known[sub]
		if !seen {
			flags, _ = cmdlines.HelpFlags(bin, sub)
			known[sub] = flags
		}
		if flags == nil && sub != "help" && sub != "version" {
			t.Errorf("%v: %q is not a slogate subcommand (slogate %s -h fails)", c, sub, sub)
			continue
		}
		check := slices.DeleteFunc(slices.Clone(args), func(a string) bool {
			// A synopsis's "[--sim-* flags]"; on a simulator line vLLM's
			// flags are accepted as vLLM takes them, the simulator's own
			// must exist.
			return placeholder.MatchString(a) || (sub == "sim" && !strings.HasPrefix(strings.TrimLeft(a, "["), "--sim-"))
		})
		for _, f := range flags.Unknown(check) {
			if !shownRefused(c.File, f) {
				t.Errorf("%v: slogate %s has no flag %s", c, sub, f)
			}
		}
		runnable, names := true, false // names: a file of the repository among the arguments
		for i, a := range args {
			if placeholder.MatchString(a) || filepath.IsAbs(a) { // an absolute path is another machine's (an image's /specs)
				runnable = false
				continue
			}
			if i > 0 && slices.Contains(outputFlags, args[i-1]) {
				continue // written by the command
			}
			if repoFile(a, top) {
				names = true
				if m, _ := filepath.Glob(filepath.Join(root, a)); len(m) == 0 {
					t.Errorf("%v: %s is not in the repository", c, a)
					runnable = false
				}
			}
		}
		if runnable && (names || sub == "report" || sub == "sim") && runDocCommand(t, bin, c) {
			ran[sub]++
		}
	}
	for _, sub := range []string{"validate", "plan", "report", "sim"} {
		if ran[sub] == 0 {
			t.Errorf("no `slogate %s` command of the docs ran (the extraction or the docs changed)", sub)
		}
	}
	t.Logf("%d commands checked; ran %v", len(cmds), ran)
}

// shownRefused reports whether doc shows flag being refused: the README's
// example of a mistyped flag and the error it gets ("unknown flag -simm").
func shownRefused(doc, flag string) bool {
	b, err := os.ReadFile(filepath.Join(root, doc))
	return err == nil && bytes.Contains(b, []byte("unknown flag "+flag+";"))
}

// resultsFixture is a results.json of the repository that a documented
// `slogate report` line renders in place of the run output it names.
const resultsFixture = "internal/report/testdata/qwen3.5-4b-h200-dflash.results.json"

// runDocCommand runs c from the repository's root when it is one that can
// run here: validate and plan of a file of the repository as written;
// report on resultsFixture; the simulator until it answers /health. Files it would write go to a
// temporary folder. It reports whether it ran c.
func runDocCommand(t *testing.T, bin string, c cmdlines.Command) bool {
	t.Helper()
	args := slices.Clone(c.Args)
	for i := 1; i < len(args); i++ {
		if slices.Contains(outputFlags, args[i-1]) {
			args[i] = filepath.Join(t.TempDir(), filepath.Base(args[i]))
		}
	}
	last := args[len(args)-1]
	switch {
	case args[0] == "validate" || args[0] == "plan":
	case args[0] == "report" && strings.HasSuffix(last, ".json"):
		args[len(args)-1] = resultsFixture
	case args[0] == "sim" && len(args) > 2 && args[1] == "serve":
		return runDocSim(t, bin, c, args)
	default:
		return false // only a name (`slogate plan`), or not a command that can run here
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "HOME=/home/u")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%v: %v\n%s", c, err, out)
	}
	return true
}

// runDocSim starts a documented simulator line on a free port and stops it
// once it answers /health (or fails when it does not within 20 s).
func runDocSim(t *testing.T, bin string, c cmdlines.Command, args []string) bool {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(args, "--host", "127.0.0.1", "--port", fmt.Sprint(port))...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	url := fmt.Sprintf("http://127.0.0.1:%d/health", port)
	for ctx.Err() == nil {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("%v: the simulator did not answer /health within 20s:\n%s", c, out.String())
	return true
}
