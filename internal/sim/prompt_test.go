package sim

import (
	"encoding/json"
	"testing"
)

func TestPromptField(t *testing.T) {
	tests := []struct {
		name    string
		json    string
		tokens  int
		wantErr bool
	}{
		{"token ids", `[1, 2, 3]`, 3, false},
		{"nested single", `[[1,2,3,4]]`, 4, false},
		{"text", `"hello world"`, 6, false},
		{"list of one text", `["abcd"]`, 2, false},
		{"empty list", `[]`, 0, false},
		{"batched", `[[1],[2]]`, 0, true},
		{"negative id", `[1,-2]`, 0, true},
		{"float id", `[1.5]`, 0, true},
		{"object", `{"a":1}`, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p promptField
			err := json.Unmarshal([]byte(tt.json), &p)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want error %v", err, tt.wantErr)
			}
			if err == nil && p.tokens != tt.tokens {
				t.Errorf("tokens %d, want %d", p.tokens, tt.tokens)
			}
		})
	}
	var a, b, c promptField
	json.Unmarshal([]byte(`[1,2,3]`), &a)
	json.Unmarshal([]byte(`[ 1 ,2,  3 ]`), &b)
	json.Unmarshal([]byte(`[1,2,4]`), &c)
	if a.hash != b.hash || a.hash == c.hash {
		t.Errorf("hash must depend on the IDs only: %x %x %x", a.hash, b.hash, c.hash)
	}
}

// FuzzPromptField: any JSON array of non-negative integers is counted
// exactly as encoding/json decodes it, and nothing panics.
func FuzzPromptField(f *testing.F) {
	for _, s := range []string{`[1,2,3]`, `[[7]]`, `"text"`, `[]`, `[1,,2]`, `["a","b"]`, `[ 0 ]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var p promptField
		err := json.Unmarshal([]byte(s), &p)
		var ids []uint32
		if json.Unmarshal([]byte(s), &ids) == nil && len(ids) > 0 {
			if err != nil || p.tokens != len(ids) {
				t.Errorf("%q: %d tokens, err %v; encoding/json sees %d", s, p.tokens, err, len(ids))
			}
		}
	})
}
