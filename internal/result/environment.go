package result

import "github.com/slogate/slogate/internal/vocab"

// ExcludedRun is one run of a repeated cell left out of the cell's figures
// (DecodeCell.Excluded; docs/method.md#unmeasurable).
type ExcludedRun struct {
	// Repeat is the run's number (1-based, counting every run taken).
	Repeat int `json:"repeat"`
	// Status is what the run was: unmeasurable, or valid or queued for a
	// run whose machine moved.
	Status vocab.Status `json:"status"`
	// Reason says why it was left out, and Reasons the same as values
	// (CellReason: the run's own reasons, or ReasonMachineMoved); nil in
	// results.json written before them, which hold Reason alone.
	Reason  string       `json:"reason"`
	Reasons []CellReason `json:"reasons,omitempty"`
}

// Environment is the machine around one run of a cell, read from /proc
// and a fixed CPU calibration (docs/method.md#environment).
type Environment struct {
	// Repeat is the run's number (1-based; 0 for a cell run once).
	Repeat int `json:"repeat,omitempty"`
	// Load1 is /proc/loadavg's one-minute load at the run's start and
	// Load1After at its end.
	Load1      float64 `json:"load1"`
	Load1After float64 `json:"load1_after"`
	// StealPct is the share of the machine's CPU time stolen by its
	// hypervisor during the run (/proc/stat), in %; nil when unread.
	StealPct *float64 `json:"steal_pct,omitempty"`
	// CPUPressure and CPUPressureAfter are /proc/pressure/cpu's "some
	// avg10" at the run's start and end, in %; nil without PSI.
	CPUPressure      *float64 `json:"cpu_pressure,omitempty"`
	CPUPressureAfter *float64 `json:"cpu_pressure_after,omitempty"`
	// CalibrationMs is how long a fixed piece of CPU work took just
	// before the run and CalibrationAfterMs just after it.
	CalibrationMs      float64 `json:"calibration_ms"`
	CalibrationAfterMs float64 `json:"calibration_after_ms"`
	// ServerWaitPct is the share of the time the server's threads were
	// ready to run during the run that they spent waiting for a CPU (the
	// kernel's schedstat over the server's process group), in %, and
	// ServerCPUs the CPUs they used on average; nil for a container or an
	// endpoint, whose processes slogate did not start.
	ServerWaitPct *float64 `json:"server_wait_pct,omitempty"`
	ServerCPUs    *float64 `json:"server_cpus,omitempty"`
}

// Sources of DecodeCell.ServerPerRequestTPS (docs/method.md#unmeasurable).
const (
	// ServerRateTimings is llama.cpp's timings.predicted_per_second, the
	// median over the requests that finished in the window.
	ServerRateTimings = "timings"
	// ServerRateHistogram is the server's inter-token latency histogram
	// over the window: the tokens it counted ÷ the waits it summed
	// (promread.Snapshot.DecodeRateSince).
	ServerRateHistogram = "itl_histogram"
)

// Sources of PrefillCell.ServerPrefillMs (docs/method.md#unmeasurable).
const (
	// ServerPrefillTimings is llama.cpp's timings.prompt_ms.
	ServerPrefillTimings = "timings"
	// ServerPrefillHistogram is the server's time-to-first-token
	// histogram over the one request (Δsum).
	ServerPrefillHistogram = "ttft_histogram"
)
