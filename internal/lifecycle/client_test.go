package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	openai "github.com/sashabaranov/go-openai"
)

// TestServerTokenizer: the run's requests.Tokenizer asks POST /tokenize
// exactly as vLLM serves it: messages with add_generation_prompt and the
// chat_template_kwargs (left out when there are none), plain text without
// special tokens; it returns the token IDs and keeps max_model_len.
func TestServerTokenizer(t *testing.T) {
	var bodies []map[string]any
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		json.NewDecoder(r.Body).Decode(&m)
		bodies = append(bodies, m)
		fmt.Fprint(w, `{"count":3,"max_model_len":8192,"tokens":[5,6,7]}`)
	}))
	defer s.Close()
	tok := NewTokenizer(NewClient(s.URL, "", "qwen"))
	msgs := []openai.ChatCompletionMessage{{Role: "user", Content: "doc\n\nWrite."}}
	ctx := context.Background()
	ids1, err1 := tok.TokenizeChat(ctx, msgs, true, map[string]any{"enable_thinking": false})
	ids2, err2 := tok.TokenizeChat(ctx, msgs, true, nil)
	ids3, err3 := tok.TokenizeText(ctx, "plain")
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	for _, ids := range [][]int{ids1, ids2, ids3} {
		if !cmp.Equal(ids, []int{5, 6, 7}) {
			t.Errorf("ids = %v, want [5 6 7]", ids)
		}
	}
	user := []any{map[string]any{"role": "user", "content": "doc\n\nWrite."}}
	want := []map[string]any{
		{"model": "qwen", "messages": user, "add_generation_prompt": true, "chat_template_kwargs": map[string]any{"enable_thinking": false}},
		{"model": "qwen", "messages": user, "add_generation_prompt": true},
		{"model": "qwen", "prompt": "plain", "add_special_tokens": false},
	}
	if diff := cmp.Diff(want, bodies); diff != "" {
		t.Errorf("/tokenize requests (-want +got):\n%s", diff)
	}
	if tok.Calls != 3 || tok.MaxModelLen != 8192 || tok.Bytes <= 0 {
		t.Errorf("calls %d, max_model_len %d, bytes %d; want 3, 8192, > 0", tok.Calls, tok.MaxModelLen, tok.Bytes)
	}
}
