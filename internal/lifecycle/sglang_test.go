package lifecycle

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/slogate/slogate/internal/spec"
)

// TestSGLangChatLengthByUsage: where SGLang's /tokenize refuses messages,
// a chat prompt's length is a one-token chat request's usage.prompt_tokens,
// and /tokenize's max_model_len (the tokenizer's) is not taken as the
// server's context.
func TestSGLangChatLengthByUsage(t *testing.T) {
	var chats, messageForms int
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		switch r.URL.Path {
		case "/tokenize":
			if _, ok := req["messages"]; ok {
				messageForms++
				w.WriteHeader(400)
				w.Write([]byte(`{"object":"error","message":"1 validation error for TokenizeRequest\nprompt\n  Field required","code":400}`))
				return
			}
			w.Write([]byte(`{"tokens":[1,2,3],"count":3,"max_model_len":131072}`))
		case "/v1/chat/completions":
			chats++
			if req["max_tokens"] != float64(1) {
				t.Errorf("max_tokens %v, want 1", req["max_tokens"])
			}
			w.Write([]byte(`{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":42,"completion_tokens":1}}`))
		}
	}))
	defer ts.Close()
	c := NewClient(ts.URL, "", "m").ForServer(&spec.Server{Engine: spec.EngineSGLang})
	tok := NewTokenizer(c)
	msgs := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Hello"}}
	for i := 0; i < 2; i++ {
		ids, err := tok.TokenizeChat(context.Background(), msgs, true, nil)
		if err != nil || len(ids) != 42 {
			t.Fatalf("call %d: %d ids, %v; want 42 from usage.prompt_tokens", i, len(ids), err)
		}
	}
	if chats != 2 || messageForms != 1 {
		t.Errorf("%d chat requests and %d /tokenize with messages, want one chat request per call and the refused messages form not tried again", chats, messageForms)
	}
	if _, err := tok.TokenizeText(context.Background(), "Hello"); err != nil || tok.MaxModelLen != 0 {
		t.Errorf("TokenizeText: %v, MaxModelLen %d; want SGLang's tokenizer limit left out", err, tok.MaxModelLen)
	}
	// vLLM: a refused messages form is an error, not a fallback.
	v := NewClient(ts.URL, "", "m")
	if _, err := NewTokenizer(v).TokenizeChat(context.Background(), msgs, true, nil); err == nil {
		t.Errorf("vLLM's refused messages form gave no error")
	}
}

// TestSGLangContainerLaunchKey: an SGLang container gets the real API key
// on its command line (SGLang reads it from --api-key only), while the
// log of what was started shows it redacted.
func TestSGLangContainerLaunchKey(t *testing.T) {
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "argv")
	runtime := filepath.Join(dir, "runtime")
	if err := os.WriteFile(runtime, []byte("#!/bin/sh\necho \"$@\" > "+argsFile+"\necho \"key sekrit-key seen\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, diags := spec.LoadSource("s.hcl", []byte(`server "s" {
  engine  = "sglang"
  model   = "m"
  api_key = "sekrit-key"
  container { image = "lmsysorg/sglang:v0.5.5" }
}
matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1]
}
`), spec.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	logPath := filepath.Join(dir, "server.log")
	c, err := startContainer(runtime, s.Servers[0], "r1", logPath)
	if err != nil {
		t.Fatal(err)
	}
	<-c.client.exited
	argv, _ := os.ReadFile(argsFile)
	if !strings.Contains(string(argv), "lmsysorg/sglang:v0.5.5 sglang serve m ") || !strings.Contains(string(argv), "--api-key sekrit-key") {
		t.Errorf("the container's command line %q lacks sglang serve and the real key", argv)
	}
	if log, _ := os.ReadFile(logPath); strings.Contains(string(log), "sekrit-key") {
		t.Errorf("server.log holds the key: %q", log)
	}
}
