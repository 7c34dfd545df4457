package sim

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rawStream sends one streaming completions request over a raw TCP
// connection and counts the "data: {" chunks it receives, with as little
// client work as possible so the benchmark measures the simulator.
func rawStream(addr string, maxTokens int, chunks *atomic.Int64) error {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	body := fmt.Sprintf(`{"prompt":[1,2,3],"max_tokens":%d,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}}`, maxTokens)
	fmt.Fprintf(conn, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	marker := []byte("data: {")
	done := []byte("data: [DONE]")
	// work holds the last few bytes of the previous read followed by the
	// new ones, so a marker split across reads is counted exactly once.
	work := make([]byte, 64<<10)
	keep := 0
	for {
		n, err := conn.Read(work[keep:])
		if n > 0 {
			b := work[:keep+n]
			chunks.Add(int64(bytes.Count(b, marker) - bytes.Count(b[:keep], marker)))
			if bytes.Contains(b, done) {
				return nil
			}
			k := min(len(b), len(done)-1)
			copy(work, b[len(b)-k:])
			keep = k
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// BenchmarkStream128 streams single-token chunks to 128 concurrent streams
// and reports the tokens per second the simulator delivers. Run on one
// core with: go test ./sim -run '^$' -bench Stream128 -cpu 1
// (the client shares that core, so this understates the simulator alone;
// e2e/sim_test.go measures the simulator process's own CPU time).
func BenchmarkStream128(b *testing.B) {
	const streams = 128
	ts := startTest(b, "m", "--sim-tbt", "100us", "--sim-one-token-chunks", "--max-model-len", "100000000", "--sim-kv-tokens", "200000000")
	defer ts.Close()
	u, _ := url.Parse(ts.URL)
	per := max(b.N/streams, 1)
	var chunks atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := rawStream(u.Host, per, &chunks); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	tokens := per * streams
	// Content chunks carry one token each; the usage-only chunk does not.
	if got := chunks.Load() - streams; got != int64(tokens) {
		b.Fatalf("received %d token chunks, want %d", got, tokens)
	}
	b.ReportMetric(float64(tokens)/el.Seconds(), "tokens/s")
}
