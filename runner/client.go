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

// do sends a bounded control request and returns the status and up to 8 MiB of body.
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
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
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
	t0 := time.Now()
	code, b, err := c.do(ctx, http.MethodGet, "/metrics", nil)
	mid := t0.Add(time.Since(t0) / 2)
	if err != nil {
		return promread.Snapshot{}, mid, err
	}
	if code != http.StatusOK {
		return promread.Snapshot{}, mid, fmt.Errorf("GET /metrics answered %d", code)
	}
	s, err := promread.Parse(bytes.NewReader(b), c.model)
	return s, mid, err
}

// tokenize is POST /tokenize of text; it returns the token IDs and the
// server's max_model_len (0 when not given).
func (c *apiClient) tokenize(ctx context.Context, text string) ([]int, int, error) {
	code, b, err := c.do(ctx, http.MethodPost, "/tokenize", map[string]any{"model": c.model, "prompt": text, "add_special_tokens": false})
	if err != nil {
		return nil, 0, err
	}
	if code != http.StatusOK {
		return nil, 0, fmt.Errorf("POST /tokenize answered %d", code)
	}
	var r struct {
		Tokens      []int `json:"tokens"`
		MaxModelLen int   `json:"max_model_len"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, 0, err
	}
	return r.Tokens, r.MaxModelLen, nil
}

// tokenizeChat is POST /tokenize of one user message rendered through the
// chat template with the generation prompt, exactly as
// /v1/chat/completions renders it; it returns the prompt's token count.
func (c *apiClient) tokenizeChat(ctx context.Context, messages json.RawMessage) (int, error) {
	code, b, err := c.do(ctx, http.MethodPost, "/tokenize", map[string]any{"model": c.model, "messages": messages, "add_generation_prompt": true})
	if err != nil {
		return 0, err
	}
	if code != http.StatusOK {
		return 0, fmt.Errorf("POST /tokenize with messages answered %d: %s", code, snippet(b))
	}
	var r struct {
		Count  *int  `json:"count"`
		Tokens []int `json:"tokens"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return 0, fmt.Errorf("POST /tokenize with messages: %v", err)
	}
	if r.Count != nil {
		return *r.Count, nil
	}
	return len(r.Tokens), nil
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
