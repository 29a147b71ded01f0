package transform

import "github.com/convbatch/convbatch/internal/rfc3339"

// ValidRFC3339 reports whether s is an RFC 3339 date-time (see
// internal/rfc3339 for the exact rules).
func ValidRFC3339(s []byte) bool { return rfc3339.Valid(s) }
