package specload

import (
	"io"
	"time"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/spec"
)

// Build names the build of one server a command measures, as bisect and
// interleave name builds: the value of the spec variable VarName, or,
// when VarName is "", the image of the server's container block.
type Build struct {
	// Command is the command's name, for its errors ("bisect").
	Command  string
	SpecPath string
	Vars     spec.Vars
	VarName  string
	// Duration overrides measure.duration when > 0.
	Duration time.Duration
}

// Load is the spec of build: loaded with every static check (Load), its
// window set, and the build applied — VarName set to it, or its one
// server's container.image replaced. A spec of more than one server, a
// -var that sets VarName itself, or no container block to put an image
// in are usage errors.
func (b Build) Load(stderr io.Writer, build string) (*spec.Spec, error) {
	vars := spec.Vars{}
	for k, v := range b.Vars {
		vars[k] = v
	}
	if b.VarName != "" {
		if _, ok := b.Vars[b.VarName]; ok {
			return nil, exit.Usagef("-var %s is the build variable of -var-name: leave it out", b.VarName)
		}
		vars[b.VarName] = build
	}
	specs, err := Load(stderr, []string{b.SpecPath}, vars)
	if err != nil {
		return nil, err
	}
	sp := specs[0].WithDuration(b.Duration)
	if len(sp.Servers) != 1 {
		return nil, exit.Usagef("%s: %s measures one server; the spec has %d", b.SpecPath, b.Command, len(sp.Servers))
	}
	if b.VarName != "" {
		return sp, nil
	}
	srv := sp.Servers[0]
	if srv.Container == nil {
		return nil, exit.Usagef("%s: server %q has no container block: its builds are container images, or give -var-name for a launched server", b.SpecPath, srv.Name)
	}
	c := *srv.Container
	c.Image = build
	s := *srv
	s.Container = &c
	sp.Servers = []*spec.Server{&s}
	return sp, nil
}
