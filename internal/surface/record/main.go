// Command record records the observable surface of a server with vLLM's
// HTTP API (internal/surface) into a JSON file: start it while the server
// loads, so that it sees what /health answers then. It sends a few dozen
// requests, three of them long, to fill the queue that
// --max-num-queued-reqs bounds.
//
//	go run ./internal/surface/record -url http://127.0.0.1:8000 -model tiny -log server.log -out surface.json
//
// scripts/record-vllm-surface.sh boots a real vLLM and runs it; the
// simulator's fidelity test (internal/sim/fidelity_test.go) calls
// surface.Record itself.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/slogate/slogate/internal/surface"
)

func main() {
	url := flag.String("url", "", "the server's base URL, e.g. http://127.0.0.1:8000")
	model := flag.String("model", "", "the served model name")
	logFile := flag.String("log", "", "the server's log file (stdout and stderr), for the KV cache lines; none when empty")
	out := flag.String("out", "", "the JSON file to write (stdout when empty)")
	queued := flag.Int("max-num-queued-reqs", 3, "the server's --max-num-queued-reqs: requests kept in flight before the rejection probes")
	timeout := flag.Duration("ready-timeout", 10*time.Minute, "how long to wait for /health to answer 200")
	flag.Parse()
	if *url == "" || *model == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: record -url URL -model NAME [-log FILE] [-out FILE] [-max-num-queued-reqs N] [-ready-timeout D]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	s, err := surface.Record(ctx, surface.Options{URL: *url, Model: *model, Log: *logFile, MaxQueued: *queued, ReadyTimeout: *timeout})
	if err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
	raw, err := surface.Marshal(s)
	if err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
	if *out == "" {
		os.Stdout.Write(raw)
		return
	}
	if err := os.WriteFile(*out, raw, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "record: wrote %s (%d metric families, %d streams, %d error answers)\n", *out, len(s.Metrics), len(s.Streams), len(s.Errors))
}
