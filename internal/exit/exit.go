// Package exit gives errors the process exit code they stand for, so that
// the code is decided where the error is created and mapped once in main.
package exit

import (
	"errors"
	"fmt"
)

// Exit codes, as documented in README.md#exit-codes.
const (
	OK    = 0 // every assertion passed
	Fail  = 1 // at least one assertion or baseline comparison failed
	Usage = 2 // usage error or invalid spec
	Infra = 3 // server did not start or crashed, endpoint unreachable, a cell could not be measured
	// Inconclusive: a baseline comparison could not decide (neither
	// regressed nor shown within the tolerance) and nothing failed: measure
	// more. Below Fail and Infra in severity (Worst) despite its number.
	Inconclusive = 4
	SIGINT       = 130 // interrupted (Ctrl-C): 128 + signal 2
	SIGTERM      = 143 // terminated: 128 + signal 15
)

// severity orders the exit codes for Worst: OK < Inconclusive < Fail <
// Usage < Infra < the signals.
func severity(code int) int {
	switch code {
	case OK:
		return 0
	case Inconclusive:
		return 1
	case Fail:
		return 2
	case Usage:
		return 3
	case Infra:
		return 4
	}
	return code // the signals, 130 and 143, above all
}

// Worst is the more severe of two exit codes, for a run of several servers
// and for merge: a regression anywhere (1) and an infrastructure error (3)
// outweigh an inconclusive comparison (4).
func Worst(a, b int) int {
	if severity(b) > severity(a) {
		return b
	}
	return a
}

// Error is an error that carries the exit code it maps to.
type Error struct {
	Code int   // the process exit code: OK, Fail, Usage, Infra, SIGINT or SIGTERM
	Err  error // what happened, shown to the user unless Quiet
	// Quiet is set when the message has already been shown to the user (as
	// diagnostics or FAIL lines), so main prints nothing more.
	Quiet bool
}

// Error returns the wrapped error's message.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// With wraps err with code; a nil err stays nil.
func With(code int, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// Usagef builds a usage error (exit 2).
func Usagef(format string, args ...any) error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, args...)}
}

// Infraf builds an infrastructure error (exit 3).
func Infraf(format string, args ...any) error {
	return &Error{Code: Infra, Err: fmt.Errorf(format, args...)}
}

// Code returns the exit code for err: 0 for nil, the code of the first
// *Error in its chain, and Infra for any other error (an unexpected error is
// never reported as a test failure).
func Code(err error) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Infra
}

// Quiet returns an error for code whose story has already been told on
// the console; main exits with code and prints nothing.
func Quiet(code int) error {
	return &Error{Code: code, Err: fmt.Errorf("exit status %d", code), Quiet: true}
}

// IsQuiet reports whether err's message was already shown to the user.
func IsQuiet(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Quiet
}
