package sink

// MaxOpenPartitions returns the most partitions of the named table that t
// had open at once (0 when the table is not partitioned).
func MaxOpenPartitions(t *Tables, name string) int {
	if p := t.parts[name]; p != nil {
		return p.maxOpen
	}
	return 0
}
