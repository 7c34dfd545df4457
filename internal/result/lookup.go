package result

import "slices"

// find returns the first of cells that match accepts, by pointer into
// cells so that a caller may update the cell in place. The lookups of
// Results (PrefillCell, DecodeCell, TrafficCell, SearchByName) and of a
// Search (Probe) are each this loop with their own key.
func find[C any](cells []C, match func(*C) bool) (*C, bool) {
	for i := range cells {
		if match(&cells[i]) {
			return &cells[i], true
		}
	}
	return nil, false
}

// labelsOf lists the distinct labels of cells in order of first appearance
// (MatrixLabels, TrafficLabels).
func labelsOf[C any](cells []C, label func(*C) string) []string {
	var out []string
	for i := range cells {
		if l := label(&cells[i]); !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}
