package report

import (
	"bytes"
	"fmt"

	"github.com/slogate/slogate/internal/result"
)

// Formats are the formats Render knows, as `slogate report -format` names
// them: md (report.md), html (the self-contained report.html), json
// (results.json itself) and csv (one row per cell and metric).
var Formats = []string{"md", "html", "json", "csv"}

// Render renders a saved run in format, one of Formats.
func Render(format string, res *result.Results) ([]byte, error) {
	var b bytes.Buffer
	var err error
	switch format {
	case "md":
		err = WriteMarkdown(&b, res)
	case "html":
		err = WriteHTML(&b, res)
	case "json":
		return res.Marshal()
	case "csv":
		err = WriteCSV(&b, res)
	default:
		return nil, fmt.Errorf("unknown report format %q", format)
	}
	return b.Bytes(), err
}
