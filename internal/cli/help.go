package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/spec"
)

// ExitCode is one of slogate's exit codes and what it means, in a few
// words.
type ExitCode struct {
	Code    int
	Meaning string
}

// ExitCodes are every exit code a command ends with, in order: the table
// `slogate help` prints and README's "Exit codes" table is checked
// against (cmd/slogate's help tests).
var ExitCodes = []ExitCode{
	{0, "pass"},
	{1, "an assertion or baseline comparison failed"},
	{2, "usage error or invalid spec"},
	{3, "infrastructure error"},
	{4, "inconclusive (a baseline comparison the data cannot decide; nothing failed)"},
	{130, "interrupted by SIGINT"},
	{143, "interrupted by SIGTERM"},
}

// Precedence is which exit code wins when several apply, the worst first:
// a regression anywhere outweighs an inconclusive comparison.
var Precedence = []int{3, 2, 1, 4, 0}

// PrecedenceText is Precedence as the help and README write it:
// "3 > 2 > 1 > 4 > 0".
func PrecedenceText() string {
	parts := make([]string, len(Precedence))
	for i, c := range Precedence {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, " > ")
}

// exitMeaning is code's meaning in ExitCodes.
func exitMeaning(code int) string {
	for _, e := range ExitCodes {
		if e.Code == code {
			return e.Meaning
		}
	}
	panic("cli: exit code " + strconv.Itoa(code) + " is not in ExitCodes")
}

// ExitCodesText is the "Exit codes: 0 pass, 2 usage error or invalid
// spec." line of codes, from ExitCodes.
func ExitCodesText(codes []int) string {
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%d %s", c, exitMeaning(c))
	}
	return "Exit codes: " + strings.Join(parts, ", ") + "."
}

// CommandDoc is one command's help, in one place: the summary of the
// command list, its synopses (the usage line is the first; README's
// Commands block has one line per synopsis), what it does, the exit codes
// it ends with, and examples. `slogate help`, `slogate help CMD`, `CMD
// -h`, README and docs are checked against it (cmd/slogate's help tests).
type CommandDoc struct {
	Name    string
	Summary string
	// Synopses follow "slogate NAME ": "[flags] SPEC...".
	Synopses []string
	Doc      []string
	// Exits are the codes of ExitCodes the command ends with.
	Exits []int
	// Examples are two or three command lines, each optionally followed
	// by "  # what it does"; every spec path they name exists and is valid.
	Examples []string
}

// Commands are slogate's commands, in the order the help lists them.
var Commands = []CommandDoc{
	{
		Name: "run", Summary: "boot, measure, assert, report: the main job",
		Synopses: []string{"[flags] SPEC..."},
		Doc:      []string{"Boot each server of each spec, measure prefill and sustained decode, check the assertions, report."},
		Exits:    []int{0, 1, 2, 3, 4, 130, 143},
		Examples: []string{
			"slogate run -sim specs/demo.hcl                        # on the built-in simulator",
			"slogate run specs/qwen3.5-4b-h200-dflash.hcl -run 'ctx=8K/' -duration 5s   # a quick look at one context",
			"go tool gotestsum --junitfile j.xml --raw-command -- slogate run -json specs/demo.hcl",
		},
	},
	{
		Name: "validate", Summary: "check specs (every *.hcl below a folder); print diagnostics",
		Synopses: []string{"[-format text|json] [-json] [-var N=V] SPEC|DIR..."},
		Doc: []string{"Parse and check spec files, and every *.hcl file below each folder given; print the diagnostics.",
			"-json prints the document `terraform validate -json` prints."},
		Exits: []int{0, 2},
		Examples: []string{
			"slogate validate specs/                # every spec in the folder",
			"slogate validate -var api_key=x specs/demo.hcl",
			"slogate validate -json specs/ | jq '.diagnostics[].range'",
		},
	},
	{
		Name: "plan", Summary: "launch argv/env, cells, estimated duration; matrix: one CI job per server",
		Synopses: []string{"[-format text|json|matrix] [-o FILE] [-run REGEX] [-duration D] [-server NAME] [-var N=V] SPEC..."},
		Doc: []string{"Print each server's launch command, the cells to measure in order, the cells each assertion needs, and an estimated duration.",
			"-format matrix prints a JSON list with one {spec, server, job, dir, estimated_s, gpus} entry per server of each spec, for a CI matrix (docs/ci.md).",
			"-duration, -server, -run and -var are run's flags: the plan is that of the run given them."},
		Exits: []int{0, 2},
		Examples: []string{
			"slogate plan specs/demo.hcl -duration 2s                # how long `slogate run -duration 2s` takes",
			"slogate plan specs/demo.hcl -run 'assert/decode_8k_16'  # what one assertion needs",
			"slogate plan -format matrix specs/*.hcl                  # one CI job per server of each spec, named <spec>/<server>",
		},
	},
	{
		Name: "diff", Summary: "compare two runs cell by cell",
		Synopses: []string{"[-format text|md|json] [-tolerance PCT] [-alpha P] [-inconclusive fail|pass] [-metric LIST] [-allow-settings-change] A.json B.json"},
		Doc: []string{"Compare two results files cell by cell: A is the reference, B the new run.",
			"Exit 0 when every cell is within the tolerance, 1 when one regressed beyond it or was lost (measured",
			"in A, over capacity or missing in B), 2 on bad usage or runs measured with different settings, 3 when",
			"a cell A measured could not be measured in B, 4 when a cell was inconclusive (its interval straddles",
			"the tolerance: measure more, or accept the risk with -inconclusive pass)."},
		Exits: []int{0, 1, 2, 3, 4},
		Examples: []string{
			"slogate diff old/qwen/results.json slogate-out/demo/qwen/latest/results.json",
			"slogate diff A.json B.json -tolerance 10% -alpha 0.01",
			"slogate diff A.json B.json -inconclusive pass          # accept what the noise cannot decide",
		},
	},
	{
		Name: "bisect", Summary: "the first build where each regressed cell regressed, between a good and a bad build",
		Synopses: []string{"-good G -bad B -candidates FILE [-var-name NAME] [-var N=V] [-out DIR] [-resume] [-max-gpu-time D] [-sim] [-duration D] [-tolerance PCT] [-alpha P] [-metric METRICS] [-stream-timeout D] SPEC"},
		Doc: []string{"Bisect the builds listed in FILE (one a line, in order, holding G and B) for the first one where a cell regressed:",
			"each build replaces the server's container.image, or with -var-name sets that spec variable (a launched server).",
			"G and B are measured first; only the cells B regressed against G are bisected, with the spec's measure settings",
			"and repeat = \"auto\", each step compared with both by the gate's rule (docs/method.md#bisect). A build that does",
			"not start is skipped; an inconclusive step is measured again with the most repeats, never guessed. Prints",
			"`first bad: BUILD` with the evidence; bisect.jsonl in DIR has a line per build measured, and -resume continues from it.",
			"Exit 0 found, 1 when G is not better than B on any cell (the comparison printed), 2 bad input (FILE without G or B),",
			"3 an error (G or B did not start, an unknown image), 4 undecided (-max-gpu-time ran out, or only skipped builds are left)."},
		Exits: []int{0, 1, 2, 3, 4, 130, 143},
		Examples: []string{
			"slogate bisect -good vllm/vllm-openai:v0.10.0 -bad vllm/vllm-openai:v0.11.0 -candidates examples/bisect/images.txt examples/bisect/vllm.hcl",
			"slogate bisect -var-name build -good b00 -bad b15 -candidates builds.txt -sim -out bisect examples/bisect/launched.hcl",
			"slogate bisect -resume -out bisect -good b00 -bad b15 -candidates builds.txt -var-name build -sim examples/bisect/launched.hcl",
		},
	},
	{
		Name: "interleave", Summary: "two builds of one server compared in one run, booted alternately in randomized blocks",
		Synopses: []string{"-a A -b B [-var-name NAME] [-var N=V] [-blocks BLOCKS] [-max-blocks BLOCKS] [-seed SEED] [-out DIR] [-sim] [-duration D] [-tolerance PCT] [-alpha P] [-inconclusive POLICY] [-stream-timeout D] SPEC"},
		Doc: []string{"Compare build B with build A in one run: each block boots A once and B once, in an order drawn from -seed, each",
			"boot measuring the spec's decode and prefill cells measure.repeat times (2 with repeat = \"auto\") and its traffic cells once; every cell is",
			"decided on the differences of the same block, so a machine whose load changes during the run moves both sides",
			"alike (docs/method.md#interleaved). A build replaces the server's container.image, or with -var-name sets that spec",
			"variable; builds whose specs differ in anything else measured (window, repeat, cells, …) are refused before any boot.",
			"repeat = \"auto\" adds blocks, up to -max-blocks, until every cell is decided. Each boot's results are a folder of",
			"DIR (a/block-01, b/block-01, …); interleave.json holds the comparison. Searches and correctness are not interleaved.",
			"Exit 0 every cell within the tolerance, 1 one regressed, 2 bad input, 3 a boot or cell not measured, 4 one undecided."},
		Exits: []int{0, 1, 2, 3, 4, 130, 143},
		Examples: []string{
			"slogate interleave -var-name build -a v1 -b v2 -sim -out ab examples/bisect/launched.hcl",
			"slogate interleave -a vllm/vllm-openai:v0.10.0 -b vllm/vllm-openai:v0.11.0 examples/bisect/vllm.hcl",
		},
	},
	{
		Name: "report", Summary: "re-render a saved run (md by default)",
		Synopses: []string{"[-format md|html|json|csv] [-o FILE] RESULTS.json"},
		Doc: []string{"Re-render a saved run (the results.json in a `slogate run` -out folder) as Markdown (the default), HTML, JSON or CSV (one row per cell and metric: docs/ci.md#exports).",
			"Markdown written with -o FILE gets each rate search's chart (search-NAME.svg) beside FILE, as the run writes it."},
		Exits: []int{0, 2},
		Examples: []string{
			"slogate report slogate-out/demo/qwen/latest/results.json",
			"slogate report -format html -o qwen.html slogate-out/demo/qwen/latest/results.json",
			"slogate report -format csv -o qwen.csv slogate-out/demo/qwen/latest/results.json",
		},
	},
	{
		Name: "noise", Summary: "per cell: measured noise, the smallest change it lets a gate catch, the repeats a tolerance needs",
		Synopses: []string{"[-tolerance PCT] [-alpha P] [-repeats N] RESULTS.json"},
		Doc: []string{"Per measured cell and gated metric (total_tps, ttft_ms, tbt_ms; prefill tps): the run-to-run noise (the coefficient",
			"of variation over its repeats), the smallest change N repeats a side would catch at -alpha with power 0.9, and the repeats",
			"a side the -tolerance needs; with measure.boots, the within-boot and between-boot spreads (Kalibera and Jones) and the",
			"repeats a boot × boots they suggest. A cell measured once has no noise to show: measure it with repeat ≥ 2."},
		Exits: []int{0, 2},
		Examples: []string{
			"slogate noise slogate-out/demo/qwen/latest/results.json",
			"slogate noise -tolerance 3% -repeats 10 results.json",
		},
	},
	{
		Name: "merge", Summary: "combine the results folders of several runs into one report; exits with the worst",
		Synopses: []string{"-out DIR OUT..."},
		Doc: []string{"Combine results folders (each the -out of a `slogate run`, one server each) into DIR: one results.json (schema slogate/merged/v1),",
			"report.md and report.html with a section per server, junit.xml, DIR/<server>/results.json, and the GitHub step summary.",
			"Verdicts are taken as recorded. Exit code: the worst of the runs' (" + PrecedenceText() + "), as `slogate run` would have exited."},
		Exits: []int{0, 1, 2, 3, 4},
		Examples: []string{
			"slogate merge -out merged results/qwen results/glm",
			"slogate merge results/* -out merged   # every job's folder of a CI matrix",
		},
	},
	{
		Name: "codify", Summary: "HCL expect/assert blocks from a run",
		Synopses: []string{"[-margin PCT] [-force] [-o FILE] RESULTS.json"},
		Doc: []string{"Print HCL expect/assert blocks from a measured run, to paste into the spec that measured it.",
			"The expect rows have one value per concurrency level found in the results.",
			"A run that did not finish or has errored cells is refused unless -force."},
		Exits: []int{0, 2},
		Examples: []string{
			"slogate codify slogate-out/demo/qwen/latest/results.json >> specs/demo.hcl",
			"slogate codify -margin 5% -o slo.hcl slogate-out/demo/qwen/latest/results.json",
		},
	},
	{
		Name: "clean", Summary: "remove the containers a killed run left behind",
		Synopses: []string{"[-runtime docker|podman] [-name-prefix P]"},
		Doc: []string{"Remove the containers slogate started that are still there (labelled " + spec.LabelRun + "),",
			"as after slogate and the runtime's client were killed; then check that they are gone.",
			"Without -name-prefix, do not run it while another slogate run uses the same runtime: its",
			"container would go too. With it, only containers named PREFIX-… go (the container block's",
			"name_prefix): give each CI job a prefix of its own and clean only its containers."},
		Exits:    []int{0, 2, 3},
		Examples: []string{"slogate clean", "slogate clean -runtime podman", "slogate clean -runtime podman -name-prefix ci-4711"},
	},
	{
		// sim prints its own help (vllm serve's flags and the --sim-* ones).
		Name: "sim", Summary: "the built-in simulator",
		Synopses: []string{"serve MODEL [vLLM flags] [--sim-* flags]", "--engine sglang serve MODEL [SGLang flags] [--sim-*]"},
		Exits:    []int{0, 1, 2},
	},
	{
		Name: "version", Summary: "version, commit and Go version",
		Doc: []string{"Print slogate's version, the commit it was built from and the Go version:",
			"stamped by make, or read from the build info after go install."},
		Exits:    []int{0},
		Examples: []string{"slogate version", "slogate --version"},
	},
}

// LookupCommand is the doc of the command called name; ok is false for
// another name.
func LookupCommand(name string) (CommandDoc, bool) {
	for _, c := range Commands {
		if c.Name == name {
			return c, true
		}
	}
	return CommandDoc{}, false
}

// Summary is the command list's line for command name ("" for none).
func Summary(name string) string {
	c, _ := LookupCommand(name)
	return c.Summary
}

// HelpFooter is the top-level help's exit-code table and precedence, from
// ExitCodes and Precedence.
func HelpFooter() []string {
	out := []string{"Exit codes:"}
	for _, e := range ExitCodes {
		out = append(out, fmt.Sprintf("  %-3d  %s", e.Code, e.Meaning))
	}
	return append(out, "When several apply, the worst wins: "+PrecedenceText()+" (130 and 143 end the run where it is).")
}

// help is command name's Help for its flag set: the first synopsis as the
// usage line, what it does, its exit codes, the examples.
func (c CommandDoc) help() Help {
	usage := "slogate " + c.Name
	if len(c.Synopses) > 0 {
		usage += " " + c.Synopses[0]
	}
	return Help{Usage: usage, Doc: append(append([]string(nil), c.Doc...), ExitCodesText(c.Exits)), Examples: c.Examples}
}

// CommandFlagSet is NewFlagSet for the slogate command name ("run"), with
// its help from Commands; a command without one is a programming error.
func CommandFlagSet(name string) *FlagSet {
	c, ok := LookupCommand(name)
	if !ok {
		panic("cli: no help for command " + name)
	}
	return NewFlagSet(name, c.help())
}
