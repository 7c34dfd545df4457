package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/shellcmd"
	"github.com/slogate/slogate/internal/spec/spectest"
)

func parseExpr(src string) (hcl.Expression, hcl.Diagnostics) {
	return hclsyntax.ParseExpression([]byte(src), "test.hcl", hcl.InitialPos)
}

// seeds maps each seed spec to its server; the launch command is in
// testdata/seeds/<name>.launch, copied verbatim from testdata/seeds/<name>.txt.
var seeds = map[string]string{
	"qwen3.5-4b-h200-dflash":     "qwen",
	"glm-5.3-flash-nvfp4-h200x2": "glm",
	"ling-3.0-flash-int4-h200x2": "ling",
}

// seedSpecPaths lists specs/*.hcl (with demo.hcl when all is set).
func seedSpecPaths(t *testing.T, all bool) []string {
	t.Helper()
	var paths []string
	for name := range seeds {
		paths = append(paths, filepath.Join("..", "..", "specs", name+".hcl"))
	}
	if all {
		more, _ := filepath.Glob("../../specs/*.hcl")
		for _, p := range more {
			if !strings.Contains(strings.Join(paths, " "), p) {
				paths = append(paths, p)
			}
		}
	}
	return paths
}

// TestSeedLaunch renders each seed spec and compares it, as a flag set,
// with the launch command of its seed report. HOME is "$HOME" so the
// rendered command reads like the seed's "$HOME/…".
func TestSeedLaunch(t *testing.T) {
	for name, server := range seeds {
		t.Run(name, func(t *testing.T) {
			line, err := os.ReadFile(filepath.Join("..", "..", "testdata", "seeds", name+".launch"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := spectest.ParseLine(string(line))
			if err != nil {
				t.Fatalf("seed launch: %v", err)
			}
			s, diags := Load(filepath.Join("..", "..", "specs", name+".hcl"), LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if len(s.Servers) != 1 || s.Servers[0].Name != server {
				t.Fatalf("servers = %v, want one named %q", s.Servers, server)
			}
			srv := s.Servers[0]
			// Through the shell line, as `slogate plan` prints it.
			got, err := spectest.ParseLine(shellcmd.Line(srv.Env, srv.RedactedArgv()))
			if err != nil {
				t.Fatalf("rendered launch: %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("launch (-seed +spec):\n%s", diff)
			}
			// And straight from the argv slice.
			direct, err := spectest.ParseArgv(srv.RedactedArgv())
			if err != nil {
				t.Fatal(err)
			}
			want.Env = map[string]string{}
			if diff := cmp.Diff(want, direct); diff != "" {
				t.Errorf("argv (-seed +spec):\n%s", diff)
			}
			// The real key reaches the server but never the printed argv.
			if srv.APIKey == "" || strings.Contains(strings.Join(srv.RedactedArgv(), " "), srv.APIKey) {
				t.Errorf("api key %q missing from Argv or leaked into RedactedArgv", srv.APIKey)
			}
			if !strings.Contains(strings.Join(srv.Argv(), " "), "--api-key "+srv.APIKey) {
				t.Errorf("Argv lacks the real api key")
			}
		})
	}
}

// TestAPIKeyVariable checks the seed specs' api_key variable: from
// VLLM_API_KEY when set, from -var, else the documented placeholder.
func TestAPIKeyVariable(t *testing.T) {
	path := filepath.Join("..", "..", "specs", "qwen3.5-4b-h200-dflash.hcl")
	tests := []struct {
		name string
		env  map[string]string
		vars map[string]string
		want string
	}{
		{name: "placeholder", want: "slogate-local-key"},
		{name: "from VLLM_API_KEY", env: map[string]string{"VLLM_API_KEY": "k1"}, want: "k1"},
		{name: "from -var", env: map[string]string{"VLLM_API_KEY": "k1"}, vars: map[string]string{"api_key": "k2"}, want: "k2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"HOME": "/home/u"}
			for k, v := range tt.env {
				env[k] = v
			}
			s, diags := Load(path, LoadOptions{Vars: tt.vars, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if got := s.Servers[0].APIKey; got != tt.want {
				t.Errorf("api key %q, want %q", got, tt.want)
			}
			if got := s.Servers[0].Command; got != "/home/u/env_h200-z-lab-vllm/bin/vllm" {
				t.Errorf("command %q", got)
			}
		})
	}
}

// TestSpeculativeDraftKVCacheDtype: a speculative block's config key
// kv_cache_dtype renders into vLLM's --speculative-config as the draft's
// own KV cache dtype (SpeculativeConfig.kv_cache_dtype, vLLM PR #48787),
// beside the target's --kv-cache-dtype.
func TestSpeculativeDraftKVCacheDtype(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string // adjacent words of the argv
	}{
		{name: "the draft's dtype beside the target's", body: `kv_cache_dtype = "fp8"
  speculative {
    method                 = "dspark"
    model                  = "d"
    num_speculative_tokens = 7
    config = { kv_cache_dtype = "bfloat16" }
  }`, want: []string{"--kv-cache-dtype", "fp8", "--speculative-config", `{"method":"dspark","model":"d","num_speculative_tokens":7,"kv_cache_dtype":"bfloat16"}`}},
		{name: "sorted among other config keys", body: `speculative {
    method = "dflash"
    model  = "d"
    config = { kv_cache_dtype = "auto", draft_tensor_parallel_size = 1 }
  }`, want: []string{"--speculative-config", `{"method":"dflash","model":"d","draft_tensor_parallel_size":1,"kv_cache_dtype":"auto"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp, diags := loadSourceDiags(t, "server \"s\" {\n  model = \"m\"\n  "+tt.body+"\n}\n")
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			argv := strings.Join(sp.Servers[0].Argv(), "\x00")
			if !strings.Contains(argv, strings.Join(tt.want, "\x00")) {
				t.Errorf("argv %q lacks %q", strings.Split(argv, "\x00"), tt.want)
			}
		})
	}
}
