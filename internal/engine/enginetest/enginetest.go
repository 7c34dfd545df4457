// Package enginetest is an engine.Conn over HTTP for the tests of the
// engine packages: they read an httptest server through it as lifecycle's
// Client reads a real one, without depending on lifecycle.
package enginetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/promread"
)

// Conn is an engine.Conn to the server at Base, its /metrics read by the
// engine E.
type Conn struct {
	Base      string // http://host:port
	ModelName string
	E         engine.Engine
}

var _ engine.Conn = Conn{}

// Do sends the request with a 10 s bound.
func (c Conn) Do(ctx context.Context, method, path string, body any) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.Base, "/")+path, rd)
	if err != nil {
		return 0, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// Metrics is GET /metrics read by the engine.
func (c Conn) Metrics(ctx context.Context) (promread.Snapshot, time.Time, error) {
	now := time.Now()
	code, b, err := c.Do(ctx, http.MethodGet, "/metrics", nil)
	if err != nil {
		return promread.Snapshot{}, now, err
	}
	if code != http.StatusOK {
		return promread.Snapshot{}, now, fmt.Errorf("GET /metrics answered %d", code)
	}
	s, err := c.E.ParseMetrics(bytes.NewReader(b), c.ModelName)
	return s, now, err
}

// Model is ModelName.
func (c Conn) Model() string { return c.ModelName }
