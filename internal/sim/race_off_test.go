//go:build !race

package sim

// raceEnabled reports a -race build: slow, memory-hungry, no place for measurements.
const raceEnabled = false
