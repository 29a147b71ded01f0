package codes

// Reject is the reason a line is rejected (docs/FORMAT.md, "Reject
// reasons"). The reasons are listed in precedence order: where several
// apply to one line, the first wins. The zero value, NoReject, means the
// line is not rejected.
type Reject uint8

// Reject reasons, in the documented order.
const (
	// NoReject marks a line that is not rejected; its String is "".
	NoReject Reject = iota
	// Decided while framing (package stream).
	RejectInputChecksum
	RejectBOM
	RejectTooLarge
	RejectInputTruncated
	// Decided by the core handlers (package transform).
	RejectInvalidUTF8
	RejectNotJSON
	RejectTooDeep
	RejectNotObject
	RejectDuplicateKey
	RejectBadID
	RejectBadMessages
	RejectBadMessage
	RejectBadRole
	RejectBadExtensions
	RejectBadTitle
	RejectBadCreatedAt
	RejectBadMessageField
	numRejects
)

var rejectCodes = [numRejects]string{
	"", "input-checksum", "bom", "too-large", "input-truncated",
	"invalid-utf8", "not-json", "too-deep", "not-object", "duplicate-key",
	"bad-id", "bad-messages", "bad-message", "bad-role", "bad-extensions",
	"bad-title", "bad-created-at", "bad-message-field",
}

// String returns the reason's code as written in the report and
// rejects.jsonl; "" for NoReject.
func (r Reject) String() string {
	if r < numRejects {
		return rejectCodes[r]
	}
	return "unknown-reject"
}

// Rejects returns every reject reason, NoReject excluded, in the
// documented (precedence) order.
func Rejects() []Reject {
	out := make([]Reject, 0, numRejects-1)
	for r := NoReject + 1; r < numRejects; r++ {
		out = append(out, r)
	}
	return out
}

// Warning is a warning counted in the report; it never rejects a line
// (docs/FORMAT.md, "Warnings" and "Extension warnings").
type Warning uint8

// Warnings, in the documented order: the core's, then the extensions'.
const (
	WarnBOMDropped Warning = iota
	WarnCRLF
	WarnDuplicateID
	WarnUnknownExtension
	WarnUndeclaredExtension
	WarnToolResultOrphan
	WarnToolCallDuplicateID
	WarnStatementAgentUnknown
	WarnTranscriptUnhashable
	WarnUsageWrongType
	WarnUsageInvalidCount
	numWarnings
)

var warningCodes = [numWarnings]string{
	"bom-dropped", "crlf", "duplicate-id", "unknown-extension",
	"undeclared-extension", "tool-result-orphan", "tool-call-duplicate-id",
	"statement-agent-unknown", "transcript-unhashable", "usage-wrong-type",
	"usage-invalid-count",
}

// String returns the warning's code as written in the report.
func (w Warning) String() string {
	if w < numWarnings {
		return warningCodes[w]
	}
	return "unknown-warning"
}

// Warnings returns every warning in the documented order.
func Warnings() []Warning {
	out := make([]Warning, 0, numWarnings)
	for w := Warning(0); w < numWarnings; w++ {
		out = append(out, w)
	}
	return out
}

// InputFault is the reason an input ended early (docs/FORMAT.md, "Input
// faults"): the report's error of that input.
type InputFault uint8

// Input faults, in the documented order.
const (
	// FaultOpenError: the input could not be opened.
	FaultOpenError InputFault = iota
	// FaultReadError: reading the input failed.
	FaultReadError
	// FaultTruncated: the input ends inside a line or a compressed frame
	// or member: a plain input's last line has no LF and does not parse
	// (its reject reason is its own), or a zstd or gzip stream is cut
	// short.
	FaultTruncated
	// FaultZstdWindowTooLarge: a zstd frame asks for a window over the cap.
	FaultZstdWindowTooLarge
	// FaultZstdChecksum: a zstd frame's checksum does not match.
	FaultZstdChecksum
	// FaultZstdCorrupt: the zstd stream is damaged (other than cut short).
	FaultZstdCorrupt
	// FaultGzipChecksum: a gzip member's CRC-32 or length does not match.
	FaultGzipChecksum
	// FaultGzipCorrupt: the gzip stream is damaged (a bad header, a bad
	// deflate block, bytes after the last member); one cut short is
	// FaultTruncated.
	FaultGzipCorrupt
	// FaultChecksumMismatch: the bytes of an object read by URL do not
	// have the checksum its store keeps (source.ErrCorrupt): changed in
	// transit or at rest.
	FaultChecksumMismatch
	numInputFaults
)

var inputFaultCodes = [numInputFaults]string{
	"open-error", "read-error", "truncated", "zstd-window-too-large", "zstd-checksum", "zstd-corrupt",
	"gzip-checksum", "gzip-corrupt", "checksum-mismatch",
}

// String returns the fault's code as written in the report.
func (f InputFault) String() string {
	if f < numInputFaults {
		return inputFaultCodes[f]
	}
	return "unknown-input-fault"
}

// InputFaults returns every input fault in the documented order.
func InputFaults() []InputFault {
	out := make([]InputFault, 0, numInputFaults)
	for f := InputFault(0); f < numInputFaults; f++ {
		out = append(out, f)
	}
	return out
}

// Skip is the reason a directory walk or a glob passed over a file
// (docs/FORMAT.md, "Skipped files"). Files named as arguments are never
// skipped: one convbatch cannot read is a usage error.
type Skip uint8

// Skip reasons, in the documented order.
const (
	// SkipDotFile: the file's name starts with a dot.
	SkipDotFile Skip = iota
	// SkipDotDirectory: a directory whose name starts with a dot; nothing
	// below it is read or listed.
	SkipDotDirectory
	// SkipSidecar: a *.expect.json or *.keys.json file, which convbatch gen
	// writes beside an archive, or a file named expect.json or keys.json,
	// which gen --nights writes at the top of its directory.
	SkipSidecar
	// SkipUnknownType: the name ends in none of the input extensions.
	SkipUnknownType
	// SkipDirectory: a glob match that is a directory (a glob does not
	// descend into directories).
	SkipDirectory
	// SkipNotRegular: a symbolic link in a directory walk (not followed), a
	// device, pipe or socket, or a glob match that cannot be examined (a
	// dangling link).
	SkipNotRegular
	numSkips
)

var skipCodes = [numSkips]string{
	"dot-file", "dot-directory", "sidecar", "unknown-type", "directory", "not-regular",
}

// String returns the reason's code as written in the report.
func (s Skip) String() string {
	if s < numSkips {
		return skipCodes[s]
	}
	return "unknown-skip"
}

// Skips returns every skip reason in the documented order.
func Skips() []Skip {
	out := make([]Skip, 0, numSkips)
	for s := Skip(0); s < numSkips; s++ {
		out = append(out, s)
	}
	return out
}
