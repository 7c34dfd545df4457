package specload

import (
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/spec"
)

// SelectServer keeps, of specs, only the servers called name (`slogate run
// -server NAME`, one job of a CI matrix): a spec without such a server is
// dropped whole, so neither its other servers nor their verdicts run. The
// specs are copied, not changed. A name no spec defines is a usage error
// (exit 2) listing the names there are.
func SelectServer(specs []*spec.Spec, name string) ([]*spec.Spec, error) {
	var kept []*spec.Spec
	var names []string
	for _, sp := range specs {
		for _, srv := range sp.Servers {
			if srv.Name == name {
				cp := *sp
				cp.Servers = []*spec.Server{srv}
				kept = append(kept, &cp)
				break
			}
			names = append(names, strconv.Quote(srv.Name)+" ("+sp.Filename+")")
		}
	}
	if len(kept) == 0 {
		return nil, exit.Usagef("-server %q: no spec defines that server; the servers are %s", name, strings.Join(names, ", "))
	}
	return kept, nil
}
