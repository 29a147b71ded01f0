package tinyparquet

import "encoding/binary"

// The RLE/bit-packing hybrid of a slice of values, as the File writer
// encoded levels and dictionary indices before hybridRuns made the runs
// as the values come (issue 46 item 2): the reference hybridRuns is
// checked against (runs_test.go).

// runAt returns the length of the run of equal values starting at
// vals[i], counted up to 8.
func runAt(vals []uint32, i int) int {
	n := 1
	for i+n < len(vals) && n < 8 && vals[i+n] == vals[i] {
		n++
	}
	return n
}

// appendHybrid appends vals, each below 1<<width, in the RLE/bit-packing
// hybrid (without a length before it): a run of 8 or more equal values,
// or the last values when they are all equal, as an RLE run; other values
// bit-packed in groups of 8, the last group padded with zeros.
func appendHybrid(b []byte, vals []uint32, width int) []byte {
	byteWidth := (width + 7) / 8
	for i := 0; i < len(vals); {
		j := i + 1
		for j < len(vals) && vals[j] == vals[i] {
			j++
		}
		if j-i >= 8 || j == len(vals) {
			b = binary.AppendUvarint(b, uint64(j-i)<<1)
			for k := range byteWidth {
				b = append(b, byte(vals[i]>>(8*k)))
			}
			i = j
			continue
		}
		start, groups := i, 0
		for i < len(vals) && groups < hybridMaxGroups {
			if groups > 0 && runAt(vals, i) >= 8 {
				break
			}
			i += 8
			groups++
		}
		i = min(i, len(vals))
		b = binary.AppendUvarint(b, uint64(groups)<<1|1)
		b = appendPacked(b, vals[start:i], groups*8, width)
	}
	return b
}
