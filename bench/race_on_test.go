//go:build race

package bench

// raceEnabled: the race detector changes allocation counts.
const raceEnabled = true
