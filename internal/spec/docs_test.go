package spec

import (
	"os"
	"strings"
	"testing"
)

// TestTopLevelBlocksDocumented: docs/spec.md's table of top-level blocks
// lists every block type the loader accepts, with its label when it takes
// one.
func TestTopLevelBlocksDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/spec.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "Top-level blocks")
	end := strings.Index(doc[start:], "\n\n"+"Names of blocks")
	if start < 0 || end < 0 {
		t.Fatal("docs/spec.md has no table of top-level blocks (\"Top-level blocks\" … \"Names of blocks\")")
	}
	table := doc[start : start+end]
	for _, blk := range rootSchema.Blocks {
		row := "| `" + blk.Type
		if len(blk.LabelNames) > 0 {
			row += ` "`
		} else {
			row += "` |"
		}
		if !strings.Contains(table, row) {
			t.Errorf("docs/spec.md's table of top-level blocks has no row for %s (%q)", blk.Type, row)
		}
	}
}
