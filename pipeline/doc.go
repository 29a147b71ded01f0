// Package pipeline runs convbatch's single pass: it reads the inputs in
// order (package stream), checks and transforms each batch of records on a
// pool of workers (package transform), and writes the results in input order
// (package sink): archives, rejects and the report.
//
// The pool is ordered and bounded. A fixed set of jobs circulates: the
// reader takes a free job, fills it with a batch, queues it on the results
// channel (in order) and on the work channel; a worker processes it and marks
// it done; the writer waits for each job in queue order, writes it and frees
// it. Memory therefore stays bounded by the number of jobs times the batch
// size, whatever the input size, and output order equals input order for any
// number of workers. The first fatal error cancels the run; nothing is then
// published.
//
// Run validates its Config before it creates anything (ErrConfig), then goes
// through its stages: open the run into OUT (package outdir), start the
// pool (pool.go), drain it in order through the writer (writer.go), finish
// (resolve receipts, check the accounting) and hand the result to
// outdir's commit (finish.go).
package pipeline
