package cli

import "github.com/slogate/slogate/internal/spec"

// commandHelp is what `slogate help COMMAND` and `slogate COMMAND -h` print
// around each command's flags: usage, what it does, examples. The one-line
// summaries of the command list are beside the commands (cmd/slogate).
var commandHelp = map[string]Help{
	"run": {
		Usage: "slogate run [flags] SPEC...",
		Doc: []string{"Boot each server of each spec, measure prefill and sustained decode, check the assertions, report.",
			"Exit codes: 0 pass, 1 assertion or baseline failed, 2 usage or invalid spec, 3 infrastructure error,",
			"4 a baseline comparison inconclusive (nothing failed: measure more, or -inconclusive pass), 130/143 interrupted."},
		Examples: []string{
			"slogate run -sim specs/demo.hcl                        # on the built-in simulator",
			"slogate run specs/qwen.hcl -run 'ctx=8K/' -duration 5s # a quick look at one context",
			"go tool gotestsum --junitfile j.xml --raw-command -- slogate run -json specs/qwen.hcl",
		},
	},
	"validate": {
		Usage: "slogate validate [flags] SPEC|DIR...",
		Doc: []string{"Parse and check spec files, and every *.hcl file below each folder given; print the diagnostics.",
			"Exit 0 when all are valid, 2 otherwise. -json prints the document `terraform validate -json` prints."},
		Examples: []string{
			"slogate validate specs/                # every spec in the folder",
			"slogate validate -var api_key=x specs/qwen.hcl",
			"slogate validate -json specs/ | jq '.diagnostics[].range'",
		},
	},
	"plan": {
		Usage: "slogate plan [flags] SPEC...",
		Doc: []string{"Print each server's launch command, the cells to measure in order, the cells each assertion needs, and an estimated duration.",
			"-format matrix prints a JSON list with one {spec, server, job, dir, estimated_s, gpus} entry per server of each spec, for a CI matrix (docs/ci.md).",
			"-duration, -server, -run and -var are run's flags: the plan is that of the run given them."},
		Examples: []string{
			"slogate plan specs/demo.hcl -duration 2s                # how long `slogate run -duration 2s` takes",
			"slogate plan specs/demo.hcl -run 'assert/decode_8k_64'  # what one assertion needs",
			"slogate plan -format matrix specs/*.hcl                  # one CI job per server of each spec, named <spec>/<server>",
		},
	},
	"diff": {
		Usage: "slogate diff [flags] A.json B.json",
		Doc: []string{"Compare two results files cell by cell: A is the reference, B the new run.",
			"Exit 0 when every cell is within the tolerance, 1 when one regressed beyond it or was lost (measured",
			"in A, over capacity or missing in B), 2 on bad usage or runs measured with different settings, 3 when",
			"a cell A measured could not be measured in B, 4 when a cell was inconclusive (its interval straddles",
			"the tolerance: measure more, or accept the risk with -inconclusive pass)."},
		Examples: []string{
			"slogate diff old/qwen/results.json slogate-out/demo/qwen/latest/results.json",
			"slogate diff A.json B.json -tolerance 10% -alpha 0.01",
			"slogate diff A.json B.json -inconclusive pass          # accept what the noise cannot decide",
		},
	},
	"report": {
		Usage: "slogate report [flags] RESULTS.json",
		Doc:   []string{"Re-render a saved run (the results.json in a `slogate run` -out folder) as Markdown (the default), HTML, JSON or CSV (one row per cell and metric: docs/ci.md#exports)."},
		Examples: []string{
			"slogate report slogate-out/demo/qwen/latest/results.json",
			"slogate report -format html -o qwen.html slogate-out/demo/qwen/latest/results.json",
			"slogate report -format csv -o qwen.csv slogate-out/demo/qwen/latest/results.json",
		},
	},
	"noise": {
		Usage: "slogate noise [flags] RESULTS.json",
		Doc: []string{"Per measured cell and gated metric (total_tps, ttft_ms, tbt_ms; prefill tps): the run-to-run noise (the coefficient",
			"of variation over its repeats), the smallest change N repeats a side would catch at -alpha with power 0.9, and the repeats",
			"a side the -tolerance needs; with measure.boots, the within-boot and between-boot spreads (Kalibera and Jones) and the",
			"repeats a boot × boots they suggest. A cell measured once has no noise to show: measure it with repeat ≥ 2."},
		Examples: []string{
			"slogate noise slogate-out/demo/qwen/latest/results.json",
			"slogate noise -tolerance 3% -repeats 10 results.json",
		},
	},
	"merge": {
		Usage: "slogate merge -out DIR OUT...",
		Doc: []string{"Combine results folders (each the -out of a `slogate run`, one server each) into DIR: one results.json (schema slogate/merged/v1),",
			"report.md and report.html with a section per server, junit.xml, DIR/<server>/results.json, and the GitHub step summary.",
			"Verdicts are taken as recorded. Exit code: the worst of the runs' (3 > 2 > 1 > 0), as `slogate run` would have exited."},
		Examples: []string{
			"slogate merge -out merged results/qwen results/glm",
			"slogate merge results/* -out merged   # every job's folder of a CI matrix",
		},
	},
	"codify": {
		Usage: "slogate codify [flags] RESULTS.json",
		Doc: []string{"Print HCL expect/assert blocks from a measured run, to paste into the spec that measured it.",
			"The expect rows have one value per concurrency level found in the results.",
			"A run that did not finish or has errored cells is refused unless -force."},
		Examples: []string{
			"slogate codify slogate-out/demo/qwen/latest/results.json >> specs/demo.hcl",
			"slogate codify -margin 5% -o slo.hcl slogate-out/demo/qwen/latest/results.json",
		},
	},
	"clean": {
		Usage: "slogate clean [-runtime docker|podman] [-name-prefix PREFIX]",
		Doc: []string{"Remove the containers slogate started that are still there (labelled " + spec.LabelRun + "),",
			"as after slogate and the runtime's client were killed; then check that they are gone.",
			"Without -name-prefix, do not run it while another slogate run uses the same runtime: its",
			"container would go too. With it, only containers named PREFIX-… go (the container block's",
			"name_prefix): give each CI job a prefix of its own and clean only its containers."},
		Examples: []string{"slogate clean", "slogate clean -runtime podman", "slogate clean -runtime podman -name-prefix ci-4711"},
	},
	"version": {
		Usage: "slogate version",
		Doc: []string{"Print slogate's version, the commit it was built from and the Go version:",
			"stamped by make, or read from the build info after go install."},
		Examples: []string{"slogate version", "slogate --version"},
	},
}

// CommandFlagSet is NewFlagSet for the slogate command name ("run"), with
// its help from commandHelp; a command without help is a programming error.
func CommandFlagSet(name string) *FlagSet {
	h, ok := commandHelp[name]
	if !ok {
		panic("cli: no help for command " + name)
	}
	return NewFlagSet(name, h)
}
