package spec

import (
	"reflect"
	"testing"

	"github.com/slogate/slogate/internal/shellcmd"
)

// TestVarsRedacted: results.json records a -var's value unless it is a
// secret: a credential's name, a server's api_key, or a value inside an
// environment variable RedactedEnv redacts.
func TestVarsRedacted(t *testing.T) {
	servers := []*Server{{Name: "a", APIKey: "sk-123"}, {Name: "b", Env: map[string]string{"HF_TOKEN": "hf_abc", "MODE": "fast"}}}
	tests := []struct {
		name string
		vars Vars
		want map[string]string
	}{
		{name: "none", vars: nil, want: nil},
		{name: "plain values kept", vars: Vars{"sim_args": "[]", "mode": "fast"}, want: map[string]string{"sim_args": "[]", "mode": "fast"}},
		{name: "a credential's name", vars: Vars{"my_password": "p"}, want: map[string]string{"my_password": shellcmd.Redacted}},
		{name: "a server's api_key", vars: Vars{"k": "sk-123"}, want: map[string]string{"k": shellcmd.Redacted}},
		{name: "a redacted environment value", vars: Vars{"hf": "hf_abc"}, want: map[string]string{"hf": shellcmd.Redacted}},
		{name: "an empty value", vars: Vars{"api_key": ""}, want: map[string]string{"api_key": ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.vars.Redacted(servers); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Redacted = %v, want %v", got, tc.want)
			}
		})
	}
}
