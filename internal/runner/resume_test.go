package runner

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/measure"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/workload"
)

func TestMatchPrevious(t *testing.T) {
	srv := &spec.Server{Name: "q", Model: "m", Port: 8001}
	sp := &spec.Spec{Servers: []*spec.Server{srv},
		Measure: &spec.Measure{Duration: 30 * time.Second, DurationText: "30s", MaxOutput: 4096, Repeat: 1}}
	prev := func(edit func(*result.Results)) *Resumed {
		r := &result.Results{Server: result.Server{Name: "q", Argv: srv.RedactedArgv(), Simulated: true},
			Measure: result.Measure{Duration: "1s", DurationS: 1, MaxOutput: 4096, Repeat: 1}}
		if edit != nil {
			edit(r)
		}
		return &Resumed{Dir: "OUT", Server: "q", Previous: r}
	}
	tests := []struct {
		name     string
		flags    ResumeSettings
		rs       *Resumed
		wantCode int
		wantMsg  string // in the error when wantCode is not 0
		wantDur  time.Duration
		wantSim  bool
		wantEP   string
	}{
		{name: "window and -sim carry over", rs: prev(nil), wantDur: time.Second, wantSim: true},
		{name: "the same -duration again", flags: ResumeSettings{Duration: time.Second}, rs: prev(nil), wantDur: time.Second, wantSim: true},
		{name: "another -duration", flags: ResumeSettings{Duration: 2 * time.Second}, rs: prev(nil), wantCode: exit.Usage, wantMsg: "that run measured 1s windows, not -duration 2s"},
		{name: "max_output changed", rs: prev(func(r *result.Results) { r.Measure.MaxOutput = 256 }), wantCode: exit.Usage, wantMsg: "the spec's measure block changed since that run (max_output 256 →"},
		{name: "launch changed", rs: prev(func(r *result.Results) { r.Server.Argv = []string{"vllm", "serve", "other"} }), wantCode: exit.Usage, wantMsg: "the server's launch command changed since that run"},
		{name: "endpoint carries over", rs: prev(func(r *result.Results) {
			r.Server.Simulated, r.Server.Argv, r.Server.Endpoint = false, nil, "http://10.0.0.1:8000"
		}), wantDur: time.Second, wantEP: "http://10.0.0.1:8000"},
		{name: "an endpoint that was a simulator carries over as the endpoint", rs: prev(func(r *result.Results) {
			r.Server.Simulated, r.Server.Argv, r.Server.Endpoint = true, nil, "http://127.0.0.1:8123"
		}), wantDur: time.Second, wantEP: "http://127.0.0.1:8123"},
		{name: "only cells.jsonl survived", rs: &Resumed{Dir: "OUT", Server: "q"}},
		{name: "the same workload", rs: prev(func(r *result.Results) { r.Workload = measure.WorkloadRecord(sp.Workload) }), wantDur: time.Second, wantSim: true},
		{name: "workload changed", rs: prev(func(r *result.Results) {
			r.Workload = measure.WorkloadRecord(&spec.Workload{Options: workload.Options{Prompt: "random", Seed: 7}})
		}),
			wantCode: exit.Usage, wantMsg: `the spec's workload changed since that run (was {"prompt":"random"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.flags
			var stderr bytes.Buffer
			err := tc.rs.MatchPrevious(sp, &f, &stderr)
			if exit.Code(err) != tc.wantCode {
				t.Fatalf("exit %d (%v), want %d", exit.Code(err), err, tc.wantCode)
			}
			if err != nil && !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q lacks %q", err, tc.wantMsg)
			}
			if err == nil && (f.Duration != tc.wantDur || f.Sim != tc.wantSim || f.Endpoint != tc.wantEP) {
				t.Errorf("duration %v sim %v endpoint %q; want %v %v %q", f.Duration, f.Sim, f.Endpoint, tc.wantDur, tc.wantSim, tc.wantEP)
			}
		})
	}
}
