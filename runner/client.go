package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/slogate/slogate/runner/promread"
)

// controlTimeout bounds every non-streaming request (health, models,
// metrics, tokenize, version).
const controlTimeout = 10 * time.Second

// idleConnTimeout stays below vLLM's 5 s keep-alive (VLLM_HTTP_TIMEOUT_KEEP_ALIVE),
// so the client never reuses a connection the server is closing.
const idleConnTimeout = 4 * time.Second

// newTransport is shared by control and streaming requests: no global
// timeout (streams last minutes; each is bounded by its own inactivity
// timer), keep-alive pooling sized for hundreds of streams.
func newTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil, // loopback or a named endpoint: never via a proxy
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   1024,
		IdleConnTimeout:       idleConnTimeout,
		DisableCompression:    true,
		ExpectContinueTimeout: time.Second,
		WriteBufferSize:       64 << 10,
		ReadBufferSize:        16 << 10,
	}
}

// apiClient talks to one vLLM-compatible server.
type apiClient struct {
	base   string // http://host:port
	apiKey string
	model  string // served model name
	http   *http.Client
}

func newAPIClient(base, apiKey, model string) *apiClient {
	return &apiClient{base: strings.TrimRight(base, "/"), apiKey: apiKey, model: model,
		http: &http.Client{Transport: newTransport()}}
}

func (c *apiClient) close() { c.http.CloseIdleConnections() }

func (c *apiClient) authorize(req *http.Request) {
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
}

// do sends a bounded control request and returns the status and up to 64 MiB
// of body (a /tokenize answer of a 1M-token prompt is about 7 MB).
func (c *apiClient) do(ctx context.Context, method, path string, body any) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, controlTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.authorize(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return resp.StatusCode, b, err
}

// statusError is a control request answered with an HTTP status other than
// 200; callers tell the statuses apart with errors.As.
type statusError struct {
	request string // "GET /v1/models"
	code    int
	body    string // a snippet of the answer, "" to leave it out
}

func (e *statusError) Error() string {
	if e.body == "" {
		return fmt.Sprintf("%s answered %d", e.request, e.code)
	}
	return fmt.Sprintf("%s answered %d: %s", e.request, e.code, e.body)
}

// health is GET /health == 200.
func (c *apiClient) health(ctx context.Context) error {
	code, _, err := c.do(ctx, http.MethodGet, "/health", nil)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return &statusError{request: "GET /health", code: code}
	}
	return nil
}

// vllmModel is go-openai's model entry plus the field vLLM adds.
type vllmModel struct {
	openai.Model
	MaxModelLen int `json:"max_model_len"`
}

// models is GET /v1/models.
func (c *apiClient) models(ctx context.Context) ([]vllmModel, error) {
	code, b, err := c.do(ctx, http.MethodGet, "/v1/models", nil)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, &statusError{request: "GET /v1/models", code: code, body: snippet(b)}
	}
	var list struct {
		Data []vllmModel `json:"data"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("GET /v1/models: %v", err)
	}
	return list.Data, nil
}

// version is GET /version, "" when the server does not say.
func (c *apiClient) version(ctx context.Context) string {
	code, b, err := c.do(ctx, http.MethodGet, "/version", nil)
	if err != nil || code != http.StatusOK {
		return ""
	}
	var v struct {
		Version string `json:"version"`
	}
	json.Unmarshal(b, &v)
	return v.Version
}

// metrics scrapes /metrics; the snapshot's time is the middle of the scrape.
func (c *apiClient) metrics(ctx context.Context) (promread.Snapshot, time.Time, error) {
	s, mid, _, err := c.timedMetrics(ctx)
	return s, mid, err
}

// timedMetrics is metrics with how long the scrape took (the request and
// its answer, not the parse).
func (c *apiClient) timedMetrics(ctx context.Context) (promread.Snapshot, time.Time, time.Duration, error) {
	t0 := time.Now()
	code, b, err := c.do(ctx, http.MethodGet, "/metrics", nil)
	took := time.Since(t0)
	mid := t0.Add(took / 2)
	if err != nil {
		return promread.Snapshot{}, mid, took, err
	}
	if code != http.StatusOK {
		return promread.Snapshot{}, mid, took, fmt.Errorf("GET /metrics answered %d", code)
	}
	s, err := promread.Parse(bytes.NewReader(b), c.model)
	return s, mid, took, err
}

// serverTokenizer is the server's POST /tokenize as a workload.Tokenizer.
// It keeps the max_model_len the answers give and counts the calls and the
// bytes exchanged (the cost of building prompts, logged per context).
type serverTokenizer struct {
	c           *apiClient
	maxModelLen int // from the last answer that gave one
	calls       int
	bytes       int64 // request and answer bodies
}

// TokenizeChat renders messages through the server's chat template (the
// same rendering /v1/chat/completions does) and returns the token IDs.
func (t *serverTokenizer) TokenizeChat(ctx context.Context, messages []openai.ChatCompletionMessage, addGenerationPrompt bool, chatTemplateKwargs map[string]any) ([]int, error) {
	req := map[string]any{"model": t.c.model, "messages": messages, "add_generation_prompt": addGenerationPrompt}
	if chatTemplateKwargs != nil {
		req["chat_template_kwargs"] = chatTemplateKwargs
	}
	return t.tokenize(ctx, "POST /tokenize with messages", req)
}

// TokenizeText returns the token IDs of text without special tokens.
func (t *serverTokenizer) TokenizeText(ctx context.Context, text string) ([]int, error) {
	return t.tokenize(ctx, "POST /tokenize", map[string]any{"model": t.c.model, "prompt": text, "add_special_tokens": false})
}

func (t *serverTokenizer) tokenize(ctx context.Context, what string, req map[string]any) ([]int, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	t.calls++
	code, b, err := t.c.do(ctx, http.MethodPost, "/tokenize", json.RawMessage(body))
	t.bytes += int64(len(body) + len(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	if code != http.StatusOK {
		return nil, &statusError{request: what, code: code, body: snippet(b)}
	}
	var r struct {
		Tokens      []int `json:"tokens"`
		MaxModelLen int   `json:"max_model_len"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	if r.MaxModelLen > 0 {
		t.maxModelLen = r.MaxModelLen
	}
	return r.Tokens, nil
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// openStream POSTs a streaming generation request (body, already encoded)
// to url and returns the server's event stream, which the caller closes. A
// status other than 200 is an error quoting the start of the server's body
// (path names the endpoint in it). Decode and traffic cells both open their
// streams here.
func (c *apiClient) openStream(ctx context.Context, url, path string, body []byte) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	c.authorize(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		resp.Body.Close()
		return nil, &streamStatusError{path: path, code: resp.StatusCode, body: snippet(b)}
	}
	return resp.Body, nil
}

// streamStatusError is a generation request answered with a status other
// than 200; the cell's error quotes it as it is.
type streamStatusError struct {
	path string // "/v1/completions"
	code int
	body string // a snippet of the answer
}

func (e *streamStatusError) Error() string {
	return fmt.Sprintf("POST %s answered HTTP %d: %s", e.path, e.code, e.body)
}
