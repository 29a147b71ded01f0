//go:build !amd64 || purego

package jsonscan

// indexStop returns the index of the first byte of b that ends a run of plain
// string bytes (a quote, a backslash or a control character), or len(b).
func indexStop(b []byte) int { return indexStopGeneric(b) }
