package requests

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/workload"
)

// This file reads trace datasets (docs/spec.md#traces): one request
// a line, its arrival time, its lengths and, where the format has them,
// the prefix blocks it shares.

// traceField reads one field (JSONL) or column (CSV) of a line's request
// into r; raw is the field's JSON, or the column's text.
type traceField struct {
	key  string
	read func(r *workload.TraceRequest, raw string) error
}

// traceReader is how one trace format's lines become requests: the
// fields read, each a traceField, in workload.TraceFormat.Keys' order
// first (those every line needs), then the optional ones.
type traceReader struct {
	format   string
	fields   []traceField
	optional []traceField
}

// traceReaders are the trace formats' readers, one a row of
// workload.TraceFormats.
var traceReaders = []traceReader{
	{format: workload.FormatMooncake, fields: []traceField{
		{"timestamp", readClock(time.Millisecond)}, {"input_length", readCount(inputOf)}, {"output_length", readCount(outputOf)}, {"hash_ids", readHashIDs},
	}},
	{format: workload.FormatBailian, fields: []traceField{
		{"chat_id", readWhole(func(r *workload.TraceRequest) *int64 { return &r.Chat })}, {"timestamp", readClock(time.Second)},
		{"input_length", readCount(inputOf)}, {"output_length", readCount(outputOf)},
	}, optional: []traceField{
		{"parent_chat_id", readWhole(func(r *workload.TraceRequest) *int64 { return &r.Parent })}, {"turn", readTurn}, {"hash_ids", readHashIDs},
	}},
	{format: workload.FormatAzure, fields: []traceField{
		{"TIMESTAMP", readDatetime}, {"ContextTokens", readCount(inputOf)}, {"GeneratedTokens", readCount(outputOf)},
	}},
	{format: workload.FormatBurstGPT, fields: []traceField{
		{"Timestamp", readClock(time.Second)}, {"Request tokens", readCount(inputOf)}, {"Response tokens", readCount(outputOf)},
	}},
}

func inputOf(r *workload.TraceRequest) *int  { return &r.InputTokens }
func outputOf(r *workload.TraceRequest) *int { return &r.OutputTokens }

// readerOf is format's traceReader.
func readerOf(format string) (traceReader, bool) {
	i := slices.IndexFunc(traceReaders, func(r traceReader) bool { return r.format == format })
	if i < 0 {
		return traceReader{}, false
	}
	return traceReaders[i], true
}

// readClock reads a time in unit (a JSON or CSV number, whole or not).
func readClock(unit time.Duration) func(*workload.TraceRequest, string) error {
	return func(r *workload.TraceRequest, raw string) error {
		v, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("is a time of at least 0; got %s", raw)
		}
		r.At = time.Duration(math.Round(v * float64(unit)))
		return nil
	}
}

// azureLayouts are the datetimes Azure's traces write: 2023's
// "2023-11-16 18:15:46.6805900" and 2024's "2024-05-10
// 00:00:00.009930+00:00" (with its offset), each with or without the
// fraction.
var azureLayouts = []string{"2006-01-02 15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", time.RFC3339Nano}

func readDatetime(r *workload.TraceRequest, raw string) error {
	for _, layout := range azureLayouts {
		if t, err := time.Parse(layout, strings.TrimSpace(raw)); err == nil {
			r.At = time.Duration(t.UnixNano())
			return nil
		}
	}
	return fmt.Errorf("is a datetime such as 2023-11-16 18:15:46.6805900; got %s", raw)
}

// readCount reads a token count (a whole number ≥ 0) into dst's field.
func readCount(dst func(*workload.TraceRequest) *int) func(*workload.TraceRequest, string) error {
	return func(r *workload.TraceRequest, raw string) error {
		v, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 32)
		if err != nil || v < 0 {
			return fmt.Errorf("is a whole number of tokens; got %s", raw)
		}
		*dst(r) = int(v)
		return nil
	}
}

// readWhole reads a whole number (an ID) into dst's field.
func readWhole(dst func(*workload.TraceRequest) *int64) func(*workload.TraceRequest, string) error {
	return func(r *workload.TraceRequest, raw string) error {
		v, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
		if err != nil {
			return fmt.Errorf("is a whole number; got %s", raw)
		}
		*dst(r) = v
		return nil
	}
}

func readTurn(r *workload.TraceRequest, raw string) error {
	v, err := strconv.Atoi(strings.TrimSpace(raw))
	if err != nil || v < 1 {
		return fmt.Errorf("is a whole number ≥ 1; got %s", raw)
	}
	r.Turn = v
	return nil
}

func readHashIDs(r *workload.TraceRequest, raw string) error {
	if err := json.Unmarshal([]byte(raw), &r.HashIDs); err != nil {
		return fmt.Errorf("is a list of whole block IDs; got %s", raw)
	}
	return nil
}

// detectTrace names the trace format whose fields or columns the first
// line holds ("" when it is no trace's), or says why it cannot tell.
func detectTrace(first []byte) (string, error) {
	var keys []string
	var probe map[string]json.RawMessage
	csvHeader := false
	if json.Unmarshal(first, &probe) == nil {
		for k := range probe {
			keys = append(keys, k)
		}
	} else if rec, err := csv.NewReader(bytes.NewReader(first)).Read(); err == nil && len(rec) > 1 {
		keys, csvHeader = trimAll(rec), true
	}
	var match []string
	for _, f := range workload.TraceFormats {
		if f.CSV == csvHeader && slices.Contains(keys, f.Mark) && !slices.ContainsFunc(f.Unless, func(k string) bool { return slices.Contains(keys, k) }) {
			match = append(match, f.Name)
		}
	}
	switch {
	case len(match) == 1:
		return match[0], nil
	case len(match) > 1:
		return "", fmt.Errorf("the first line has the fields of %s traces alike; set format to the trace's", strings.Join(match, " and "))
	case csvHeader:
		return "", fmt.Errorf("the first line is a CSV header of no known trace (%s); set format, or fix the header", traceHeaders(true))
	case slices.Contains(keys, "input_length"):
		return "", fmt.Errorf("the first line has input_length but not the fields of a known trace (%s); set format, or fix the line", traceHeaders(false))
	}
	return "", nil
}

// traceHeaders lists the CSV (or JSONL) trace formats with the keys each
// needs, for messages.
func traceHeaders(csvFormats bool) string {
	var parts []string
	for _, f := range workload.TraceFormats {
		if f.CSV == csvFormats {
			parts = append(parts, fmt.Sprintf("%s: %s", f.Name, strings.Join(f.Keys, ", ")))
		}
	}
	return strings.Join(parts, "; ")
}

func trimAll(rec []string) []string {
	out := make([]string, len(rec))
	for i, s := range rec {
		out[i] = strings.TrimSpace(strings.TrimPrefix(s, "\ufeff"))
	}
	return out
}

// readTrace reads a trace of format f: every line a request, in arrival
// order. A missing field or column, a value of the wrong kind and a time
// before the previous line's are errors at their line; a line without
// input or output tokens is counted (Dataset.ZeroLength) and left out.
func readTrace(d *workload.Dataset, data []byte, f workload.TraceFormat, fail func(int, string, ...any) error) error {
	tr, _ := readerOf(f.Name)
	add := func(line int, r workload.TraceRequest) error {
		if n := len(d.Entries); n > 0 && r.At < d.Entries[n-1].Trace.At {
			prev := d.Entries[n-1]
			return fail(line, "the request arrives %s before line %d's: a trace's lines are in arrival order", (prev.Trace.At - r.At).String(), prev.Line)
		}
		if r.InputTokens < 1 || r.OutputTokens < 1 {
			d.ZeroLength++
			return nil
		}
		d.Entries = append(d.Entries, workload.Entry{Index: len(d.Entries), Line: line, Trace: &r})
		return nil
	}
	if f.CSV {
		return readTraceCSV(data, f, tr, add, fail)
	}
	return eachJSONLine(data, fail, func(n int, fields map[string]json.RawMessage) error {
		r := workload.TraceRequest{Parent: -1}
		for i, fld := range slices.Concat(tr.fields, tr.optional) {
			raw, ok := fields[fld.key]
			if !ok {
				if i < len(tr.fields) {
					return fail(n, "no %q field (a line of format %s is {%s})", fld.key, f.Name, quotedKeys(f.Keys))
				}
				continue
			}
			if err := fld.read(&r, string(raw)); err != nil {
				return fail(n, "%s %v", fld.key, err)
			}
		}
		return add(n, r)
	})
}

// readTraceCSV reads a CSV trace: a header naming the columns, then a
// request a row.
func readTraceCSV(data []byte, f workload.TraceFormat, tr traceReader, add func(int, workload.TraceRequest) error, fail func(int, string, ...any) error) error {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return fail(1, "no CSV header: %v", err)
	}
	header = trimAll(header)
	col := map[string]int{}
	for _, fld := range tr.fields {
		i := slices.Index(header, fld.key)
		if i < 0 {
			return fail(1, "no %q column (the header of format %s holds %s)", fld.key, f.Name, strings.Join(f.Keys, ", "))
		}
		col[fld.key] = i
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				line = pe.Line
			}
			return fail(line, "malformed CSV: %v", errors.Unwrap(err))
		}
		r := workload.TraceRequest{}
		for _, fld := range tr.fields {
			i := col[fld.key]
			if i >= len(rec) {
				return fail(line, "no %s value (the row has %d columns, the header %d)", fld.key, len(rec), len(header))
			}
			if err := fld.read(&r, rec[i]); err != nil {
				return fail(line, "%s %v", fld.key, err)
			}
		}
		if err := add(line, r); err != nil {
			return err
		}
	}
}

func quotedKeys(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = strconv.Quote(k) + ": …"
	}
	return strings.Join(q, ", ")
}

// traceKeys are format's keys, for messages: "timestamp, input_length, …".
func traceKeys(format string) string {
	f, _ := workload.TraceFormatOf(format)
	return strings.Join(f.Keys, ", ")
}
