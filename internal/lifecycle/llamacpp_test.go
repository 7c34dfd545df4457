package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/warning"
)

// TestLlamaCppTokenizer: llama-server's /tokenize takes {"content"} and
// has no messages form, so a chat prompt is sized by /apply-template and
// /tokenize of its rendering with add_special (docs/llamacpp.md#tokenize);
// the messages form is never sent (llama-server answers it with no tokens
// and 200, which would size every chat prompt as empty).
func TestLlamaCppTokenizer(t *testing.T) {
	var bodies []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		b, _ := json.Marshal(req)
		bodies = append(bodies, r.URL.Path+" "+string(b))
		switch r.URL.Path {
		case "/tokenize":
			if req["add_special"] == true {
				w.Write([]byte(`{"tokens":[1,3,10,11,4]}`))
				return
			}
			w.Write([]byte(`{"tokens":[302,312,304]}`))
		case "/apply-template":
			w.Write([]byte(`{"prompt":"<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"}`))
		}
	}))
	defer ts.Close()
	c := NewClient(ts.URL, "", "tiny").ForServer(&spec.Server{Engine: spec.EngineLlamaCpp})
	tok := NewTokenizer(c)
	ids, err := tok.TokenizeText(context.Background(), "the cat")
	if err != nil || len(ids) != 3 {
		t.Fatalf("TokenizeText: %v, %v", ids, err)
	}
	msgs := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Hello"}}
	ids, err = tok.TokenizeChat(context.Background(), msgs, true, nil)
	if err != nil || fmt.Sprint(ids) != "[1 3 10 11 4]" {
		t.Fatalf("TokenizeChat: %v, %v; want the rendering's IDs and its BOS", ids, err)
	}
	want := []string{
		`/tokenize {"content":"the cat"}`,
		`/apply-template {"messages":[{"content":"Hello","role":"user"}]}`,
		`/tokenize {"add_special":true,"content":"\u003c|im_start|\u003euser\nHello\u003c|im_end|\u003e\n\u003c|im_start|\u003eassistant\n"}`,
	}
	if strings.Join(bodies, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(bodies, "\n"), strings.Join(want, "\n"))
	}
}

// TestLlamaCppNoSimulator: -sim is refused for llama.cpp, with a usage
// error saying why, before anything is started.
func TestLlamaCppNoSimulator(t *testing.T) {
	srv := &spec.Server{Name: "tiny", Engine: spec.EngineLlamaCpp, Model: "/m/tiny.gguf", Port: 1}
	_, err := NewLauncher(LaunchConfig{Server: srv, Sim: true, Note: func(n event.LaunchNote) { t.Logf("%+v", n) }, Warn: func(warning.Warning) {}})
	if exit.Code(err) != exit.Usage || !strings.Contains(err.Error(), `-sim: slogate's simulator imitates vLLM and SGLang, not llama.cpp (server "tiny", engine = "llamacpp")`) {
		t.Fatalf("err = %v", err)
	}
}

// TestStreamClosesConnection: llama-server closes a streamed response's
// connection without saying so, so its streams ask for "Connection:
// close" (a reused connection met EOF: "Post …: EOF" on the real server);
// vLLM's keep their connection.
func TestStreamClosesConnection(t *testing.T) {
	tests := []struct {
		name   string
		engine string
		close  bool
	}{
		{name: "llama.cpp", engine: spec.EngineLlamaCpp, close: true},
		{name: "vLLM", engine: spec.EngineVLLM, close: false},
		{name: "SGLang", engine: spec.EngineSGLang, close: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []bool
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				asked = append(asked, r.Close)
				w.Write([]byte("data: [DONE]\n\n"))
			}))
			defer ts.Close()
			c := NewClient(ts.URL, "", "tiny").ForServer(&spec.Server{Engine: tt.engine})
			for i := 0; i < 2; i++ {
				b, err := c.OpenStream(context.Background(), ts.URL+"/v1/completions", "/v1/completions", []byte(`{}`))
				if err != nil {
					t.Fatal(err)
				}
				b.Close()
			}
			if fmt.Sprint(asked) != fmt.Sprint([]bool{tt.close, tt.close}) {
				t.Errorf("Connection: close asked %v, want %v on both streams", asked, tt.close)
			}
		})
	}
}
