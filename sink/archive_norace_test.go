//go:build !race

package sink

// raceEnabled: the test binary runs under the race detector.
const raceEnabled = false
