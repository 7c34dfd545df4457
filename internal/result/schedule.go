package result

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// Schedule is what determines a traffic cell's requests and their planned
// arrivals (docs/method.md#traffic-schedules): the arrival process and its
// seed, the rate or the closed loop's concurrency, the warm-up and the
// window, the workload and its settings, and the SHA-256 of the dataset
// file the prompts were read from. Two cells of one Hash send the same
// requests (index for index, the same prompt) at the same planned times,
// so their requests can be compared one for one (a paired replay); two of
// different Hashes cannot, and Differences says why. What happened is not
// part of it: the lag, the cap hits and the server's answers differ
// between runs of one schedule.
type Schedule struct {
	Seed        int64   `json:"seed"`
	Arrivals    string  `json:"arrivals"`
	Burstiness  float64 `json:"burstiness,omitempty"`
	Rate        float64 `json:"rate,omitempty"`        // requests per second; 0 in a closed loop
	Concurrency int     `json:"concurrency,omitempty"` // a closed loop's requests in flight; 0 in an open loop
	WarmUpS     float64 `json:"warm_up_s"`
	WindowS     float64 `json:"window_s"`
	// Workload is the named workload's name ("" for the unnamed one, the
	// context's decode prompts) and Settings what of it decides the
	// prompts, by setting name ("prompt", "input_tokens", "seed",
	// "document_sha256", …, and the cell's "context" and "max_output"),
	// each as text.
	Workload string            `json:"workload,omitempty"`
	Settings map[string]string `json:"settings,omitempty"`
	// DatasetSHA256 is the hex SHA-256 of the dataset file's bytes as read;
	// "" without a dataset.
	DatasetSHA256 string `json:"dataset_sha256,omitempty"`
	// Hash is the hex SHA-256 over every field above (Digest); Seal sets it.
	Hash string `json:"hash"`
}

// scheduleHashVersion opens the hashed text: a change to what the hash
// covers changes it, so an old hash never equals a new one by accident.
const scheduleHashVersion = "slogate/schedule/v1\n"

// Digest is the hex SHA-256 over the schedule's fields but Hash, as
// canonical JSON (encoding/json sorts Settings by name).
func (s *Schedule) Digest() string {
	c := *s
	c.Hash = ""
	b, err := json.Marshal(&c)
	if err != nil {
		panic(fmt.Errorf("result: a schedule does not marshal: %w", err)) // strings and numbers only
	}
	h := sha256.New()
	h.Write([]byte(scheduleHashVersion))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// Seal sets Hash to the schedule's Digest and returns s.
func (s *Schedule) Seal() *Schedule {
	s.Hash = s.Digest()
	return s
}

// ScheduleChange is one field in which two schedules differ: the field
// ("seed", "workload setting input_tokens", "dataset SHA-256") and its
// value on each side, as text.
type ScheduleChange struct {
	Field, A, B string
}

// String is the change as Differences phrases it: "seed 1 vs 2".
func (c ScheduleChange) String() string { return c.Field + " " + c.A + " vs " + c.B }

// Changes are the fields in which schedules a and b differ, in a fixed
// order; nil when they are the same schedule. A nil schedule (a cell
// recorded before schedules were) differs from any other in the one
// field "schedule", "(not recorded)" on its side.
func (a *Schedule) Changes(b *Schedule) []ScheduleChange {
	switch {
	case a == nil && b == nil:
		return nil
	case a == nil:
		return []ScheduleChange{{Field: "schedule", A: "(not recorded)", B: "recorded"}}
	case b == nil:
		return []ScheduleChange{{Field: "schedule", A: "recorded", B: "(not recorded)"}}
	}
	var d []ScheduleChange
	diff := func(what, x, y string) {
		if x != y {
			d = append(d, ScheduleChange{what, x, y})
		}
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	quoted := func(s string) string {
		if s == "" {
			return "(none)"
		}
		return strconv.Quote(s)
	}
	diff("seed", strconv.FormatInt(a.Seed, 10), strconv.FormatInt(b.Seed, 10))
	diff("arrivals", quoted(a.Arrivals), quoted(b.Arrivals))
	diff("burstiness", num(a.Burstiness), num(b.Burstiness))
	diff("rate", num(a.Rate), num(b.Rate))
	diff("concurrency", strconv.Itoa(a.Concurrency), strconv.Itoa(b.Concurrency))
	diff("warm-up", num(a.WarmUpS)+"s", num(b.WarmUpS)+"s")
	diff("window", num(a.WindowS)+"s", num(b.WindowS)+"s")
	diff("workload", quoted(a.Workload), quoted(b.Workload))
	keys := make([]string, 0, len(a.Settings)+len(b.Settings))
	for k := range a.Settings {
		keys = append(keys, k)
	}
	for k := range b.Settings {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range slices.Compact(keys) {
		x, okA := a.Settings[k]
		y, okB := b.Settings[k]
		if !okA {
			x = "(unset)"
		}
		if !okB {
			y = "(unset)"
		}
		if okA != okB || x != y {
			d = append(d, ScheduleChange{"workload setting " + k, x, y})
		}
	}
	diff("dataset SHA-256", short(a.DatasetSHA256), short(b.DatasetSHA256))
	if len(d) == 0 && a.Hash != b.Hash {
		// Same fields, different hashes: one hash was not Sealed from
		// them, or hashed another version's fields.
		d = append(d, ScheduleChange{"hash", short(a.Hash), short(b.Hash)})
	}
	return d
}

// Differences names what differs between schedules a and b, one phrase a
// field ("seed 1 vs 2", "workload setting input_tokens 128 vs 256",
// "dataset SHA-256 3f2a…9c1d vs 77b0…e412": Changes, each as its String),
// in a fixed order; nil when they are the same schedule. A nil schedule
// (a cell recorded before schedules were) differs from any other as
// "schedule not recorded".
func (a *Schedule) Differences(b *Schedule) []string {
	switch {
	case a == nil && b == nil:
		return nil
	case a == nil:
		return []string{"schedule not recorded on the first side"}
	case b == nil:
		return []string{"schedule not recorded on the second side"}
	}
	var d []string
	for _, c := range a.Changes(b) {
		d = append(d, c.String())
	}
	return d
}

// short is a hex digest's first and last four characters ("(none)" for
// "").
func short(h string) string {
	switch {
	case h == "":
		return "(none)"
	case len(h) <= 12:
		return h
	}
	return h[:4] + "…" + h[len(h)-4:]
}
