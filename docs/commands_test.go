package docs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
	"github.com/slogate/slogate/internal/vocab"
)

// The commands the README and docs/*.md show in code (fenced blocks and
// inline code spans) are checked against the real binary and the
// repository, so that the docs cannot drift from either: every subcommand
// exists, every flag is one its help lists (a simulator line's --sim-*
// flags too), every repository file a command names exists, and every
// command written out in full runs here, in the order the document shows
// them, in a scratch folder that holds the repository's files and what the
// document's earlier commands wrote (paths included: a `diff` of a file no
// earlier command writes fails). A command is not run when it is only a
// name (`slogate run`, `slogate run -sim`), a synopsis (SPEC, A.json,
// [flags], …), or marked in the document, on a line of its own before its
// code block or paragraph:
//
//	<!-- docs-test: not runnable here: WHY -->
//
// and a file that comes from outside the document's commands (a CI
// artifact, a run the text describes) is declared, from that line on, by
//
//	<!-- docs-test: given PATH[ PATH…]: WHY -->
//
// How each kind runs (runDocCommand): validate, plan, help, version,
// report, diff, noise, codify and merge as written; the simulator until it
// answers /health; `run` as `plan` of the same specs with the same -var,
// -server, -run and -duration (a measured cell costs seconds: the e2e
// tests measure), its -baseline checked present, and the results.json it
// would write (-out DIR, DIR/<run name>, or slogate-out/<spec>/<server>/latest)
// stood in by resultsFixture, so that the commands after it read real
// files; a run shown refusing a flag must exit 2 saying so.

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
	// marker is a docs-test comment: "not runnable here: WHY" or
	// "given PATH…: WHY".
	marker = regexp.MustCompile(`^\s*<!-- docs-test: (not runnable here|given ([^:]+)): (.+?) -->\s*$`)
	// prompt is a shell prompt starting a command line in a block that
	// shows output too.
	prompt = regexp.MustCompile(`^\s*\$ `)
	// angled is a placeholder in angle brackets in prose: specs/<seed>.hcl.
	angled = regexp.MustCompile(`<[a-z][a-z-]*>`)
)

// docCommand is one command of a document, with the marker over it.
type docCommand struct {
	cmdlines.Command
	// NotRunnable is the reason a marker gives for not running it.
	NotRunnable string
}

// givenPaths are the files a document declares given, from a line on.
type givenPaths struct {
	Line  int
	Paths []string
}

// docCommands finds the slogate commands in the code of one Markdown file,
// in the order of their lines: its fenced blocks (in a block with $
// prompts, only the prompted lines: the rest is output), and its inline
// code spans (a span may wrap a line); and the files it declares given.
func docCommands(t *testing.T, path string) ([]docCommand, []givenPaths) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	name, _ := filepath.Rel(root, path)
	name = filepath.ToSlash(name)
	lines := strings.Split(string(b), "\n")
	var out []docCommand
	var given []givenPaths
	var prose []string // with the line each starts at
	var proseStart []int
	notRunnable := map[int]string{} // first line of the block or paragraph → why
	pending := ""
	for i := 0; i < len(lines); i++ {
		if m := marker.FindStringSubmatch(lines[i]); m != nil {
			if m[2] != "" {
				given = append(given, givenPaths{Line: i + 1, Paths: strings.Fields(m[2])})
			} else {
				pending = m[3]
			}
			prose, proseStart = append(prose, ""), append(proseStart, i+1) // a marker ends a paragraph
			continue
		}
		if pending != "" && strings.TrimSpace(lines[i]) != "" {
			notRunnable[i+1], pending = pending, ""
		}
		if !fence.MatchString(lines[i]) {
			prose, proseStart = append(prose, lines[i]), append(proseStart, i+1)
			continue
		}
		why := notRunnable[i+1]
		start := i + 1
		for i++; i < len(lines) && !fence.MatchString(lines[i]); i++ {
		}
		block := lines[start:min(i, len(lines))]
		if slices.ContainsFunc(block, prompt.MatchString) {
			shown := make([]string, len(block))
			for k := 0; k < len(block); k++ {
				if !prompt.MatchString(block[k]) {
					continue
				}
				for ; k < len(block); k++ {
					shown[k] = prompt.ReplaceAllString(block[k], "")
					if !strings.HasSuffix(block[k], "\\") {
						break
					}
				}
			}
			block = shown
		}
		for _, c := range cmdlines.Find(name, start+1, strings.Join(block, "\n")) {
			// A backtick in a block that is no shell (a drawing's
			// "`slogate run` and `merge`") ends the command.
			if k := slices.IndexFunc(c.Args, func(a string) bool { return strings.Contains(a, "`") }); k >= 0 {
				c.Args = c.Args[:max(k, 1)]
			}
			out = append(out, docCommand{Command: c, NotRunnable: why})
		}
	}
	// Inline spans, paragraph by paragraph (a span can wrap a line).
	for i := 0; i < len(prose); {
		j := i
		for j < len(prose) && strings.TrimSpace(prose[j]) != "" {
			j++
		}
		para := strings.Join(prose[i:j], "\n")
		why := ""
		if i < len(proseStart) {
			why = notRunnable[proseStart[i]]
		}
		for _, loc := range inlineCode.FindAllStringSubmatchIndex(para, -1) {
			span := strings.ReplaceAll(para[loc[2]:loc[3]], "\n", " ")
			line := proseStart[i] + strings.Count(para[:loc[0]], "\n")
			for _, c := range cmdlines.Find(name, line, span) {
				if angled.MatchString(span) { // specs/<seed>.hcl, which the shell split at "<"
					c.Args = append(c.Args, "<…>")
				}
				out = append(out, docCommand{Command: c, NotRunnable: why})
			}
		}
		i = j + 1
	}
	slices.SortStableFunc(out, func(a, b docCommand) int { return a.Line - b.Line })
	return out, given
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

// operandless are the subcommands that need an operand (a spec, a results
// file or folder): shown without one, they are a name, not a command.
var operandless = []string{"run", "validate", "plan", "diff", "report", "noise", "codify", "merge", "bisect", "interleave"}

// TestDocCommands checks every slogate command of the README and docs,
// and runs each one written out in full (see the comment at the top).
func TestDocCommands(t *testing.T) {
	start := time.Now()
	bin, err := buildOnce()
	if err != nil {
		t.Fatal(err)
	}
	built := time.Since(start)
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
	ran, marked, total := map[string]int{}, 0, 0
	for _, f := range docFiles(t) {
		cmds, given := docCommands(t, f)
		total += len(cmds)
		ws := newWorkspace(t, bin)
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
			refused := ""
			for _, f := range flags.Unknown(check) {
				if shownRefused(c.File, f) {
					refused = f
				} else {
					t.Errorf("%v: slogate %s has no flag %s", c, sub, f)
				}
			}
			runnable := true
			for i, a := range args {
				if placeholder.MatchString(a) {
					runnable = false // a synopsis
					continue
				}
				if i > 0 && slices.Contains(outputFlags, args[i-1]) {
					continue // written by the command
				}
				if repoFile(a, top) && !filepath.IsAbs(a) {
					if m, _ := filepath.Glob(filepath.Join(root, a)); len(m) == 0 && !ws.wrote(a) {
						t.Errorf("%v: %s is not in the repository", c, a)
						runnable = false
					}
				}
			}
			if !runnable || (len(args) == 0 && sub != "version" && sub != "help") ||
				(slices.Contains(operandless, sub) && len(ws.operands(sub, args)) == 0 && refused == "") ||
				(sub == "sim" && len(ws.operands(sub, args)) < 2) {
				continue // a synopsis, or only a name
			}
			if c.NotRunnable != "" {
				marked++
				continue
			}
			for _, g := range given {
				if g.Line < c.Line {
					ws.give(t, g.Paths)
				}
			}
			if why := ws.run(t, c.Command, refused); why != "" {
				t.Errorf("%v: %s; run it here or mark it, on a line of its own before its block or paragraph: <!-- docs-test: not runnable here: WHY -->", c, why)
				continue
			}
			ran[sub]++
		}
	}
	for _, sub := range []string{"validate", "plan", "report", "sim", "run"} {
		if ran[sub] == 0 {
			t.Errorf("no `slogate %s` command of the docs ran (the extraction or the docs changed)", sub)
		}
	}
	t.Logf("%d commands found; ran %v; %d marked not runnable here; %.1fs (the build %.1fs)", total, ran, marked,
		time.Since(start).Seconds(), built.Seconds())
}

// shownRefused reports whether doc shows flag being refused: the README's
// example of a mistyped flag and the error it gets ("unknown flag -simm").
func shownRefused(doc, flag string) bool {
	b, err := os.ReadFile(filepath.Join(root, doc))
	return err == nil && bytes.Contains(b, []byte("unknown flag "+flag+";"))
}

// resultsFixture is a results.json of the repository that stands in for
// the results a documented `slogate run` would write.
const resultsFixture = "internal/report/testdata/qwen3.5-4b-h200-dflash.results.json"

// workspace is the scratch folder one document's commands run in: the
// repository's top-level entries linked into it, and what the commands
// before wrote.
type workspace struct {
	dir, bin string
	// value are the flags of each subcommand that take a value.
	value map[string]map[string]bool
}

// newWorkspace links the repository's entries (not slogate-out or .git)
// into a new temporary folder.
func newWorkspace(t *testing.T, bin string) *workspace {
	t.Helper()
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	w := &workspace{dir: t.TempDir(), bin: bin, value: map[string]map[string]bool{}}
	entries, err := os.ReadDir(abs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if n := e.Name(); n != "slogate-out" && n != ".git" {
			if err := os.Symlink(filepath.Join(abs, n), filepath.Join(w.dir, n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return w
}

// wrote reports whether path is in the workspace: written by an earlier
// command or given.
func (w *workspace) wrote(path string) bool {
	_, err := os.Stat(filepath.Join(w.dir, path))
	return err == nil
}

// give puts resultsFixture at each path a document declares given (a
// folder, without an extension, gets it as its results.json).
func (w *workspace) give(t *testing.T, paths []string) {
	t.Helper()
	for _, p := range paths {
		if w.wrote(p) {
			continue
		}
		if filepath.Ext(p) == "" {
			p = filepath.Join(p, "results.json")
		}
		w.putResults(t, p)
	}
}

// putResults copies resultsFixture to path in the workspace.
func (w *workspace) putResults(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, resultsFixture))
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(w.dir, path)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// helpValueFlag is a help line of a flag that takes a value: "  -out DIR".
var helpValueFlag = regexp.MustCompile(`(?m)^\s+-{1,2}([\w-]+) +[A-Z][A-Z_.]*\b`)

// takesValue reports whether flag (as written, dashes and all) of sub takes
// a value, as `slogate SUB -h` shows it.
func (w *workspace) takesValue(sub, flag string) bool {
	vs, ok := w.value[sub]
	if !ok {
		vs = map[string]bool{}
		out, _ := exec.Command(w.bin, sub, "-h").CombinedOutput()
		for _, m := range helpValueFlag.FindAllStringSubmatch(string(out), -1) {
			vs[m[1]] = true
		}
		w.value[sub] = vs
	}
	return vs[strings.TrimLeft(flag, "-")]
}

// operands are args without the flags and their values.
func (w *workspace) operands(sub string, args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(out, args[i+1:]...)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if !strings.Contains(a, "=") && w.takesValue(sub, a) {
				i++
			}
		default:
			out = append(out, a)
		}
	}
	return out
}

// flagValue is the value of flag name (without dashes) in args, "" when
// it is not given.
func (w *workspace) flagValue(sub string, args []string, name string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		n, v, eq := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || n != name {
			if strings.HasPrefix(a, "-") && !eq && w.takesValue(sub, a) {
				i++
			}
			continue
		}
		if eq {
			return v
		}
		if i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// run runs c in the workspace as the comment at the top of this file says;
// refused is a flag the document shows being refused. It returns why c
// could not run here ("" when it ran as it should).
func (w *workspace) run(t *testing.T, c cmdlines.Command, refused string) string {
	t.Helper()
	sub, args := c.Args[0], c.Args[1:]
	exec1 := func(args ...string) (string, int, error) {
		cmd := exec.Command(w.bin, args...)
		cmd.Dir = w.dir
		cmd.Env = append(os.Environ(), "HOME=/home/u", "NO_COLOR=1")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode(), nil
		}
		return string(out), 0, err
	}
	if refused != "" {
		out, code, err := exec1(c.Args...)
		if err != nil || code != 2 || !strings.Contains(out, "unknown flag "+refused) {
			return fmt.Sprintf("shown refusing %s, it exited %d (want 2, saying unknown flag %s): %v\n%s", refused, code, refused, err, out)
		}
		return ""
	}
	for _, a := range args {
		if filepath.IsAbs(a) {
			return "it names an absolute path, " + a + ", another machine's"
		}
	}
	ok := []int{0}
	switch sub {
	case "validate", "plan", "help", "version", "report", "noise", "codify", "merge":
	case "diff":
		ok = []int{0, 1, 4} // a comparison: unchanged, regressed, undecided
	case "sim":
		if len(args) > 1 && args[0] == "serve" {
			runDocSim(t, w.bin, c, c.Args)
			return ""
		}
		return "a simulator line without serve MODEL"
	case "run":
		return w.runAsPlan(t, c, exec1)
	default:
		return "slogate " + sub + " does not run here"
	}
	out, code, err := exec1(c.Args...)
	if err != nil || !slices.Contains(ok, code) {
		return fmt.Sprintf("exit %d (want %v): %v\n%s", code, ok, err, out)
	}
	return ""
}

// runAsPlan runs a documented `slogate run` as `slogate plan` of the same
// specs with its -var, -server, -run and -duration; checks that its
// -baseline and -resume name files the workspace holds; and puts
// resultsFixture where the run would write its results.json.
func (w *workspace) runAsPlan(t *testing.T, c cmdlines.Command, exec1 func(...string) (string, int, error)) string {
	t.Helper()
	args := c.Args[1:]
	for _, f := range []string{"baseline", "resume"} {
		if p := w.flagValue("run", args, f); p != "" && !w.wrote(p) {
			return fmt.Sprintf("-%s %s: no command before it writes it, and it is neither in the repository nor given", f, p)
		}
	}
	if w.flagValue("run", args, "resume") != "" {
		return ""
	}
	if w.flagValue("run", args, "endpoint") != "" {
		return "it measures a server already running (-endpoint)"
	}
	plan := []string{"plan", "-format", "json"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			continue
		}
		n, _, eq := strings.Cut(strings.TrimLeft(a, "-"), "=")
		keep := slices.Contains([]string{"var", "server", "run", "duration"}, n)
		if keep {
			plan = append(plan, a)
		}
		if !eq && w.takesValue("run", a) && i+1 < len(args) {
			i++
			if keep {
				plan = append(plan, args[i])
			}
		}
	}
	plan = append(plan, w.operands("run", args)...)
	out, code, err := exec1(plan...)
	if err != nil || code != 0 {
		return fmt.Sprintf("slogate %s exited %d: %v\n%s", strings.Join(plan, " "), code, err, out)
	}
	var doc struct {
		Servers []struct{ Name, Spec string }
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &doc); err != nil {
		return fmt.Sprintf("slogate %s: %v\n%s", strings.Join(plan, " "), err, out)
	}
	outDir := w.flagValue("run", args, "out")
	var keys []vocab.RunKey
	for _, s := range doc.Servers {
		keys = append(keys, vocab.RunKey{Spec: s.Spec, Server: s.Name})
	}
	names := vocab.RunNames(keys)
	for i, s := range doc.Servers {
		dir := filepath.Join("slogate-out", vocab.SpecName(s.Spec), s.Name, "latest")
		if outDir != "" {
			dir = outDir
			if len(doc.Servers) > 1 {
				dir = filepath.Join(outDir, filepath.FromSlash(names[i]))
			}
		}
		w.putResults(t, filepath.Join(dir, "results.json"))
	}
	return ""
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
