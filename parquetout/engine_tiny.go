package parquetout

import (
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/convbatch/convbatch/parquetout/tinyparquet"
)

// EngineTiny is the Parquet engine of package tinyparquet's File (issue 46
// item 2): it writes each part from the same Arrow records, with the same
// Parquet schema, field ids, encodings (the dictionary columns
// RLE_DICTIONARY with a PLAIN dictionary page, the delta encodings,
// PLAIN), page size, row groups, zstd encoder and level, created_by and
// stored Arrow schema as pqarrow, and statistics as pqarrow writes them.
const EngineTiny = "tiny"

// partWriter is a part file being written by an engine other than
// pqarrow: pgoWriter or tinyPart.
type partWriter interface {
	// newRowGroup ends the row group being written.
	newRowGroup() error
	// write appends the rows of rec to the row group being written.
	write(rec arrow.RecordBatch) error
	// close ends the last row group and writes the footer.
	close() error
}

// newEnginePart starts a part file on out with the encoder's engine, or
// returns nil for pqarrow. The engine's plan of the table is made on the
// first part.
func (e *encoder) newEnginePart(out io.Writer) (partWriter, error) {
	switch e.cfg.engine {
	case EngineParquetGo:
		if e.pgoT == nil {
			t, err := newPgoTable(e.schema, e.props, arrowWriterProperties())
			if err != nil {
				return nil, err
			}
			e.pgoT = t
		}
		return newPgoWriter(e.pgoT, out), nil
	case EngineTiny:
		if e.tinyT == nil {
			level := e.props.CompressionLevel()
			t, err := tinyparquet.NewTable(e.schema, e.props, arrowWriterProperties(), tinyparquet.Options{
				// The encoder of pqarrow's pages here (pooledZstd).
				Compress: func(dst, src []byte) []byte { return zstdEncoder(level).EncodeAll(src, dst) },
			})
			if err != nil {
				return nil, err
			}
			e.tinyT = t
		}
		return tinyPart{e.tinyT.NewFile(out)}, nil
	}
	return nil, nil
}

// tinyPart is a part written by tinyparquet's File.
type tinyPart struct{ f *tinyparquet.File }

func (p tinyPart) newRowGroup() error { return p.f.NewRowGroup() }

func (p tinyPart) write(rec arrow.RecordBatch) error { return p.f.Write(rec) }

func (p tinyPart) close() error { return p.f.Close() }
