package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Hardening tests (issue 6, item 4): the api_key, from env() or -var, is
// sent only in the Authorization header and never reaches an artifact or
// the console; file() reads only inside the spec's folder.

// plantedKey returns a unique key that no output could contain by chance.
func plantedKey() string {
	var b [12]byte
	rand.Read(b[:])
	return "sk-planted-" + hex.EncodeToString(b[:])
}

// secretsBody is a small matrix that writes every report.
const secretsBody = `
measure {
  duration   = "1s"
  max_output = 128
}
prefill { contexts = ["1K"] }
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
assert "tps" {
  condition     = decode["1K"][1].total_tps > 0
  error_message = "no throughput"
}
`

// secretSpec writes a spec whose api_key is apiKey (an HCL expression) and
// whose server env holds extra (HCL map entries).
func secretSpec(t *testing.T, dir, apiKey, extra string) string {
	t.Helper()
	src := `variable "key" {
  default = ""
}
server "sim" {
  model             = "Qwen/Qwen3.5-4B"
  served_model_name = "qwen"
  host              = "127.0.0.1"
  port              = ` + strconv.Itoa(freePort(t)) + `
  max_model_len     = 16384
  ready_timeout     = "20s"
  api_key           = ` + apiKey + `
  env               = {` + extra + `}
  args              = [` + fastSim + `]
}
` + secretsBody
	path := filepath.Join(dir, "spec.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// noSecret fails when key occurs in what, or in any file under dirs.
func noSecret(t *testing.T, key string, what map[string]string, dirs ...string) {
	t.Helper()
	for name, s := range what {
		if strings.Contains(s, key) {
			t.Errorf("the key appears in %s:\n%s", name, s)
		}
	}
	for _, dir := range dirs {
		filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() {
				return nil
			}
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(key)) {
				t.Errorf("the key appears in %s", p)
			}
			return nil
		})
	}
}

// TestSecretsNeverWritten plants a key through env() and through -var and
// checks every artifact and every console output of run (-v and -json),
// plan, and the server log.
func TestSecretsNeverWritten(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		apiKey string // HCL expression
		env    func(key string) []string
		args   func(key string) []string
	}{
		{name: "env()", apiKey: `env("SLOGATE_E2E_API_KEY")`,
			env: func(k string) []string { return []string{"SLOGATE_E2E_API_KEY=" + k} }},
		{name: "-var", apiKey: `var.key`,
			args: func(k string) []string { return []string{"-var", "key=" + k} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mark := newMark(t)
			defer noLeftovers(t, mark)
			key := plantedKey()
			var env, extra []string
			if tc.env != nil {
				env = tc.env(key)
			}
			if tc.args != nil {
				extra = tc.args(key)
			}
			spec := secretSpec(t, t.TempDir(), tc.apiKey, "")
			outs := t.TempDir()
			seen := map[string]string{}
			for _, mode := range []string{"-v", "-json", "-plain"} {
				out := filepath.Join(outs, mode)
				args := append([]string{"run", "-sim", "-out", out, "-junit", filepath.Join(outs, mode+".xml")}, extra...)
				if mode != "-plain" {
					args = append(args, mode)
				}
				r := slogate(t, mark, 2*time.Minute, "", env, append(args, spec)...)
				if r.Code != 0 {
					t.Fatalf("run %s: exit %d (the server checks the key: a wrong or missing Authorization fails)\nstdout:\n%s\nstderr:\n%s", mode, r.Code, r.Stdout, r.Stderr)
				}
				seen["run "+mode+" stdout"], seen["run "+mode+" stderr"] = r.Stdout, r.Stderr
				if _, err := os.Stat(filepath.Join(out, "server.log")); err != nil {
					t.Errorf("run %s wrote no server.log: %v", mode, err)
				}
			}
			for _, format := range []string{"text", "json"} {
				r := slogate(t, mark, time.Minute, "", env, append(append([]string{"plan", "-format", format}, extra...), spec)...)
				if r.Code != 0 {
					t.Fatalf("plan -format %s: exit %d\n%s", format, r.Code, r.Stderr)
				}
				if !strings.Contains(r.Stdout, "<redacted>") {
					t.Errorf("plan -format %s does not show the key as <redacted>:\n%s", format, r.Stdout)
				}
				seen["plan "+format+" stdout"], seen["plan "+format+" stderr"] = r.Stdout, r.Stderr
			}
			noSecret(t, key, seen, outs)
		})
	}
}

// TestSecretsInServerEnv: a key passed to the server through its env
// (VLLM_API_KEY, as vLLM reads it) is redacted in results, reports and
// output like the api_key itself.
func TestSecretsInServerEnv(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	key := plantedKey()
	spec := secretSpec(t, t.TempDir(), `env("SLOGATE_E2E_API_KEY")`, ` VLLM_API_KEY = env("SLOGATE_E2E_API_KEY") `)
	out := filepath.Join(t.TempDir(), "out")
	env := []string{"SLOGATE_E2E_API_KEY=" + key}
	r := slogate(t, mark, 2*time.Minute, "", env, "run", "-sim", "-v", "-out", out, spec)
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	p := slogate(t, mark, time.Minute, "", env, "plan", spec)
	noSecret(t, key, map[string]string{"run stdout": r.Stdout, "run stderr": r.Stderr, "plan stdout": p.Stdout, "plan stderr": p.Stderr}, out)
}

// recorder is a reverse proxy that remembers every request it forwarded.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	method, uri string
	header      http.Header
	body        []byte
}

func (rc *recorder) proxy(t *testing.T, target string) *httptest.Server {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1 // stream SSE through at once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, recorded{r.Method, r.RequestURI, r.Header.Clone(), body})
		rc.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestSecretsOnlyInAuthorization: everything slogate sends to the server
// carries the key in "Authorization: Bearer" and nowhere else (URL, other
// headers, bodies).
func TestSecretsOnlyInAuthorization(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	t.Cleanup(func() { noLeftovers(t, mark) })
	key := plantedKey()
	base := startSim(t, mark, "Qwen/Qwen3.5-4B", "--served-model-name", "qwen", "--api-key", key, "--sim-tbt", "5ms", "--sim-ttft", "20ms", "--sim-kv-tokens", "1000000")
	var rc recorder
	proxy := rc.proxy(t, base)
	spec := secretSpec(t, t.TempDir(), `env("SLOGATE_E2E_API_KEY")`, "")
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, 2*time.Minute, "", []string{"SLOGATE_E2E_API_KEY=" + key}, "run", "-endpoint", proxy.URL, "-out", out, spec)
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.reqs) == 0 {
		t.Fatal("no request went through the proxy")
	}
	for _, q := range rc.reqs {
		if strings.Contains(q.uri, key) || bytes.Contains(q.body, []byte(key)) {
			t.Errorf("%s %s carries the key in its URL or body", q.method, q.uri)
		}
		for name, vals := range q.header {
			for _, v := range vals {
				if strings.Contains(v, key) && (name != "Authorization" || v != "Bearer "+key) {
					t.Errorf("%s %s carries the key in header %s: %q", q.method, q.uri, name, v)
				}
			}
		}
		if strings.HasPrefix(q.uri, "/v1") && q.header.Get("Authorization") != "Bearer "+key {
			t.Errorf("%s %s was sent without the key", q.method, q.uri)
		}
	}
	noSecret(t, key, map[string]string{"stdout": r.Stdout, "stderr": r.Stderr}, out)
}

// TestSecretsWrongKey: a server that refuses the key is exit 3 saying so,
// without printing the key.
func TestSecretsWrongKey(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	t.Cleanup(func() { noLeftovers(t, mark) })
	right, wrong := plantedKey(), plantedKey()
	base := startSim(t, mark, "Qwen/Qwen3.5-4B", "--served-model-name", "qwen", "--api-key", right)
	spec := secretSpec(t, t.TempDir(), `env("SLOGATE_E2E_API_KEY")`, "")
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, time.Minute, "", []string{"SLOGATE_E2E_API_KEY=" + wrong}, "run", "-endpoint", base, "-out", out, spec)
	if r.Code != 3 || !strings.Contains(r.Stderr, "401") || !strings.Contains(r.Stderr, "api_key") {
		t.Fatalf("exit %d, want 3 naming the 401 and api_key\nstderr:\n%s", r.Code, r.Stderr)
	}
	noSecret(t, wrong, map[string]string{"stdout": r.Stdout, "stderr": r.Stderr}, out)
	noSecret(t, right, map[string]string{"stdout": r.Stdout, "stderr": r.Stderr}, out)
}

// TestSecretsFileStaysInSpecFolder: file() reads a key beside the spec,
// and refuses a path outside the spec's folder with exit 2.
func TestSecretsFileStaysInSpecFolder(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	root := t.TempDir()
	dir := filepath.Join(root, "specs")
	os.MkdirAll(dir, 0o755)
	key := plantedKey()
	os.WriteFile(filepath.Join(dir, "key.txt"), []byte(key), 0o600)
	os.WriteFile(filepath.Join(root, "outside.txt"), []byte(key), 0o600)

	inside := secretSpec(t, dir, `trimspace(file("key.txt"))`, "")
	r := slogate(t, mark, time.Minute, "", nil, "plan", inside)
	if r.Code != 0 {
		t.Fatalf("plan with file(\"key.txt\"): exit %d\n%s", r.Code, r.Stderr)
	}
	noSecret(t, key, map[string]string{"plan stdout": r.Stdout, "plan stderr": r.Stderr})

	for _, path := range []string{"../outside.txt", filepath.Join(root, "outside.txt")} {
		outside := secretSpec(t, dir, `file("`+path+`")`, "")
		r := slogate(t, mark, time.Minute, "", nil, "plan", outside)
		if r.Code != 2 || !strings.Contains(r.Stderr, "outside the spec's folder") {
			t.Errorf("file(%q): exit %d, want 2 saying it is outside the spec's folder\n%s", path, r.Code, r.Stderr)
		}
		noSecret(t, key, map[string]string{"plan stdout": r.Stdout, "plan stderr": r.Stderr})
	}
}

// TestSecretsServerLogRedacted: a server that prints its arguments (vLLM
// logs its non-default args, --api-key included) never puts the key into
// server.log: slogate redacts it on the way.
func TestSecretsServerLogRedacted(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	key := plantedKey()
	dir := t.TempDir()
	fake := filepath.Join(dir, "vllm")
	script := "#!/bin/sh\necho \"INFO non-default args: $*\"\necho \"key on stderr: $VLLM_API_KEY\" >&2\nexec " + bin + " sim \"$@\"\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := secretSpec(t, dir, `env("SLOGATE_E2E_API_KEY")`, ` VLLM_API_KEY = env("SLOGATE_E2E_API_KEY") `)
	src, _ := os.ReadFile(spec)
	os.WriteFile(spec, bytes.Replace(src, []byte(`model             = "Qwen/Qwen3.5-4B"`), []byte(`command = "`+fake+`"
  model             = "Qwen/Qwen3.5-4B"`), 1), 0o644)
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, 2*time.Minute, "", []string{"SLOGATE_E2E_API_KEY=" + key}, "run", "-out", out, spec)
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	log, err := os.ReadFile(filepath.Join(out, "server.log"))
	if err != nil || !bytes.Contains(log, []byte("non-default args:")) || !bytes.Contains(log, []byte("--api-key <redacted>")) || !bytes.Contains(log, []byte("key on stderr: <redacted>")) {
		t.Errorf("server.log does not show the redacted arguments (%v):\n%s", err, log)
	}
	noSecret(t, key, map[string]string{"stdout": r.Stdout, "stderr": r.Stderr}, out)
}
