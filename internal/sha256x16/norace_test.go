//go:build !race

package sha256x16

const raceEnabled = false
