//go:build race

package sha256x16

// raceEnabled: under the race detector sync.Pool drops some of what it is
// given back, so SumMany may allocate a Hasher.
const raceEnabled = true
