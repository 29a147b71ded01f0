package parquetout

import (
	"bufio"
	"context"
	"fmt"
	"runtime/pprof"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/convbatch/convbatch/parquetout/tinyparquet"
	"github.com/convbatch/convbatch/sink"
)

// encoderConfig tunes how a table's records are encoded; the zero value
// is what NewTables uses (see defaultEncoderConfig). Tests set the other
// fields to check that the output does not depend on the timing.
type encoderConfig struct {
	// serial encodes on the caller's goroutine, as convbatch did before
	// the encoders had their own: the reference the concurrent output is
	// compared with.
	serial bool
	// depth is how many operations may wait in an encoder's queue while
	// it works on one (default 1: at most two records in flight).
	depth int
	// before, if set, is called by the encoder before each operation,
	// named by its kind ("open", "write", "offset", "close"); an error it
	// returns becomes the operation's. Tests use it to delay the encoder
	// or make it fail.
	before func(kind string) error
	// noTiny writes every partition with the engine, however small (no
	// whole-file tinyparquet part): for tests of the engine's path on
	// few rows.
	noTiny bool
	// engine is the Parquet engine of the parts (see engine_pgo.go;
	// NewTables and the rewrites set it with withEngine, and an empty
	// one, left by tests that call newTables, is pqarrow). The small
	// partitions' parts are tinyparquet's whatever the engine.
	engine string
}

// encodeOpKind tells what an encodeOp asks for.
type encodeOpKind uint8

const (
	// opOpen creates the part file rel and starts its Parquet writer.
	opOpen encodeOpKind = iota
	// opWrite encodes rec into the buffered row group, first starting a
	// new row group if newRowGroup.
	opWrite
	// opOffset replies with the bytes written to the part file so far.
	opOffset
	// opClose ends the part: the last row group, the footer, the file
	// closed.
	opClose
	// opTiny writes the part rel, whole, from recs with tiny.
	opTiny
)

var opNames = [...]string{opOpen: "open", opWrite: "write", opOffset: "offset", opClose: "close", opTiny: "tiny"}

// encodeOp is one operation queued to an encoder.
type encodeOp struct {
	kind        encodeOpKind
	rel         string              // opOpen
	rec         arrow.RecordBatch   // opWrite, owned (released) by the encoder
	newRowGroup bool                // opWrite
	recs        []arrow.RecordBatch // opTiny, owned by the encoder
	tiny        *tinyparquet.Writer // opTiny
}

// release releases the records of op.
func (op encodeOp) release() {
	if op.rec != nil {
		op.rec.Release()
	}
	for _, r := range op.recs {
		r.Release()
	}
}

// offsetReply is the encoder's answer to an opOffset.
type offsetReply struct {
	n   int64
	err error
}

// encoder owns a table's Parquet writer and part file, and encodes the
// records a tableWriter hands it on a goroutine of its own (see
// tableWriter), in the order they are queued. It runs from a tableWriter's
// first part to the end of its writing (Close, or partitioned the end of
// the last partition), through as many parts as the writer rolls over,
// and partitions.
//
// Its first error is sticky: every later operation is skipped (its record
// released) and every call returns the error, wrapped with the table's
// name. A panic while encoding becomes that error.
type encoder struct {
	name   string
	txn    *sink.Txn
	schema *arrow.Schema
	props  *parquet.WriterProperties
	cfg    encoderConfig

	// ops is the queue, nil when cfg.serial; closed by finish.
	ops      chan encodeOp
	finished bool
	// done is closed when the goroutine has ended.
	done chan struct{}
	// replies carries the answers to opOffset.
	replies chan offsetReply
	// stop asks the goroutine to skip the operations left (Abort).
	stop atomic.Bool

	mu  sync.Mutex
	err error

	// Owned by the goroutine (the caller's when serial). out buffers the
	// part file's writes (pqarrow writes each page header, page and
	// footer piece on its own: some fifty writes for a part of one row)
	// and counts the bytes written, which opOffset answers.
	file *sink.File
	out  *countingWriter
	fw   *pqarrow.FileWriter
	// pgoT and tinyT are the table's parquet-go and tinyparquet plans,
	// made on the first part when cfg.engine is EngineParquetGo or
	// EngineTiny; pw then writes the part (fw nil). See newEnginePart.
	pgoT  *pgoTable
	tinyT *tinyparquet.Table
	pw    partWriter
}

// countingWriter buffers writes to a part file and counts them.
type countingWriter struct {
	bw *bufio.Writer
	n  int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.bw.Write(p)
	c.n += int64(n)
	return n, err
}

// partBufferBytes is the size of an encoder's write buffer.
const partBufferBytes = 64 << 10

// newEncoder starts an encoder of the table name, writing parts in txn.
func newEncoder(name string, txn *sink.Txn, schema *arrow.Schema, props *parquet.WriterProperties, cfg encoderConfig) *encoder {
	e := &encoder{name: name, txn: txn, schema: schema, props: props, cfg: cfg, done: make(chan struct{})}
	if cfg.serial {
		return e
	}
	e.ops = make(chan encodeOp, max(cfg.depth, 0))
	e.replies = make(chan offsetReply, 1)
	go e.loop()
	return e
}

// Err returns the encoder's first error, or nil.
func (e *encoder) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

func (e *encoder) fail(err error) {
	e.mu.Lock()
	if e.err == nil {
		e.err = err
	}
	e.mu.Unlock()
}

// send queues op, blocking while the queue is full; it returns the
// encoder's error if it has one (op is then dropped). When serial, op is
// done before send returns.
func (e *encoder) send(op encodeOp) error {
	if err := e.Err(); err != nil {
		op.release()
		return err
	}
	if e.cfg.serial {
		_, err := e.do(op)
		return err
	}
	e.ops <- op
	return nil
}

// offset returns the bytes written to the part file once every operation
// queued before it is done: the barrier that keeps the cuts of row groups
// and parts the same whatever the goroutines' timing.
func (e *encoder) offset() (int64, error) {
	if e.cfg.serial {
		if err := e.Err(); err != nil {
			return 0, err
		}
		return e.do(encodeOp{kind: opOffset})
	}
	if err := e.send(encodeOp{kind: opOffset}); err != nil {
		return 0, err
	}
	r := <-e.replies
	return r.n, r.err
}

// finish ends the queue: the goroutine does what is queued and ends.
func (e *encoder) finish() {
	if e.finished {
		return
	}
	e.finished = true
	if e.cfg.serial {
		e.end()
		close(e.done)
		return
	}
	close(e.ops)
}

// wait finishes the queue, waits for the goroutine to end and returns the
// encoder's first error.
func (e *encoder) wait() error {
	e.finish()
	<-e.done
	return e.Err()
}

// abort stops the encoder: what is queued is dropped, the part file
// closed unfinished (the Txn removes it), the goroutine waited for.
func (e *encoder) abort() {
	e.stop.Store(true)
	e.wait()
}

// loop is the encoder's goroutine. It carries the profiler label
// table=<name>, so that a CPU profile tells the tables' encoders apart
// (go tool pprof -tagfocus table=usage).
func (e *encoder) loop() {
	defer close(e.done)
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("table", e.name)))
	for op := range e.ops {
		n, err := e.do(op)
		if op.kind == opOffset {
			e.replies <- offsetReply{n, err}
		}
	}
	e.end()
}

// end closes a part file left open by an error or by abort.
func (e *encoder) end() {
	e.fw, e.pw = nil, nil
	if e.file != nil {
		e.file.Close()
		e.file = nil
	}
}

// do performs op, or skips it after an error or abort, and returns what
// an opOffset answers.
func (e *encoder) do(op encodeOp) (int64, error) {
	var n int64
	err := e.Err()
	if err == nil && e.stop.Load() {
		err = fmt.Errorf("table %s: aborted", e.name)
	}
	if err == nil {
		n, err = e.run(op)
		if err != nil {
			err = fmt.Errorf("table %s: %w", e.name, err)
			e.fail(err)
		}
	}
	op.release()
	return n, err
}

// run performs op, a panic becoming its error.
func (e *encoder) run(op encodeOp) (n int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic while encoding: %v", r)
		}
	}()
	if e.cfg.before != nil {
		if err := e.cfg.before(opNames[op.kind]); err != nil {
			return 0, err
		}
	}
	switch op.kind {
	case opOpen:
		return 0, e.open(op.rel)
	case opWrite:
		if e.pw != nil {
			if op.newRowGroup {
				if err := e.pw.newRowGroup(); err != nil {
					return 0, err
				}
			}
			return 0, e.pw.write(op.rec)
		}
		if op.newRowGroup {
			e.fw.NewBufferedRowGroup()
		}
		return 0, e.fw.WriteBuffered(op.rec)
	case opOffset:
		return e.out.n, nil
	case opClose:
		return 0, e.closePart()
	case opTiny:
		return 0, e.writeTiny(op.rel, op.tiny, op.recs)
	}
	return 0, fmt.Errorf("unknown operation %d", op.kind)
}

func (e *encoder) open(rel string) error {
	f, err := e.txn.Create(rel)
	if err != nil {
		return err
	}
	// pqarrow closes a writer that has a Close, which countingWriter has
	// not: the file stays open so that closePart flushes and closes it and
	// returns its error.
	if e.out == nil {
		e.out = &countingWriter{bw: bufio.NewWriterSize(f, partBufferBytes)}
	}
	e.out.bw.Reset(f)
	e.out.n = 0
	pw, err := e.newEnginePart(e.out)
	if err != nil {
		f.Close()
		return err
	}
	if pw != nil {
		e.file, e.pw = f, pw
		return nil
	}
	fw, err := pqarrow.NewFileWriter(e.schema, e.out, e.props, arrowWriterProperties())
	if err != nil {
		f.Close()
		return err
	}
	e.file, e.fw = f, fw
	return nil
}

func (e *encoder) closePart() error {
	var err error
	if e.pw != nil {
		err = e.pw.close()
		e.pw = nil
	} else {
		err = e.fw.Close() // flushes the last row group, writes the footer
		e.fw = nil
	}
	if ferr := e.out.bw.Flush(); err == nil {
		err = ferr
	}
	e.out.bw.Reset(nil)
	if cerr := e.file.Close(); err == nil {
		err = cerr
	}
	e.file = nil
	return err
}

// writeTiny writes the part rel, whole, from recs with t.
func (e *encoder) writeTiny(rel string, t *tinyparquet.Writer, recs []arrow.RecordBatch) error {
	f, err := e.txn.Create(rel)
	if err != nil {
		return err
	}
	_, err = t.WriteFile(f, recs...)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
