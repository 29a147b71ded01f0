// Package exitcode holds the exit codes that convbatch and convbeam share,
// so that the two commands exit alike from one declaration.
package exitcode

// The exit codes, from best to worst.
const (
	// OK: the command did what it was asked, and found nothing wrong.
	OK = 0
	// Findings: the command completed and found something wrong in its
	// inputs (rejects, damaged inputs, invalid receipts, a check that
	// fails).
	Findings = 1
	// Usage: the command was called wrongly (flags, arguments, an output
	// directory it refuses) and did nothing.
	Usage = 2
	// Fatal: the command failed while it ran.
	Fatal = 3
)

// Summary is the line each command's help ends with.
const Summary = "Exit codes: 0 clean, 1 completed with findings, 2 usage error, 3 fatal error."
