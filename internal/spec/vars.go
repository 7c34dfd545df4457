package spec

import (
	"fmt"
	"strings"

	"github.com/slogate/slogate/internal/shellcmd"
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

// Redacted returns the settings v as results.json records them
// (result.RunFlags.Vars), a secret's value replaced by shellcmd.Redacted:
// a name that says it holds a credential (the rule of RedactedEnv), a value
// that is a server's api_key, or the value of an environment variable
// RedactedEnv redacts. Nil when v is empty.
func (v Vars) Redacted(servers []*Server) map[string]string {
	if len(v) == 0 {
		return nil
	}
	secret := func(name, value string) bool {
		if value == "" {
			return false
		}
		if secretEnvName.MatchString(name) {
			return true
		}
		for _, s := range servers {
			if s.APIKey != "" && value == s.APIKey {
				return true
			}
			red := s.RedactedEnv()
			for k, ev := range s.LaunchEnv() {
				if red[k] != ev && strings.Contains(ev, value) {
					return true
				}
			}
		}
		return false
	}
	out := make(map[string]string, len(v))
	for name, value := range v {
		if secret(name, value) {
			value = shellcmd.Redacted
		}
		out[name] = value
	}
	return out
}
