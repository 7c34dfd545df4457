package spec

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/shellcmd"
)

// TestContainerArgv renders container servers and checks every word of the
// runtime command, the environment handed to it, and that the API key
// appears in neither the argv nor anything printed.
func TestContainerArgv(t *testing.T) {
	const key = "sk-container-planted-42"
	tests := []struct {
		name     string
		label    string // the server's name; "" is "qwen"
		server   string // the server block's body
		runID    string
		wantArgv []string
		wantEnv  map[string]string // LaunchEnv
		wantShow map[string]string // RedactedEnv
	}{
		{
			name: "defaults",
			server: `model = "Qwen/Qwen3.5-4B"
  container { image = "vllm/vllm-openai:v0.11.0" }`,
			runID: "abc123",
			wantArgv: []string{"docker", "run", "--rm", "--name", "slogate-abc123-qwen",
				"--label", "slogate.run=abc123", "--label", "slogate.server=qwen", "-p", "8000:8000",
				"vllm/vllm-openai:v0.11.0", "Qwen/Qwen3.5-4B", "--host", "0.0.0.0", "--port", "8000"},
		},
		{
			name: "every attribute, env and api key by name",
			server: `model             = "Qwen/Qwen3.5-4B"
  served_model_name = "qwen"
  port              = 8123
  max_model_len     = "32K"
  api_key           = "` + key + `"
  env               = { HF_TOKEN = "hf_secret", VLLM_USE_V2_MODEL_RUNNER = "1" }
  args              = ["--enforce-eager"]
  container {
    runtime     = "podman"
    image       = "vllm/vllm-openai:nightly"
    gpus        = "device=0,1"
    volumes     = ["/data/hf:/root/.cache/huggingface", "/tmp:/tmp:ro"]
    shm_size    = "16g"
    ipc         = "host"
    args        = ["--pull=never", "--network", "slirp4netns"]
    name_prefix = "gate"
  }`,
			runID: "r1",
			wantArgv: []string{"podman", "run", "--rm", "--name", "gate-r1-qwen",
				"--label", "slogate.run=r1", "--label", "slogate.server=qwen", "-p", "8123:8123",
				"--device", "nvidia.com/gpu=0", "--device", "nvidia.com/gpu=1", "--ipc", "host", "--shm-size", "16g",
				"-v", "/data/hf:/root/.cache/huggingface", "-v", "/tmp:/tmp:ro",
				"-e", "HF_TOKEN", "-e", "VLLM_API_KEY", "-e", "VLLM_USE_V2_MODEL_RUNNER",
				"--pull=never", "--network", "slirp4netns",
				"vllm/vllm-openai:nightly", "Qwen/Qwen3.5-4B", "--served-model-name", "qwen", "--max-model-len", "32768",
				"--host", "0.0.0.0", "--port", "8123", "--enforce-eager"},
			wantEnv:  map[string]string{"HF_TOKEN": "hf_secret", "VLLM_API_KEY": key, "VLLM_USE_V2_MODEL_RUNNER": "1"},
			wantShow: map[string]string{"HF_TOKEN": shellcmd.Redacted, "VLLM_API_KEY": shellcmd.Redacted, "VLLM_USE_V2_MODEL_RUNNER": "1"},
		},
		{
			name: "docker takes a count of GPUs with --gpus",
			server: `model = "m"
  container {
    image = "img"
    gpus  = "2"
  }`,
			runID: "r1",
			wantArgv: []string{"docker", "run", "--rm", "--name", "slogate-r1-qwen",
				"--label", "slogate.run=r1", "--label", "slogate.server=qwen", "-p", "8000:8000",
				"--gpus", "2", "img", "m", "--host", "0.0.0.0", "--port", "8000"},
		},
		{
			name: "podman gets all GPUs as the CDI device nvidia.com/gpu=all, not --gpus (a no-op before podman 5)",
			server: `model = "m"
  container {
    runtime = "podman"
    image   = "img"
    gpus    = "all"
  }`,
			runID: "r1",
			wantArgv: []string{"podman", "run", "--rm", "--name", "slogate-r1-qwen",
				"--label", "slogate.run=r1", "--label", "slogate.server=qwen", "-p", "8000:8000",
				"--device", "nvidia.com/gpu=all", "img", "m", "--host", "0.0.0.0", "--port", "8000"},
		},
		{
			name: "a loopback host publishes on loopback only; odd server names are cleaned",
			server: `model = "m"
  host  = "127.0.0.1"
  container { image = "img" }`,
			label: "qwen 4b/tp2",
			runID: runIDPlaceholder,
			wantArgv: []string{"docker", "run", "--rm", "--name", "slogate-<run-id>-qwen-4b-tp2",
				"--label", "slogate.run=<run-id>", "--label", "slogate.server=qwen 4b/tp2", "-p", "127.0.0.1:8000:8000",
				"img", "m", "--host", "0.0.0.0", "--port", "8000"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			label := tt.label
			if label == "" {
				label = "qwen"
			}
			src := "server \"" + label + "\" {\n  " + tt.server + "\n}\n"
			s, diags := LoadSource("c.hcl", []byte(src), LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			srv := s.Servers[0]
			if diff := cmp.Diff(tt.wantArgv, srv.ContainerArgv(tt.runID)); diff != "" {
				t.Errorf("ContainerArgv (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantEnv, srv.LaunchEnv()); diff != "" {
				t.Errorf("LaunchEnv (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantShow, srv.RedactedEnv()); diff != "" {
				t.Errorf("RedactedEnv (-want +got):\n%s", diff)
			}
			placeholder := srv.ContainerArgv(runIDPlaceholder)
			if diff := cmp.Diff(placeholder, srv.RedactedArgv()); diff != "" {
				t.Errorf("RedactedArgv is not the run-independent container argv (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(placeholder, srv.Argv()); diff != "" {
				t.Errorf("Argv is not the run-independent container argv (-want +got):\n%s", diff)
			}
			shown := shellcmd.Line(srv.RedactedEnv(), srv.RedactedArgv())
			for _, w := range append(srv.ContainerArgv(tt.runID), shown) {
				if strings.Contains(w, key) || strings.Contains(w, "hf_secret") || w == "--api-key" {
					t.Errorf("a secret or --api-key is on the container's command line: %q", w)
				}
			}
		})
	}
}

// TestWithoutContainer checks that dropping the container block gives back
// the bare launch, API key flag included.
func TestWithoutContainer(t *testing.T) {
	src := `server "q" {
  model   = "m"
  api_key = "k1"
  container { image = "img" }
}`
	s, diags := LoadSource("c.hcl", []byte(src), LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	bare := s.Servers[0].WithoutContainer()
	want := []string{"vllm", "serve", "m", "--host", "0.0.0.0", "--port", "8000", "--api-key", "k1"}
	if diff := cmp.Diff(want, bare.Argv()); diff != "" {
		t.Errorf("Argv (-want +got):\n%s", diff)
	}
	if s.Servers[0].Container == nil || bare.ContainerArgv("x") != nil {
		t.Errorf("WithoutContainer changed the original or kept the block")
	}
}

// TestContainerDiagnosticDetail checks the words of the diagnostics a
// person acts on: the suggestion for a misspelt runtime, the accepted forms.
func TestContainerDiagnosticDetail(t *testing.T) {
	tests := []struct {
		name, attr, want string
	}{
		{name: "runtime typo suggests", attr: `runtime = "podmna"`, want: `not "podmna" (did you mean "podman"?)`},
		{name: "runtime far off has no suggestion", attr: `runtime = "containerd"`, want: `runtime is "docker" or "podman", not "containerd".`},
		{name: "gpus forms", attr: `gpus = "0,1"`, want: `"device=0,1"`},
		{name: "volume form", attr: `volumes = ["hf:relative"]`, want: `got "hf:relative"`},
		{name: "podman cannot count GPUs", attr: "gpus = \"2\"\n    runtime = \"podman\"",
			want: `podman is given GPUs as CDI devices (--device nvidia.com/gpu=0), which name GPUs and cannot count them: write "all" or "device=0,1" instead of "2".`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "server \"q\" {\n  model = \"m\"\n  container {\n    image = \"i\"\n    " + tt.attr + "\n  }\n}\n"
			_, diags := LoadSource("c.hcl", []byte(src), LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset})
			if len(diags) != 1 {
				t.Fatalf("want one diagnostic, got %v", diags)
			}
			if !strings.Contains(diags[0].Detail, tt.want) || diags[0].Subject == nil || diags[0].Subject.Start.Line != 5 {
				t.Errorf("diagnostic %q at %v does not say %q on line 5", diags[0].Detail, diags[0].Subject, tt.want)
			}
		})
	}
}
