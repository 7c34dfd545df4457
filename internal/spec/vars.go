package spec

import (
	"fmt"
	"strings"
)

// Vars collects repeatable -var NAME=VALUE command-line flags; it
// implements flag.Value and can be passed as LoadOptions.Vars.
type Vars map[string]string

// String renders the settings as NAME=VALUE pairs, sorted.
func (v Vars) String() string {
	var parts []string
	for _, k := range sortedKeys(v) {
		parts = append(parts, k+"="+v[k])
	}
	return strings.Join(parts, " ")
}

// Set parses one NAME=VALUE setting; a later setting of a name wins.
func (v *Vars) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return fmt.Errorf("%q is not NAME=VALUE (for example -var api_key=secret)", s)
	}
	if *v == nil {
		*v = Vars{}
	}
	(*v)[name] = value
	return nil
}

// Names returns the variable names set, sorted.
func (v Vars) Names() []string {
	return sortedKeys(v)
}
