package lifecycle

import "time"

// Note is what a launch tells as it goes, as a value: Starting,
// SimNoContainer or StillWaiting. The run view writes its line (package
// views); lifecycle formats none.
type Note interface{ lifecycleNote() }

// Starting is the command a launch starts, its secrets redacted: the
// environment slogate sets and the argv (a container runtime's, with
// the container's).
type Starting struct {
	Env  map[string]string
	Argv []string
}

// SimNoContainer: under -sim the simulator runs as a process, and the
// server's container block is not used.
type SimNoContainer struct{}

// StillWaiting is a readiness wait still going after Waited: at Stage
// ("waiting for GET /health to answer 200").
type StillWaiting struct {
	Stage  string
	Waited time.Duration
}

func (Starting) lifecycleNote()       {}
func (SimNoContainer) lifecycleNote() {}
func (StillWaiting) lifecycleNote()   {}
