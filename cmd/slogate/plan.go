package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/cli"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/plan"
	"github.com/slogate/slogate/result"
	"github.com/slogate/slogate/spec"
)

// planJSON is the document `slogate plan -format json` prints.
type planJSON struct {
	Servers []planServerJSON `json:"servers"`
}

// planServerJSON is one server's plan: its launch (API key redacted), the
// cells in measurement order, what each assertion reads, and the estimate.
type planServerJSON struct {
	Name       string              `json:"name"`
	Spec       string              `json:"spec"`
	Argv       []string            `json:"argv"`
	Env        map[string]string   `json:"env"`
	Command    string              `json:"command"` // argv and env as one shell line
	Cells      []result.CellRef    `json:"cells"`
	Assertions []planAssertionJSON `json:"assertions"`
	Estimated  int64               `json:"estimated_s"`
}

// planAssertionJSON is one assert or expect block and the cells it reads.
type planAssertionJSON struct {
	Name  string           `json:"name"`
	Kind  string           `json:"kind"` // "assert" or "expect"
	Test  string           `json:"test"` // full test name, as -run matches it
	Cells []result.CellRef `json:"cells"`
}

// matrixEntry is one element of `slogate plan -format matrix`: one server of
// one spec, a job of a CI matrix (docs/ci.md#fan-out-over-a-fleet).
type matrixEntry struct {
	Spec      string `json:"spec"`
	Server    string `json:"server"`
	Estimated int64  `json:"estimated_s"`
	// GPUs is plan.GPUs: tp × pp × dp, or labels.gpu_count when larger.
	GPUs int `json:"gpus"`
}

// cmdPlan is `slogate plan [-format text|json|matrix] [-var NAME=VALUE]...
// [-run REGEX] SPEC...`: per server, the launch command and env, the cells
// to measure in order, which assertion needs which cells, and an estimate of
// the measuring time (server start-up excluded). -format matrix prints only
// one {spec, server, estimated_s, gpus} entry per server, for a CI matrix.
func cmdPlan(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fls := cli.NewFlagSet("plan", stderr,
		"Usage: slogate plan [-format text|json|matrix] [-var NAME=VALUE]... [-run REGEX] SPEC...",
		"Print each server's launch command, the cells to measure in order, the cells each assertion needs, and an estimated duration.",
		"-format matrix prints a JSON list with one {spec, server, estimated_s, gpus} entry per server, for a CI matrix (docs/ci.md).")
	var vars spec.Vars
	fls.Var(&vars, "var", "set a spec variable, `NAME=VALUE` (repeatable)")
	format := fls.String("format", "text", "output `format`: text, json, or matrix (one {spec, server, estimated_s, gpus} per server, for a CI job matrix)")
	runFlag := fls.String("run", "", "keep only the cells and assertions whose test name matches `REGEX`")
	if err := fls.Parse(args); err != nil {
		return cli.FlagsError(err)
	}
	if *format != "text" && *format != "json" && *format != "matrix" {
		return exit.Usagef("plan: -format is text, json or matrix, not %q", *format)
	}
	var keep *regexp.Regexp
	if *runFlag != "" {
		re, err := regexp.Compile(*runFlag)
		if err != nil {
			return exit.Usagef("plan: -run: %v", err)
		}
		keep = re
	}
	if fls.NArg() == 0 {
		fls.Usage()
		return exit.Usagef("plan: no SPEC given")
	}
	specs, err := cli.LoadSpecs(stderr, fls.Args(), vars)
	if err != nil {
		return err
	}
	if *format == "matrix" {
		return writeMatrix(stdout, specs, keep)
	}
	doc := planJSON{Servers: []planServerJSON{}}
	for _, sp := range specs {
		for _, srv := range sp.Servers {
			doc.Servers = append(doc.Servers, serverPlan(sp, srv, plan.New(sp, srv, keep)))
		}
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return exit.With(exit.Infra, enc.Encode(doc))
	}
	for i, s := range doc.Servers {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		writePlanText(stdout, s)
	}
	return nil
}

// writeMatrix prints the CI matrix of specs: one entry per server, compact
// JSON on one line, so a CI step can put it in an output variable as is.
// Two servers of the same name are a usage error: their jobs would write
// the same results folder and `slogate merge` refuses them.
func writeMatrix(w io.Writer, specs []*spec.Spec, keep *regexp.Regexp) error {
	entries := []matrixEntry{}
	seen := map[string]string{} // server name → spec
	for _, sp := range specs {
		for _, srv := range sp.Servers {
			if prev, dup := seen[srv.Name]; dup {
				return exit.Usagef("plan: server %q is defined by both %s and %s: the servers of a matrix need unique names (they name its jobs and results folders)", srv.Name, prev, sp.Filename)
			}
			seen[srv.Name] = sp.Filename
			entries = append(entries, matrixEntry{
				Spec:      sp.Filename,
				Server:    srv.Name,
				Estimated: int64(math.Round(plan.New(sp, srv, keep).Estimated.Seconds())),
				GPUs:      plan.GPUs(srv),
			})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return exit.With(exit.Infra, enc.Encode(entries))
}

// serverPlan is one server's plan in the form -format json prints.
func serverPlan(sp *spec.Spec, srv *spec.Server, p *plan.Plan) planServerJSON {
	env := srv.RedactedEnv()
	if env == nil {
		env = map[string]string{}
	}
	out := planServerJSON{
		Name:       srv.Name,
		Spec:       sp.Filename,
		Argv:       srv.RedactedArgv(),
		Env:        env,
		Command:    spec.ShellCommand(env, srv.RedactedArgv()),
		Cells:      p.Cells(),
		Assertions: []planAssertionJSON{},
		Estimated:  int64(math.Round(p.Estimated.Seconds())),
	}
	if out.Cells == nil {
		out.Cells = []result.CellRef{}
	}
	for _, a := range p.Asserts {
		out.Assertions = append(out.Assertions, planAssertionJSON{
			Name: a.Name, Kind: "assert", Test: result.TestID{Server: srv.Name, Kind: result.KindAssert, Block: a.Name}.Name(), Cells: nonNil(a.Cells),
		})
	}
	for _, e := range p.Expects {
		out.Assertions = append(out.Assertions, planAssertionJSON{
			Name: e.Name, Kind: "expect", Test: result.TestID{Server: srv.Name, Kind: result.KindExpect, Block: e.Name}.Name(), Cells: nonNil(plan.ExpectCells(sp, e)),
		})
	}
	return out
}

func nonNil(c []result.CellRef) []result.CellRef {
	if c == nil {
		return []result.CellRef{}
	}
	return c
}

// writePlanText prints one server's plan for a person.
func writePlanText(w io.Writer, s planServerJSON) {
	fmt.Fprintf(w, "server %s (%s)\n", s.Name, s.Spec)
	fmt.Fprintf(w, "  launch: %s\n", s.Command)
	if len(s.Env) > 0 {
		fmt.Fprintf(w, "  env:   ")
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			fmt.Fprintf(w, " %s", spec.ShellQuote(k+"="+s.Env[k]))
		}
		fmt.Fprintln(w)
	}
	est := time.Duration(s.Estimated) * time.Second
	fmt.Fprintf(w, "  cells: %d, in order:\n", len(s.Cells))
	for _, c := range s.Cells {
		fmt.Fprintf(w, "    %s\n", c.TestName(s.Name))
	}
	if len(s.Assertions) > 0 {
		fmt.Fprintln(w, "  assertions:")
		for _, a := range s.Assertions {
			fmt.Fprintf(w, "    %s  needs %s\n", a.Test, cellSummary(a.Cells))
		}
	}
	fmt.Fprintf(w, "  estimated: %s (measurements only; server start-up not included)\n", est)
}

// cellSummary names up to four cells, else counts them.
func cellSummary(cells []result.CellRef) string {
	switch {
	case len(cells) == 0:
		return "no cells (reads the server only)"
	case len(cells) <= 4:
		names := make([]string, len(cells))
		for i, c := range cells {
			names[i] = c.Name()
		}
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%d cells (%s … %s)", len(cells), cells[0].Name(), cells[len(cells)-1].Name())
}
