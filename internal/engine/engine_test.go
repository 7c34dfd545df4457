package engine

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
)

// TestCheckSpeculativeConfig: each config key an engine cannot take is one
// diagnostic on the config's range, in the keys' order, whose detail names
// the key, the attribute or flag involved, the engine and its docs.
func TestCheckSpeculativeConfig(t *testing.T) {
	cfg := hcl.Range{Filename: "s.hcl", Start: hcl.Pos{Line: 4, Column: 5}, End: hcl.Pos{Line: 4, Column: 30}}
	owned := map[string]string{"algorithm": "method", "draft_model": "model"}
	type diag struct {
		Summary string
		Named   []string // what the detail names
	}
	tests := []struct {
		name   string
		config map[string]any
		want   []diag
	}{
		{name: "scalars it does not own", config: map[string]any{"num_steps": 3, "eagle_topk": 1.0, "x": "y"}},
		{name: "an owned key", config: map[string]any{"draft_model": "m"},
			want: []diag{{"Duplicate speculative setting", []string{`"draft_model"`, "model", "SGLang", "docs/sglang.md#speculative-decoding"}}}},
		{name: "a list and an object", config: map[string]any{"b": []any{1, 2}, "a": map[string]any{"k": 1}},
			want: []diag{
				{"Invalid speculative setting", []string{`"a"`, "--speculative-K", "SGLang"}},
				{"Invalid speculative setting", []string{`"b"`, "--speculative-K", "SGLang"}},
			}},
		{name: "owned and a list", config: map[string]any{"algorithm": []any{"EAGLE"}},
			want: []diag{
				{"Duplicate speculative setting", []string{`"algorithm"`, "method"}},
				{"Invalid speculative setting", []string{`"algorithm"`, "--speculative-K"}},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diags := CheckSpeculativeConfig(&Speculative{Config: tt.config}, cfg, owned, "SGLang", "docs/sglang.md#speculative-decoding", "--speculative-K")
			var got []diag
			for i, d := range diags {
				if d.Severity != hcl.DiagError || d.Subject == nil || *d.Subject != cfg {
					t.Errorf("diagnostic %d: severity %v at %v, want an error at the config's range %v", i, d.Severity, d.Subject, cfg)
				}
				g := diag{Summary: d.Summary}
				if i < len(tt.want) {
					for _, n := range tt.want[i].Named {
						if strings.Contains(d.Detail, n) {
							g.Named = append(g.Named, n)
						}
					}
				}
				got = append(got, g)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("diagnostics (-want +got; Named: what the detail names of what it should):\n%s", diff)
			}
		})
	}
}
