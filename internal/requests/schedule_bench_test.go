package requests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/workload"
)

// writeShareGPT writes a ShareGPT file of n entries to dir: prompts of
// 60–600 bytes and answers of 100–1500, varied by entry so the filter
// keeps most of them (with the simulator's two bytes a token).
func writeShareGPT(tb testing.TB, dir string, n int) string {
	tb.Helper()
	type turn struct {
		From  string `json:"from"`
		Value string `json:"value"`
	}
	type entry struct {
		ID            string `json:"id"`
		Conversations []turn `json:"conversations"`
	}
	words := strings.Fields(Corpus()[:20000])
	text := func(seed, bytes int) string {
		var b strings.Builder
		for i := seed; b.Len() < bytes; i++ {
			b.WriteString(words[i%len(words)])
			b.WriteByte(' ')
		}
		return b.String()
	}
	entries := make([]entry, n)
	for i := range entries {
		entries[i] = entry{ID: fmt.Sprint(i), Conversations: []turn{
			{"human", text(i*7, 60+(i*37)%540)},
			{"gpt", text(i*11, 100+(i*53)%1400)},
		}}
	}
	data, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, "sharegpt.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkPlanShareGPT10k reads a 10,000-entry ShareGPT file and plans
// 10,000 requests from it: parse, shuffle, count every prompt and reference
// (an in-process tokenizer: the server's /tokenize round trips are not in
// this figure), filter, build the requests.
func BenchmarkPlanShareGPT10k(b *testing.B) {
	path := writeShareGPT(b, b.TempDir(), 10000)
	info, _ := os.Stat(path)
	b.SetBytes(info.Size())
	var plan *Schedule
	for b.Loop() {
		var err error
		plan, err = NewScheduler(&pairTokenizer{}, workload.Options{Prompt: workload.DatasetPrompt, DatasetPath: path, Seed: 1}, nil).
			Schedule(context.Background(), ScheduleConfig{Requests: 10000})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(plan.Usable), "usable")
	b.ReportMetric(float64(plan.Reused), "reused")
}

// BenchmarkPlanRandom10k plans 10,000 random-token prompts with a normal
// input distribution (mean 1000) and a uniform output distribution.
func BenchmarkPlanRandom10k(b *testing.B) {
	opts := workload.Options{Prompt: workload.Random, Seed: 1,
		InputTokens:  workload.Length{Distribution: workload.Normal, Mean: 1000, Stddev: 200, Min: 400, Max: 1600},
		OutputTokens: workload.Length{Distribution: workload.Uniform, Min: 64, Max: 512}}
	for b.Loop() {
		if _, err := NewScheduler(&fakeTokenizer{}, opts, nil).Schedule(context.Background(), ScheduleConfig{Requests: 10000}); err != nil {
			b.Fatal(err)
		}
	}
}
