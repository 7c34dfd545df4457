package runner

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/measure"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/shellcmd"
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
		notes    []event.Note // what it tells, when it returns no error
	}{
		{name: "window and -sim carry over", rs: prev(nil), wantDur: time.Second, wantSim: true,
			notes: []event.Note{event.WindowCarried{Window: time.Second}, event.SimCarried{}}},
		{name: "the same -duration again", flags: ResumeSettings{Duration: time.Second}, rs: prev(nil), wantDur: time.Second, wantSim: true,
			notes: []event.Note{event.SimCarried{}}},
		{name: "another -duration", flags: ResumeSettings{Duration: 2 * time.Second}, rs: prev(nil), wantCode: exit.Usage, wantMsg: "that run measured 1s windows, not -duration 2s"},
		{name: "max_output changed", rs: prev(func(r *result.Results) { r.Measure.MaxOutput = 256 }), wantCode: exit.Usage, wantMsg: "the spec's measure block changed since that run (max_output 256 →"},
		{name: "launch changed", rs: prev(func(r *result.Results) { r.Server.Argv = []string{"vllm", "serve", "other"} }), wantCode: exit.Usage, wantMsg: "the server's launch command changed since that run"},
		{name: "endpoint carries over", rs: prev(func(r *result.Results) {
			r.Server.Simulated, r.Server.Argv, r.Server.Endpoint = false, nil, "http://10.0.0.1:8000"
		}), wantDur: time.Second, wantEP: "http://10.0.0.1:8000",
			notes: []event.Note{event.WindowCarried{Window: time.Second}, event.EndpointCarried{Endpoint: "http://10.0.0.1:8000"}}},
		{name: "an endpoint that was a simulator carries over as the endpoint", rs: prev(func(r *result.Results) {
			r.Server.Simulated, r.Server.Argv, r.Server.Endpoint = true, nil, "http://127.0.0.1:8123"
		}), wantDur: time.Second, wantEP: "http://127.0.0.1:8123",
			notes: []event.Note{event.WindowCarried{Window: time.Second}, event.EndpointCarried{Endpoint: "http://127.0.0.1:8123"}}},
		{name: "only cells.jsonl survived", rs: &Resumed{Dir: "OUT", Server: "q"}},
		{name: "the same workload", rs: prev(func(r *result.Results) { r.Workload = measure.WorkloadRecord(sp.Workload) }), wantDur: time.Second, wantSim: true,
			notes: []event.Note{event.WindowCarried{Window: time.Second}, event.SimCarried{}}},
		{name: "workload changed", rs: prev(func(r *result.Results) {
			r.Workload = measure.WorkloadRecord(&spec.Workload{Options: workload.Options{Prompt: "random", Seed: 7}})
		}),
			wantCode: exit.Usage, wantMsg: `the spec's workload changed since that run (was {"prompt":"random"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.flags
			var notes []event.Note
			err := tc.rs.MatchPrevious(sp, &f, func(n event.Note) { notes = append(notes, n) })
			if exit.Code(err) != tc.wantCode {
				t.Fatalf("exit %d (%v), want %d", exit.Code(err), err, tc.wantCode)
			}
			if err != nil && !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q lacks %q", err, tc.wantMsg)
			}
			if err == nil && (f.Duration != tc.wantDur || f.Sim != tc.wantSim || f.Endpoint != tc.wantEP) {
				t.Errorf("duration %v sim %v endpoint %q; want %v %v %q", f.Duration, f.Sim, f.Endpoint, tc.wantDur, tc.wantSim, tc.wantEP)
			}
			if d := cmp.Diff(tc.notes, notes); err == nil && d != "" {
				t.Errorf("notes (-want +got):\n%s", d)
			}
		})
	}
}

// TestMatchFlags: a resumed run takes the interrupted run's -run,
// -server, -stream-timeout and -var when not given again, and refuses
// other values (a secret -var it needs given again).
func TestMatchFlags(t *testing.T) {
	recorded := &result.RunFlags{Run: "ctx=8K/conc=(1|2)$", Server: "q", StreamTimeout: "5s",
		Vars: map[string]string{"sim_args": "[]", "api_key": shellcmd.Redacted}}
	rs := &Resumed{Dir: "OUT", Server: "q", Previous: &result.Results{Flags: recorded}}
	tests := []struct {
		name    string
		rs      *Resumed
		now     result.RunFlags
		given   []string
		want    result.RunFlags
		wantMsg string       // the usage error; "" for none
		notes   []event.Note // what it tells when it returns no error
	}{
		{name: "every flag carries over", rs: rs, now: result.RunFlags{Vars: map[string]string{"api_key": "k"}},
			want: result.RunFlags{Run: recorded.Run, Server: "q", StreamTimeout: "5s", Vars: map[string]string{"sim_args": "[]", "api_key": "k"}},
			notes: []event.Note{event.FlagCarried{Flag: "run", Value: recorded.Run}, event.FlagCarried{Flag: "server", Value: "q"},
				event.FlagCarried{Flag: "stream-timeout", Value: "5s"}, event.VarsCarried{Vars: []event.Var{{Name: "sim_args", Value: "[]"}}}}},
		{name: "the same flags again", rs: rs, given: []string{"run", "server"},
			now:   result.RunFlags{Run: recorded.Run, Server: "q", Vars: map[string]string{"sim_args": "[]", "api_key": "k"}},
			want:  result.RunFlags{Run: recorded.Run, Server: "q", StreamTimeout: "5s", Vars: map[string]string{"sim_args": "[]", "api_key": "k"}},
			notes: []event.Note{event.FlagCarried{Flag: "stream-timeout", Value: "5s"}}},
		{name: "another -run", rs: rs, given: []string{"run"}, now: result.RunFlags{Run: "conc=4"},
			wantMsg: "-resume OUT: that run was given -run 'ctx=8K/conc=(1|2)$', not -run conc=4: a resumed run measures the rest of what that run was asked; drop -run"},
		{name: "-run where the first run had none", rs: &Resumed{Dir: "OUT", Previous: &result.Results{Flags: &result.RunFlags{}}}, given: []string{"run"}, now: result.RunFlags{Run: "conc=4"},
			wantMsg: "that run was given no -run, not -run conc=4"},
		{name: "another -server", rs: rs, given: []string{"server"}, now: result.RunFlags{Server: "r"},
			wantMsg: "that run was given -server q, not -server r"},
		{name: "another -stream-timeout is allowed", rs: rs, given: []string{"stream-timeout"}, now: result.RunFlags{StreamTimeout: "9s", Vars: map[string]string{"api_key": "k"}},
			want:  result.RunFlags{Run: recorded.Run, Server: "q", StreamTimeout: "9s", Vars: map[string]string{"sim_args": "[]", "api_key": "k"}},
			notes: []event.Note{event.FlagCarried{Flag: "run", Value: recorded.Run}, event.FlagCarried{Flag: "server", Value: "q"}, event.VarsCarried{Vars: []event.Var{{Name: "sim_args", Value: "[]"}}}}},
		{name: "another -var", rs: rs, now: result.RunFlags{Vars: map[string]string{"api_key": "k", "sim_args": `["--sim-slowdown", "1.2"]`}},
			wantMsg: `that run was given -var sim_args='[]', not '["--sim-slowdown", "1.2"]'`},
		{name: "a -var the first run was not given", rs: rs, now: result.RunFlags{Vars: map[string]string{"api_key": "k", "extra": "1"}},
			wantMsg: "that run was not given -var extra"},
		{name: "a secret -var not given again", rs: rs, now: result.RunFlags{},
			wantMsg: "that run was given -var api_key, a secret results.json does not record: give -var api_key=… again"},
		{name: "results without flags", rs: &Resumed{Dir: "OUT", Previous: &result.Results{}}, given: []string{"run"}, now: result.RunFlags{Run: "x"},
			want: result.RunFlags{Run: "x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			now := tc.now
			var notes []event.Note
			err := tc.rs.MatchFlags(&now, func(f string) bool { return slices.Contains(tc.given, f) }, func(n event.Note) { notes = append(notes, n) })
			if tc.wantMsg != "" {
				if exit.Code(err) != exit.Usage || !strings.Contains(fmt.Sprint(err), tc.wantMsg) {
					t.Fatalf("err = %v (exit %d), want exit 2 with %q", err, exit.Code(err), tc.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(now, tc.want) {
				t.Errorf("flags = %+v, want %+v", now, tc.want)
			}
			if d := cmp.Diff(tc.notes, notes); d != "" {
				t.Errorf("notes (-want +got):\n%s", d)
			}
		})
	}
}
