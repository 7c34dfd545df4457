package surface

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options say which server Record records and how.
type Options struct {
	// URL is the server's base URL, e.g. http://127.0.0.1:8000.
	URL string
	// Model is the served model name.
	Model string
	// Log is the path of the server's log (stdout and stderr); "" leaves
	// Surface.Log empty. It is read once the server is ready.
	Log string
	// MaxQueued is the server's --max-num-queued-reqs: the requests kept
	// in flight before the rejection probes (3 when 0).
	MaxQueued int
	// ReadyTimeout bounds the wait for the first 200 from /health (10
	// minutes when 0).
	ReadyTimeout time.Duration
}

// Prompts of the recorded requests. Token IDs, so that every server
// counts them alike: below 256, a byte-level vocabulary's, which every
// model of slogate's tests has (internal/hfmodel) and the simulator takes.
var (
	streamPrompt = []int{100, 101, 102, 103}
	chatMessages = []map[string]string{{"role": "user", "content": "hi"}}
)

// streamTokens is the output of each recorded stream: a run of content
// chunks and a last one, long enough that the run repeats.
const streamTokens = 8

// Record records the surface of the server at o.URL. Started while the
// server loads, it sees what /health answers then (Health.Loading); it
// waits until the server is ready and the model listed, then sends its
// requests one after the other (the rejection probes excepted) and scrapes
// /metrics last, so that every family has the series the requests made.
func Record(ctx context.Context, o Options) (*Surface, error) {
	if o.MaxQueued == 0 {
		o.MaxQueued = 3
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 10 * time.Minute
	}
	r := &recorder{o: o, client: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}}
	s := &Surface{Endpoints: map[string]Answer{}, Streams: map[string]Answer{}, Errors: map[string]Answer{}}
	var err error
	if s.Health, err = r.health(ctx); err != nil {
		return nil, err
	}
	maxLen, err := r.maxModelLen(ctx)
	if err != nil {
		return nil, err
	}
	steps := []step{
		{s.Endpoints, "version", func(ctx context.Context) (Answer, error) { return r.get(ctx, "/version") }},
		{s.Endpoints, "models", func(ctx context.Context) (Answer, error) { return r.get(ctx, "/v1/models") }},
		{s.Endpoints, "tokenize", func(ctx context.Context) (Answer, error) {
			return r.post(ctx, "/tokenize", map[string]any{"model": o.Model, "prompt": "hello world"})
		}},
		{s.Endpoints, "completion", func(ctx context.Context) (Answer, error) {
			return r.post(ctx, "/v1/completions", r.completion(streamPrompt, 4, "none"))
		}},
		{s.Endpoints, "chat", func(ctx context.Context) (Answer, error) {
			return r.post(ctx, "/v1/chat/completions", r.chat(4, "none"))
		}},
	}
	for _, v := range []struct{ usage, suffix string }{{"stream", "_no_usage"}, {"usage", ""}, {"continuous", "_continuous"}} {
		usage, suffix := v.usage, v.suffix
		steps = append(steps,
			step{s.Streams, "completions" + suffix, func(ctx context.Context) (Answer, error) {
				return r.post(ctx, "/v1/completions", r.completion(streamPrompt, streamTokens, usage))
			}},
			step{s.Streams, "chat" + suffix, func(ctx context.Context) (Answer, error) {
				return r.post(ctx, "/v1/chat/completions", r.chat(streamTokens, usage))
			}})
	}
	for _, p := range r.errorProbes(maxLen) {
		steps = append(steps, step{s.Errors, p.name, p.do})
	}
	for _, st := range steps {
		a, err := st.do(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", st.name, err)
		}
		st.into[st.name] = a
	}
	if err := r.rejections(ctx, maxLen, s.Errors); err != nil {
		return nil, fmt.Errorf("rejections: %w", err)
	}
	resp, err := r.do(ctx, "GET", "/metrics", nil)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	defer resp.Body.Close()
	if s.Metrics, s.RuntimeMetrics, err = parseMetrics(resp.Body); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if o.Log != "" {
		f, err := os.Open(o.Log)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if s.Log, err = readLog(f); err != nil {
			return nil, fmt.Errorf("%s: %w", o.Log, err)
		}
	}
	return s, nil
}

// step is one of Record's requests: what it records into, under which
// name.
type step struct {
	into map[string]Answer
	name string
	do   func(context.Context) (Answer, error)
}

// recorder sends Record's requests.
type recorder struct {
	o      Options
	client *http.Client
}

// probe is one request of Surface.Errors.
type probe struct {
	name string
	do   func(context.Context) (Answer, error)
}

// errorProbes are the requests a server refuses or bounds, one at a time:
// a prompt longer than max_model_len (streaming and not); a prompt that
// fits but whose max_tokens does not (vLLM 0.32 shortens the output, with
// its length recorded, where earlier builds answered 400); an unknown
// model.
func (r *recorder) errorProbes(maxLen int) []probe {
	long := repeat(100, maxLen+76) // not maxLen+1, which vLLM words "at least"
	fits := repeat(100, maxLen-24)
	return []probe{
		{"over_max_model_len", func(ctx context.Context) (Answer, error) {
			return r.post(ctx, "/v1/completions", r.completion(long, 16, "none"))
		}},
		{"over_max_model_len_stream", func(ctx context.Context) (Answer, error) {
			return r.post(ctx, "/v1/completions", r.completion(long, 16, "usage"))
		}},
		{"over_max_model_len_output", func(ctx context.Context) (Answer, error) {
			a, raw, err := r.exchange(ctx, "POST", "/v1/completions", r.completion(fits, 100, "none"), nil)
			if err == nil && a.Status == http.StatusOK {
				a.CompletionTokens = completionTokens(raw)
			}
			return a, err
		}},
		{"unknown_model", func(ctx context.Context) (Answer, error) {
			b := r.completion(streamPrompt, 4, "none")
			b["model"] = "no-such-model"
			return r.post(ctx, "/v1/completions", b)
		}},
	}
}

// rejections fills the server with MaxQueued requests that run long,
// waits until /metrics counts them all (running + waiting), then sends a
// streaming and a non-streaming request, which a server with
// --max-num-queued-reqs MaxQueued rejects (rejected_stream, rejected).
// A server that admits them instead answers them once the filling
// requests are cancelled, which the recorder does as soon as both probes
// have their headers, or after two seconds.
func (r *recorder) rejections(ctx context.Context, maxLen int, into map[string]Answer) error {
	fillCtx, cancelFill := context.WithCancel(ctx)
	defer cancelFill()
	var fill sync.WaitGroup
	for range r.o.MaxQueued {
		fill.Go(func() {
			b := r.completion([]int{100, 101}, maxLen-2, "none")
			if resp, err := r.do(fillCtx, "POST", "/v1/completions", b); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	defer fill.Wait()
	if err := r.waitInFlight(ctx, r.o.MaxQueued); err != nil {
		return err
	}
	type result struct {
		a   Answer
		err error
	}
	probes := []struct {
		name string
		body map[string]any
	}{
		{"rejected_stream", r.completion(streamPrompt, 4, "stream")},
		{"rejected", r.completion(streamPrompt, 4, "none")},
	}
	results := make([]chan result, len(probes))
	headers := make(chan struct{}, len(probes))
	for i, p := range probes {
		results[i] = make(chan result, 1)
		go func() {
			a, err := r.send(ctx, "POST", "/v1/completions", p.body, func() { headers <- struct{}{} })
			results[i] <- result{a, err}
		}()
	}
	deadline := time.After(2 * time.Second)
wait:
	for range probes {
		select {
		case <-headers:
		case <-deadline:
			break wait
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	cancelFill()
	for i, p := range probes {
		res := <-results[i]
		if res.err != nil {
			return fmt.Errorf("%s: %w", p.name, res.err)
		}
		into[p.name] = res.a
	}
	return nil
}

// waitInFlight waits until the server's /metrics count n requests running
// or waiting (summed over engines), for up to a minute.
func (r *recorder) waitInFlight(ctx context.Context, n int) error {
	until := time.Now().Add(time.Minute)
	last := -1
	for time.Now().Before(until) {
		got, err := r.inFlight(ctx)
		if err != nil {
			return err
		}
		if got >= n {
			return nil
		}
		last = got
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("the server counted %d requests running or waiting after a minute, not the %d sent", last, n)
}

// inFlight is vllm:num_requests_running + vllm:num_requests_waiting.
func (r *recorder) inFlight(ctx context.Context) (int, error) {
	resp, err := r.do(ctx, "GET", "/metrics", nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "vllm:num_requests_running{") && !strings.HasPrefix(line, "vllm:num_requests_waiting{") {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v); err == nil {
			sum += v
		}
	}
	return int(sum), sc.Err()
}

// completion is a /v1/completions body: prompt, max_tokens, ignore_eos
// and greedy sampling, streamed as usage says (streamOptions).
func (r *recorder) completion(prompt []int, maxTokens int, usage string) map[string]any {
	b := map[string]any{"model": r.o.Model, "prompt": prompt, "max_tokens": maxTokens, "ignore_eos": true, "temperature": 0}
	r.streamOptions(b, usage)
	return b
}

// chat is a /v1/chat/completions body, streaming as completion's.
func (r *recorder) chat(maxTokens int, usage string) map[string]any {
	b := map[string]any{"model": r.o.Model, "messages": chatMessages, "max_tokens": maxTokens, "ignore_eos": true, "temperature": 0}
	r.streamOptions(b, usage)
	return b
}

// streamOptions sets b's stream and stream_options for usage: "none"
// does not stream, "stream" streams without stream_options, "usage" with
// include_usage, "continuous" with continuous_usage_stats too.
func (r *recorder) streamOptions(b map[string]any, usage string) {
	switch usage {
	case "usage":
		b["stream"] = true
		b["stream_options"] = map[string]any{"include_usage": true}
	case "continuous":
		b["stream"] = true
		b["stream_options"] = map[string]any{"include_usage": true, "continuous_usage_stats": true}
	case "stream":
		b["stream"] = true
	}
}

// health polls GET /health until it answers 200, noting each distinct
// answer before it.
func (r *recorder) health(ctx context.Context) (Health, error) {
	h := Health{Loading: []string{}}
	until := time.Now().Add(r.o.ReadyTimeout)
	for {
		a, err := r.send(ctx, "GET", "/health", nil, nil)
		if err == nil && a.Status == http.StatusOK {
			h.Ready = a
			return h, nil
		}
		seen := ""
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			seen = "connection refused"
		case errors.Is(err, syscall.ECONNRESET):
			seen = "connection reset"
		case err != nil && ctx.Err() != nil:
			return h, ctx.Err()
		case err != nil:
			seen = "error"
		default:
			seen = fmt.Sprintf("HTTP %d", a.Status)
		}
		if !slices.Contains(h.Loading, seen) {
			h.Loading = append(h.Loading, seen)
		}
		if time.Now().After(until) {
			return h, fmt.Errorf("the server was not ready after %v (GET /health: %s)", r.o.ReadyTimeout, seen)
		}
		select {
		case <-ctx.Done():
			return h, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// maxModelLen waits until /v1/models lists the model and returns its
// max_model_len.
func (r *recorder) maxModelLen(ctx context.Context) (int, error) {
	for range 100 {
		resp, err := r.do(ctx, "GET", "/v1/models", nil)
		if err != nil {
			return 0, err
		}
		var list struct {
			Data []struct {
				ID          string `json:"id"`
				MaxModelLen int    `json:"max_model_len"`
			} `json:"data"`
		}
		err = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if err != nil {
			return 0, fmt.Errorf("GET /v1/models: %w", err)
		}
		for _, m := range list.Data {
			if m.ID == r.o.Model && m.MaxModelLen > 0 {
				return m.MaxModelLen, nil
			}
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return 0, fmt.Errorf("GET /v1/models does not list %q with its max_model_len", r.o.Model)
}

// get and post send one request and record its answer.
func (r *recorder) get(ctx context.Context, path string) (Answer, error) {
	return r.send(ctx, "GET", path, nil, nil)
}

func (r *recorder) post(ctx context.Context, path string, body map[string]any) (Answer, error) {
	return r.send(ctx, "POST", path, body, nil)
}

// send sends one request, calls headers (if set) once the answer's
// headers are in, and records the answer: its status, content type, and
// its body's shape or its events.
func (r *recorder) send(ctx context.Context, method, path string, body map[string]any, headers func()) (Answer, error) {
	a, _, err := r.exchange(ctx, method, path, body, headers)
	return a, err
}

// exchange is send that also returns the answer's body as sent.
func (r *recorder) exchange(ctx context.Context, method, path string, body map[string]any, headers func()) (Answer, []byte, error) {
	resp, err := r.do(ctx, method, path, body)
	if err != nil {
		return Answer{}, nil, err
	}
	defer resp.Body.Close()
	if headers != nil {
		headers()
	}
	a := Answer{Status: resp.StatusCode, ContentType: strings.ToLower(resp.Header.Get("Content-Type"))}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return a, raw, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if strings.HasPrefix(a.ContentType, "text/event-stream") {
		a.Events = events(eventData(raw))
		return a, raw, nil
	}
	a.Body = bodyShape(raw)
	return a, raw, nil
}

// do sends one request with a JSON body (if any).
func (r *recorder) do(ctx context.Context, method, path string, body map[string]any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(r.o.URL, "/")+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return r.client.Do(req)
}

// eventData splits an event stream into its events' data fields.
func eventData(raw []byte) []string {
	var out []string
	for block := range strings.SplitSeq(strings.ReplaceAll(string(raw), "\r\n", "\n"), "\n\n") {
		var data []string
		for line := range strings.SplitSeq(block, "\n") {
			if d, ok := strings.CutPrefix(line, "data:"); ok {
				data = append(data, strings.TrimPrefix(d, " "))
			}
		}
		if len(data) > 0 {
			out = append(out, strings.Join(data, "\n"))
		}
	}
	return out
}

// completionTokens is a JSON body's usage.completion_tokens, nil without.
func completionTokens(raw []byte) *int {
	var b struct {
		Usage *struct {
			CompletionTokens *int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(raw, &b) != nil || b.Usage == nil {
		return nil
	}
	return b.Usage.CompletionTokens
}

// repeat is n copies of id.
func repeat(id, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = id
	}
	return out
}
