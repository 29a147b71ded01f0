// Package objout publishes convbatch's OUT to object storage (s3:// and
// gs://) with put-if-absent commits, as Delta Lake's log does
// (docs/FORMAT.md, "OUT on object storage").
//
// A run into s3://bucket/prefix works in a local scratch directory: the
// newest commit's small files (report.json, the state, the manifests and
// the history, the reports, rejects and receipts) are downloaded there and
// its archives and table parts stand as sparse placeholders of their
// sizes, so the local OUT code (package outdir) runs unchanged, with every
// guarantee of its local commit. Every file that run published is
// uploaded under a run-unique key with put-if-absent, most while that
// local commit goes on (ahead.go), and the commit is
// one put-if-absent of the next commit record, _commits/NNNNNNNNNN.json,
// which names every object of OUT at that night (path, key, size,
// SHA-256). A reader follows the newest commit and sees one whole night;
// two runs racing on one prefix: exactly one commit wins, the other gets a
// *ConflictError. Objects that no commit names (a killed run's, a loser's)
// are removed by GC after a grace period.
package objout
