package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/promread"
	"github.com/slogate/slogate/internal/spec"
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

// Client talks to one OpenAI-compatible server of its engine (vLLM unless
// ForServer says otherwise): its control endpoints
// (health, models, version, metrics, tokenize) and its streaming
// generation requests.
type Client struct {
	base   string // http://host:port
	apiKey string
	model  string // served model name
	http   *http.Client
	engine engine.Engine // vLLM unless ForServer says otherwise
}

// NewClient is a client of the server at base (http://host:port) serving
// model, sending apiKey as a bearer token when it is not empty.
func NewClient(base, apiKey, model string) *Client {
	return NewClientOver(&http.Client{Transport: newTransport()}, base, apiKey, model)
}

// NewClientOver is NewClient over the HTTP client h (tests serve a handler
// in process through it).
func NewClientOver(h *http.Client, base, apiKey, model string) *Client {
	return &Client{base: strings.TrimRight(base, "/"), apiKey: apiKey, model: model, http: h, engine: engineFor(nil)}
}

// ForServer sets the engine c talks to from the server block (its metric
// names, where it states its facts) and returns c.
func (c *Client) ForServer(srv *spec.Server) *Client {
	c.engine = engineFor(srv)
	return c
}

// Engine is the engine c talks to (vLLM unless ForServer says otherwise).
func (c *Client) Engine() engine.Engine { return c.engine }

// Base is the server's base URL, without a trailing slash.
func (c *Client) Base() string { return c.base }

// Model is the served model name requests ask for.
func (c *Client) Model() string { return c.model }

// Close closes the client's idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

func (c *Client) authorize(req *http.Request) {
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
}

// do sends a bounded control request and returns the status and up to 64 MiB
// of body (a /tokenize answer of a 1M-token prompt is about 7 MB).
func (c *Client) do(ctx context.Context, method, path string, body any) (int, []byte, error) {
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

// Do is a bounded control request (engine.Conn): the engines read the
// server through it.
func (c *Client) Do(ctx context.Context, method, path string, body any) (int, []byte, error) {
	return c.do(ctx, method, path, body)
}

// health is GET /health == 200.
func (c *Client) health(ctx context.Context) error {
	code, _, err := c.do(ctx, http.MethodGet, "/health", nil)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return &StatusError{Request: "GET /health", Code: code}
	}
	return nil
}

// vllmModel is go-openai's model entry plus the field vLLM adds.
type vllmModel struct {
	openai.Model
	MaxModelLen int `json:"max_model_len"`
}

// models is GET /v1/models.
func (c *Client) models(ctx context.Context) ([]vllmModel, error) {
	code, b, err := c.do(ctx, http.MethodGet, "/v1/models", nil)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, &StatusError{Request: "GET /v1/models", Code: code, Body: snippet(b)}
	}
	var list struct {
		Data []vllmModel `json:"data"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("GET /v1/models: %v", err)
	}
	return list.Data, nil
}

// SpeculativeIdle is the warning of a decode cell whose speculation did
// not run, in the terms of c's engine (Engine.SpeculativeIdle).
func (c *Client) SpeculativeIdle() string { return c.engine.SpeculativeIdle() }

// version is the server's version as its engine states it, and where it
// was read; "" when it does not say.
func (c *Client) version(ctx context.Context) (string, string) { return c.engine.Version(ctx, c) }

// Metrics scrapes /metrics; the snapshot's time is the middle of the scrape.
func (c *Client) Metrics(ctx context.Context) (promread.Snapshot, time.Time, error) {
	s, mid, _, err := c.TimedMetrics(ctx)
	return s, mid, err
}

// TimedMetrics is Metrics with how long the scrape took (the request and
// its answer, not the parse).
func (c *Client) TimedMetrics(ctx context.Context) (promread.Snapshot, time.Time, time.Duration, error) {
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
	s, err := c.engine.ParseMetrics(bytes.NewReader(b), c.model)
	return s, mid, took, err
}

// Tokenizer is the server's POST /tokenize as a requests.Tokenizer. It
// keeps the max_model_len the answers give and counts the calls and the
// bytes exchanged (the cost of building prompts, logged per context).
type Tokenizer struct {
	c           *Client
	MaxModelLen int // from the last answer that gave one (0 where it is not the server's)
	Calls       int
	Bytes       int64 // request and answer bodies
	// chatByUsage is set once /tokenize refused the messages form and the
	// engine measures a chat prompt's length another way (SGLang builds
	// whose /tokenize takes a prompt only).
	chatByUsage bool
}

// NewTokenizer is c's POST /tokenize.
func NewTokenizer(c *Client) *Tokenizer { return &Tokenizer{c: c} }

// TokenizeChat renders messages through the server's chat template (the
// same rendering /v1/chat/completions does) and returns the token IDs:
// by /tokenize's messages form, else where the engine has none by its
// own requests (Engine.ChatPromptIDs).
// Where /tokenize refuses the messages form (400 or 422) and the engine
// can tell the length another way (Engine.ChatPromptTokens), it returns
// that many IDs of -1: the length is the server's, the IDs are unknown
// (the article builder reads the length only; the random one's
// special-token probe learns nothing from them).
func (t *Tokenizer) TokenizeChat(ctx context.Context, messages []openai.ChatCompletionMessage, addGenerationPrompt bool, chatTemplateKwargs map[string]any) ([]int, error) {
	req := t.c.engine.TokenizeChatBody(t.c.model, messages, addGenerationPrompt, chatTemplateKwargs)
	if req == nil { // the engine's /tokenize has no messages form (llama.cpp)
		t.Calls++
		if ids, ok, err := engine.ChatPromptIDs(ctx, t.c.engine, t.c, messages, chatTemplateKwargs); ok {
			return ids, err
		}
		t.chatByUsage = true
	}
	if !t.chatByUsage {
		ids, err := t.tokenize(ctx, "POST /tokenize with messages", req)
		var se *StatusError
		if err == nil || !errors.As(err, &se) || (se.Code != http.StatusBadRequest && se.Code != http.StatusUnprocessableEntity) || !addGenerationPrompt {
			return ids, err
		}
		n, can, uerr := t.c.engine.ChatPromptTokens(ctx, t.c, messages, chatTemplateKwargs)
		if !can {
			return ids, err
		}
		t.chatByUsage = true
		return unknownIDs(n), uerr
	}
	t.Calls++
	n, _, err := t.c.engine.ChatPromptTokens(ctx, t.c, messages, chatTemplateKwargs)
	return unknownIDs(n), err
}

// unknownIDs are n token IDs known by their number only (-1 each); nil for
// none.
func unknownIDs(n int) []int {
	if n <= 0 {
		return nil
	}
	ids := make([]int, n)
	for i := range ids {
		ids[i] = -1
	}
	return ids
}

// TokenizeText returns the token IDs of text without special tokens.
func (t *Tokenizer) TokenizeText(ctx context.Context, text string) ([]int, error) {
	return t.tokenize(ctx, "POST /tokenize", t.c.engine.TokenizeBody(t.c.model, text))
}

func (t *Tokenizer) tokenize(ctx context.Context, what string, req any) ([]int, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	t.Calls++
	code, b, err := t.c.do(ctx, http.MethodPost, "/tokenize", json.RawMessage(body))
	t.Bytes += int64(len(body) + len(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	if code != http.StatusOK {
		return nil, &StatusError{Request: what, Code: code, Body: snippet(b)}
	}
	var r struct {
		Tokens      []int `json:"tokens"`
		MaxModelLen int   `json:"max_model_len"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	if r.MaxModelLen > 0 && t.c.engine.TokenizeStatesContext() {
		t.MaxModelLen = r.MaxModelLen
	}
	return r.Tokens, nil
}

func snippet(b []byte) string { return engine.Snippet(b) }

// OpenStream POSTs a streaming generation request (body, already encoded)
// to url and returns the server's event stream, which the caller closes. A
// status other than 200 is an error quoting the start of the server's body
// (path names the endpoint in it). Decode and traffic cells both open their
// streams here.
func (c *Client) OpenStream(ctx context.Context, url, path string, body []byte) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	// A server that closes a stream's connection unannounced
	// (llama-server) must not have it reused: the next request on it
	// would meet EOF.
	req.Close = engine.StreamClosesConnection(c.engine)
	c.authorize(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		resp.Body.Close()
		return nil, &StreamStatusError{Path: path, Code: resp.StatusCode, Body: snippet(b)}
	}
	return resp.Body, nil
}

// StreamStatusError is a generation request answered with a status other
// than 200; the cell's error quotes it as it is.
type StreamStatusError struct {
	Path string // "/v1/completions"
	Code int
	Body string // a snippet of the answer
}

func (e *StreamStatusError) Error() string {
	return fmt.Sprintf("POST %s answered HTTP %d: %s", e.Path, e.Code, e.Body)
}
