package measure

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/measure/sse"
	"github.com/slogate/slogate/internal/promread"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/warning"
)

// This file tells a request the server refused at admission, its queue
// full (docs/method.md#rejections), from a failed one: a rejection is
// counted apart, never a cell's error nor the run's end, and the cell
// cross-checks its count with the server's counter.

// rejection is a generation request the server refused at admission
// (engine.Rejecter: vLLM's 503 under --max-num-queued-reqs or
// --max-num-queued-tokens). Its record's status is
// result.RequestRejected.
type rejection struct{ answer error }

func (r rejection) Error() string {
	return "the server refused the request at admission (its queue is full): " + r.answer.Error()
}

func (r rejection) Unwrap() error { return r.answer }

// rejectBackoff is how long a decode stream, or a closed loop's slot,
// waits after a refusal before it sends again: the server said it is
// full, and at once it would only be refused again, thousands of times a
// second (vLLM refuses in a millisecond). Long enough that a stream
// refused throughout a 10 s window leaves 200 records, short against a
// decode step's tens of milliseconds times the requests a slot frees.
var rejectBackoff = 50 * time.Millisecond

// rejectedRetryFor bounds how long a cold prefill or warm-up request is
// sent again while the server refuses it: alone on the server, it is
// refused only while the requests a cell before it closed are still being
// dropped, or by a limit of 0.
var rejectedRetryFor = 5 * time.Second

// isRejection reports whether err is a rejection.
func isRejection(err error) bool {
	var r rejection
	return errors.As(err, &r)
}

// asRejection is err as a rejection when it is the server refusing the
// request at admission as e answers it (engine.Rejected): an HTTP status
// with its error object, or an error event inside a stream answered 200;
// err itself otherwise.
func asRejection(e engine.Engine, err error) error {
	if err == nil || isRejection(err) {
		return err
	}
	var se *lifecycle.StreamStatusError
	var ae *sse.APIError
	switch {
	case errors.As(err, &se):
		code, msg := errorObject(se.Body)
		if engine.Rejected(e, se.Code, code, msg) {
			return rejection{err}
		}
	case errors.As(err, &ae):
		if engine.Rejected(e, http.StatusOK, apiCode(ae.Code), ae.Message) {
			return rejection{err}
		}
	}
	return err
}

// errorObject reads an error answer's body, {"error": {"message", "code"}}
// (or the flat {"message", "code"}): its code (0 when none) and message
// (the body itself when it is no such object).
func errorObject(body string) (code int, message string) {
	var w struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Code    any             `json:"code"`
	}
	if json.Unmarshal([]byte(body), &w) != nil {
		return 0, body
	}
	var inner struct {
		Message string `json:"message"`
		Code    any    `json:"code"`
	}
	if len(w.Error) > 0 && json.Unmarshal(w.Error, &inner) == nil && inner.Message != "" {
		return apiCode(inner.Code), inner.Message
	}
	if w.Message != "" {
		return apiCode(w.Code), w.Message
	}
	return 0, body
}

// apiCode is an error object's code as an integer: a JSON number or a
// string of digits; 0 otherwise.
func apiCode(v any) int {
	switch c := v.(type) {
	case float64:
		if c == math.Trunc(c) && math.Abs(c) < 1e6 {
			return int(c)
		}
	case string:
		if n, err := strconv.Atoi(c); err == nil {
			return n
		}
	}
	return 0
}

// rejectionCount is what the client counted of a cell's rejections, for
// the cross-check with the server's counter (cellRejections).
type rejectionCount struct {
	// refused is the cell's requests answered with a refusal; unanswered
	// those it closed before any answer came, each of which the server
	// may have refused unseen.
	refused, unanswered int
}

// counterBefore reads the server's rejection counter before a cell's first
// request; ok false when the read failed (no cross-check then).
func (m *Meter) counterBefore(ctx context.Context) (s promread.Snapshot, ok bool) {
	if m.Server == nil || m.Server.Client == nil {
		return s, false
	}
	s, _, err := m.Server.Client.Metrics(ctx)
	return s, err == nil
}

// cellRejections is a cell's rejections as the client counted them (c)
// and as the server's counter moved between before, read before the
// cell's first request, and a read now, after its last ended
// (docs/method.md#rejections): nil when neither counted any; with the
// warning when the server's count does not fit the client's
// (result.Rejections.Agree).
func (m *Meter) cellRejections(ctx context.Context, before promread.Snapshot, beforeOK bool, c rejectionCount) (*result.Rejections, []warning.Warning) {
	r := &result.Rejections{Client: c.refused, Unanswered: c.unanswered}
	if beforeOK && before.HasRejections {
		if after, _, err := m.Server.Client.Metrics(ctx); err == nil && after.HasRejections {
			n := int64(math.Round(max(after.Rejections-before.Rejections, 0)))
			r.Server = &n
			for reason, v := range after.RejectionsByReason {
				if d := int64(math.Round(max(v-before.RejectionsByReason[reason], 0))); d > 0 {
					if r.ByReason == nil {
						r.ByReason = map[string]int64{}
					}
					r.ByReason[reason] = d
				}
			}
		}
	}
	if r.Client == 0 && (r.Server == nil || *r.Server == 0) {
		return nil, nil
	}
	if r.Agree() {
		return r, nil
	}
	return r, []warning.Warning{warning.New(warning.RejectionsGap, "", "", map[string]float64{warning.FigServerRejected: float64(*r.Server), warning.FigClientRejected: float64(r.Client), warning.FigUnanswered: float64(r.Unanswered)})}
}

// backoff waits rejectBackoff after a refusal, or until ctx ends.
func backoff(ctx context.Context) {
	t := time.NewTimer(rejectBackoff)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
