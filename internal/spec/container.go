package spec

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// Container is a server's `container { … }` block: the server runs from an
// image through a container runtime instead of as a bare command
// (docs/spec.md#container). The model and the engine's flags follow the
// image (and Command) on the runtime's command line.
type Container struct {
	Runtime string // "docker" (default) or "podman"
	Image   string
	// GPUs is docker's --gpus value ("all", "2", "device=0,1"); podman
	// gets the same GPUs as CDI devices (no count); "" passes none.
	GPUs    string
	Volumes []string // -v SRC:DST[:OPTS], in order
	ShmSize string   // --shm-size, e.g. "16g"; "" leaves the runtime's default
	IPC     string   // --ipc, e.g. "host"; "" leaves the runtime's default
	// Args are extra runtime flags, placed after slogate's own and before
	// the image.
	Args []string
	// Command are the words after the image, before the model: what the
	// container runs (SGLang's image has no entrypoint: ["sglang",
	// "serve"]). nil leaves the engine's default (Server.ContainerCommand).
	Command []string
	// NamePrefix starts the container's name: PREFIX-<run-id>-<server>
	// (default "slogate").
	NamePrefix string

	DeclRange hcl.Range
}

// Container runtimes slogate knows how to drive.
const (
	RuntimeDocker = "docker"
	RuntimePodman = "podman"
)

// defaultContainerNamePrefix starts every container name unless
// name_prefix says otherwise.
const defaultContainerNamePrefix = "slogate"

// Container labels: every container slogate starts carries both, so that a
// later run can find the ones an earlier run left behind (docs/spec.md#container).
const (
	LabelRun    = "slogate.run"
	labelServer = "slogate.server"
)

// runIDPlaceholder stands for the run's id in a container argv rendered
// before any run (`slogate plan`, results.json), so that the rendering is
// the same from run to run.
const runIDPlaceholder = "<run-id>"

var containerSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "runtime"},
		{Name: "image", Required: true},
		{Name: "gpus"},
		{Name: "volumes"},
		{Name: "shm_size"},
		{Name: "ipc"},
		{Name: "args"},
		{Name: "command"},
		{Name: "name_prefix"},
	},
}

var (
	// gpusValue is what docker's --gpus takes: all, a count, or device=IDS
	// (indexes or GPU UUIDs, comma-separated).
	gpusValue = regexp.MustCompile(`^(all|[1-9][0-9]*|device=[A-Za-z0-9-]+(,[A-Za-z0-9-]+)*)$`)
	// shmSizeValue is a size as the runtimes take it: a number and an
	// optional unit b, k, m or g.
	shmSizeValue = regexp.MustCompile(`^[1-9][0-9]*[bkmgBKMG]?$`)
	// containerName is what docker and podman accept as a container name.
	containerName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)
	// ipcMode is one of the runtimes' IPC modes.
	ipcMode = regexp.MustCompile(`^(host|private|shareable|none|container:[a-zA-Z0-9][a-zA-Z0-9_.-]*)$`)
)

// ownedRuntimeFlags are runtime flags slogate sets itself: a container
// launched with them in args could not be named, stopped or found.
var ownedRuntimeFlags = map[string]string{
	"--name":   "slogate names the container PREFIX-<run-id>-<server>; set name_prefix instead",
	"-d":       "slogate reads the container's logs from the attached runtime client; a detached run would end at once",
	"--detach": "slogate reads the container's logs from the attached runtime client; a detached run would end at once",
}

// decodeContainer decodes a server's `container` block, applying defaults.
func (l *loader) decodeContainer(blk *hcl.Block) (*Container, hcl.Diagnostics) {
	c := &Container{Runtime: RuntimeDocker, NamePrefix: defaultContainerNamePrefix, DeclRange: blk.DefRange}
	content, diags := blk.Body.Content(containerSchema)
	at := content.Attributes
	add := func(d ...*hcl.Diagnostic) { diags = append(diags, d...) }
	// check sets *dst to attribute name's string when ok accepts it.
	check := func(dst *string, name string, ok func(string) bool, summary, format string) {
		v, set, d := l.str(at, name)
		add(d...)
		if !set {
			return
		}
		if !ok(v) {
			add(invalid(summary, at[name].Expr.Range(), format, v))
			return
		}
		*dst = v
	}
	check(&c.Runtime, "runtime", func(v string) bool { return v == RuntimeDocker || v == RuntimePodman },
		"Invalid container runtime", "runtime is \"docker\" or \"podman\", not %q"+suggest(at, "runtime", []string{RuntimeDocker, RuntimePodman}, l)+".")
	check(&c.Image, "image", func(v string) bool { return strings.TrimSpace(v) != "" && !strings.ContainsAny(v, " \t\n") },
		"Invalid image", "image names the server's image, such as \"vllm/vllm-openai:v0.11.0\"; got %q.")
	check(&c.GPUs, "gpus", gpusValue.MatchString,
		"Invalid gpus", "gpus is \"all\", a number of GPUs such as \"2\", or \"device=0,1\" (indexes or UUIDs); got %q.")
	if c.Runtime == RuntimePodman && c.GPUs != "" && c.GPUs != "all" && !strings.HasPrefix(c.GPUs, "device=") {
		add(invalid("Invalid gpus", at["gpus"].Expr.Range(),
			"podman is given GPUs as CDI devices (--device nvidia.com/gpu=0), which name GPUs and cannot count them: write \"all\" or \"device=0,1\" instead of %q.", c.GPUs))
	}
	check(&c.ShmSize, "shm_size", shmSizeValue.MatchString,
		"Invalid shm_size", "shm_size is a size such as \"16g\" or \"512m\" (units b, k, m, g); got %q.")
	check(&c.IPC, "ipc", ipcMode.MatchString,
		"Invalid ipc", "ipc is \"host\", \"private\", \"shareable\", \"none\" or \"container:NAME\"; got %q"+suggest(at, "ipc", []string{"host", "private", "shareable", "none"}, l)+".")
	check(&c.NamePrefix, "name_prefix", containerName.MatchString,
		"Invalid name_prefix", "name_prefix starts the container's name: letters, digits, '_', '.' and '-', beginning with a letter or digit; got %q.")

	var d hcl.Diagnostics
	c.Volumes, d = l.stringList(at, "volumes")
	add(d...)
	for _, v := range c.Volumes {
		if src, dst, ok := strings.Cut(v, ":"); !ok || src == "" || !strings.HasPrefix(dst, "/") {
			add(invalid("Invalid volume", at["volumes"].Expr.Range(),
				"Each volume is \"SOURCE:/path/in/container[:OPTIONS]\", such as \"/data/hf:/root/.cache/huggingface:ro\"; got %q.", v))
		}
	}
	c.Args, d = l.stringList(at, "args")
	add(d...)
	if a, ok := at["command"]; ok {
		c.Command, d = l.stringList(at, "command")
		add(d...)
		if c.Command == nil && !d.HasErrors() {
			c.Command = []string{} // command = []: the image's entrypoint alone
		}
		for _, w := range c.Command {
			if strings.TrimSpace(w) == "" {
				add(invalid("Invalid command", a.Expr.Range(), "command lists the words the container runs, such as [\"sglang\", \"serve\"]; a word is empty."))
				break
			}
		}
	}
	for _, a := range c.Args {
		flag, _, _ := strings.Cut(a, "=")
		if why, owned := ownedRuntimeFlags[flag]; owned {
			add(invalid("Conflicting container argument", at["args"].Expr.Range(), "args must not set %s: %s.", flag, why))
		}
	}
	return c, diags
}

// ValidContainerNamePrefix reports whether prefix may start a container's
// name, as name_prefix does (slogate clean -name-prefix checks it the same
// way).
func ValidContainerNamePrefix(prefix string) bool { return containerName.MatchString(prefix) }

// suggest returns ` (did you mean "X"?)` when the attribute's value is a
// likely typo of one of candidates, else "".
func suggest(at hcl.Attributes, name string, candidates []string, l *loader) string {
	v, ok, _ := l.str(at, name)
	if !ok {
		return ""
	}
	if s := nearest(v, candidates); s != "" {
		return fmt.Sprintf(` (did you mean %q?)`, s)
	}
	return ""
}

// containerNameFor is the container's name for one run of server: the
// prefix, the run id and the server's name, each character docker refuses
// in a name replaced by '-'.
func containerNameFor(prefix, runID, server string) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-') {
				return r
			}
			return '-'
		}, s)
	}
	if runID != runIDPlaceholder {
		runID = clean(runID)
	}
	return prefix + "-" + runID + "-" + clean(server)
}
