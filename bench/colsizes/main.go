// Command colsizes prints, for each column of the Parquet files given, its
// column chunks' compressed and uncompressed bytes summed over every row
// group of every file, their ratio and the number of chunks: where a
// table's size (and the zstd codec's work) goes.
//
//	go run ./bench/colsizes OUT/tables/conversations/*.parquet
package main

import (
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/parquet/file"
)

func main() {
	type sz struct{ c, u, n int64 }
	tot := map[string]*sz{}
	var order []string
	for _, p := range os.Args[1:] {
		r, err := file.OpenParquetFile(p, false)
		if err != nil {
			fmt.Fprintf(os.Stderr, "colsizes: %v\n", err)
			os.Exit(1)
		}
		md := r.MetaData()
		for i := 0; i < r.NumRowGroups(); i++ {
			rg := md.RowGroup(i)
			for j := 0; j < rg.NumColumns(); j++ {
				cc, _ := rg.ColumnChunk(j)
				name := cc.PathInSchema().String()
				s, ok := tot[name]
				if !ok {
					s = &sz{}
					tot[name] = s
					order = append(order, name)
				}
				s.c += cc.TotalCompressedSize()
				s.u += cc.TotalUncompressedSize()
				s.n++
			}
		}
		r.Close()
	}
	for _, n := range order {
		s := tot[n]
		fmt.Printf("%-40s %10d %10d %5.2f chunks=%d\n", n, s.c, s.u, float64(s.u)/float64(max(1, s.c)), s.n)
	}
}
