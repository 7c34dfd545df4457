package sim

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"testing"
	"time"
)

// TestMemoryFlatLongPrompts sends 128 streaming requests with 251K-token
// prompts (2 MB of JSON each) to the qwen profile and checks the heap stays
// small: prompts are hashed, never kept (keeping them as []int would take
// 128 × 257,024 × 8 B = 263 MB).
func TestMemoryFlatLongPrompts(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("sends 250 MB of requests; a measurement, not for -short or -race")
	}
	ts := startTest(t, append(seedArgv["qwen"], "--sim-log-interval", "0")...)
	u, _ := url.Parse(ts.URL)
	p := make([]int, 257024)
	for i := range p {
		p[i] = 1000 + i%60000 // inside the vocabulary
	}
	body, _ := json.Marshal(map[string]any{"prompt": p, "max_tokens": 4096, "stream": true})
	p = nil
	for range 128 {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		go func() {
			fmt.Fprintf(c, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Length: %d\r\n\r\n", len(body))
			c.Write(body)
			b := make([]byte, 4096)
			for {
				if _, err := c.Read(b); err != nil {
					return
				}
			}
		}()
	}
	// 24,000,000 KV tokens hold 91 requests of 257,024 + 4,096 tokens; 37 wait.
	deadline := time.Now().Add(30 * time.Second)
	for s := ts.srv.engs[0].snapshot(); s.running+s.waiting < 128 || s.running != 91; s = ts.srv.engs[0].snapshot() {
		if time.Now().After(deadline) {
			t.Fatalf("running %d waiting %d after 30s, want 91 and 37", s.running, s.waiting)
		}
		time.Sleep(20 * time.Millisecond)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("heap in use with 128 x 251K streams: %.1f MB", float64(ms.HeapInuse)/(1<<20))
	if ms.HeapInuse > 64<<20 {
		t.Errorf("heap in use %d MB with 128 x 251K streams, want < 64 MB", ms.HeapInuse>>20)
	}
}
