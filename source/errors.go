package source

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"github.com/aws/smithy-go"
	"golang.org/x/oauth2"
)

// Sentinels that errors from this package match with errors.Is.
var (
	// ErrNotFound: no such object or bucket (HTTP 404).
	ErrNotFound = errors.New("not found")
	// ErrForbidden: the credentials may not read the object (HTTP 401 or 403).
	ErrForbidden = errors.New("access denied")
	// ErrChanged: the object's ETag, generation or size changed between two
	// requests of one read (or the server said so, HTTP 412); the bytes read
	// so far belong to a version that is gone.
	ErrChanged = errors.New("object changed while being read")
	// ErrUnsupported: the operation does not apply to this location, such as
	// a glob over an http(s) URL, which has no listing.
	ErrUnsupported = errors.New("not supported")
	// ErrNoCredentials: no credentials were found for the store (or those
	// configured could not be loaded), found before any request to it.
	ErrNoCredentials = errors.New("no credentials")
)

// Error is a failed operation on one location. Its message names the
// operation and the URL (without query string or user information), then
// either the service's error code and message (S3's code, Cloud
// Storage's reason, each with its message) with the HTTP status
// after them and nothing of the cause (which holds request and host ids),
// or the HTTP status if there was one and the cause with every URL's
// query string and user information removed (Redact). Is matches Kind;
// Unwrap returns the cause, whose own text is not redacted.
type Error struct {
	Op      string // "stat", "list", "read", "open bucket"
	URL     string // Location.String()
	Status  int    // HTTP status, 0 if none was received
	Code    string // the service's error code (S3: "NoSuchKey", "AccessDenied"; Cloud Storage's reason: "notFound", "forbidden"), "" if none
	Message string // the service's error message, "" if none
	Kind    error  // ErrNotFound, ErrForbidden, ErrChanged, ErrUnsupported, ErrNoCredentials, or nil
	Tries   int    // requests made, when retries were given up, else 0
	Err     error  // the cause
}

// Error implements error. The URL is shown as Printable shows it.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", e.Op, Printable(e.URL))
	if e.Code != "" {
		fmt.Fprintf(&b, ": %s", redact(e.Code))
		if e.Message != "" && e.Message != e.Code {
			fmt.Fprintf(&b, ": %s", redact(e.Message))
		}
		if e.Status != 0 {
			fmt.Fprintf(&b, " (HTTP %d %s)", e.Status, http.StatusText(e.Status))
		}
		if e.Tries > 0 {
			fmt.Fprintf(&b, " (gave up after %d tries)", e.Tries)
		}
		return b.String()
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d %s", e.Status, http.StatusText(e.Status))
	}
	if e.Kind != nil && e.Kind != ErrNoCredentials { // the cause says where they were looked for
		fmt.Fprintf(&b, ": %v", e.Kind)
	}
	if e.Tries > 0 {
		fmt.Fprintf(&b, " (gave up after %d tries)", e.Tries)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %s", redact(e.Err.Error()))
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is e's Kind.
func (e *Error) Is(target error) bool { return e.Kind != nil && target == e.Kind }

// newError builds the Error for a failed operation, reading the HTTP
// status and kind out of the cause, whichever backend it came from.
func newError(op string, loc Location, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, ErrNoCredentials) {
		// No request was made: a status in the cause is the credential
		// chain's own (an instance metadata service's 403), not the store's.
		return &Error{Op: op, URL: loc.String(), Kind: ErrNoCredentials, Err: err}
	}
	st := httpStatus(err)
	e = &Error{Op: op, URL: loc.String(), Status: st, Err: err}
	var ae smithy.APIError
	var se *statusError
	switch {
	case errors.As(err, &ae) && ae.ErrorCode() != "":
		e.Code, e.Message = ae.ErrorCode(), ae.ErrorMessage()
	case errors.As(err, &se) && se.reason != "":
		e.Code, e.Message = se.reason, se.message
	}
	switch {
	case st == http.StatusNotFound:
		e.Kind = ErrNotFound
	case st == http.StatusForbidden || st == http.StatusUnauthorized:
		e.Kind = ErrForbidden
	case st == http.StatusPreconditionFailed || errors.Is(err, ErrChanged):
		e.Kind = ErrChanged
	case errors.Is(err, ErrUnsupported):
		e.Kind = ErrUnsupported
	}
	if e.Kind != nil && errors.Is(err, e.Kind) {
		e.Err = nil // the cause is the sentinel itself: say it once
	}
	return e
}

// Temporary reports whether err, from this package, is a fault of the
// store or the network (a 5xx, a timeout, a stall, a refused or reset
// connection) rather than one that the user must fix (a missing object, a
// refusal, a malformed URL, no credentials): retried until the tries ran
// out, it may pass if the whole job is tried again later.
func Temporary(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Tries > 0 || (e.Kind == nil && transient(context.Background(), e.Err))
	}
	return errors.Is(err, errStalled)
}

// statusError is an HTTP response that was not a success, from the
// http(s) or gcs backend, with the service's reason and message when its
// body said them (Cloud Storage's JSON API).
type statusError struct {
	code            int
	reason, message string
}

func (e *statusError) Error() string {
	if e.reason != "" {
		return fmt.Sprintf("HTTP %d: %s: %s", e.code, e.reason, e.message)
	}
	return fmt.Sprintf("HTTP %d", e.code)
}

// HTTPStatusCode returns the status, as the AWS SDK's errors do.
func (e *statusError) HTTPStatusCode() int { return e.code }

// httpStatus finds the HTTP status in an error from any backend: the AWS
// SDK's response errors, statusError, or the answer of Google's token
// endpoint.
func httpStatus(err error) int {
	var sc interface{ HTTPStatusCode() int }
	if errors.As(err, &sc) {
		return sc.HTTPStatusCode()
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		return re.Response.StatusCode
	}
	return 0
}

// Redact removes the user information (user:password@) and the query
// string (where signatures and tokens live) of every URL in the text s,
// whatever the URL's scheme. It parses rather than matching a pattern: a
// URL begins at "://"; its user information runs to the last '@' before
// the path's first '/', spaces, quotes and '?' included; its query runs
// from the first '?' after the host to the next space or quote. It is
// for text from libraries, whose URLs are escaped; a string that is
// known to be one URL, however malformed, is RedactURL's.
func Redact(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+3])
		s = s[i+3:]
		// The authority: up to the first '/', which no user information
		// may hold unescaped. The last '@' in it ends the user
		// information, however many spaces, quotes or '?' came before.
		auth := s
		if j := strings.IndexByte(s, '/'); j >= 0 {
			auth = s[:j]
		}
		if j := strings.LastIndexByte(auth, '@'); j >= 0 {
			s = s[j+1:]
		}
		// The rest of the URL: up to a space, a quote or the next URL.
		end := strings.IndexFunc(s, urlEnd)
		if end < 0 {
			end = len(s)
		}
		if j := strings.Index(s[:end], "://"); j >= 0 {
			end = j
		}
		u := s[:end]
		if j := strings.IndexByte(u, '?'); j >= 0 {
			u = u[:j]
		}
		b.WriteString(u)
		s = s[end:]
	}
}

// urlEnd reports the characters that end a URL in running text.
func urlEnd(r rune) bool {
	switch r {
	case '"', '\'', '`', '<', '>':
		return true
	}
	return unicode.IsSpace(r) || unicode.IsControl(r)
}

// RedactURL returns the string s, meant as one URL and possibly
// malformed, as it may be shown: its scheme and host and path, without
// user information (everything from "://" to the last '@') nor query and
// fragment (everything from the first '?' or '#' after that). It
// over-redacts rather than under: a path holding an '@' loses what comes
// before it. Location.String is the name of a URL that parses; this is
// for the one that did not.
func RedactURL(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return Redact(s)
	}
	scheme, rest := s[:i+3], s[i+3:]
	if j := strings.LastIndexByte(rest, '@'); j >= 0 {
		rest = rest[j+1:]
	}
	if j := strings.IndexAny(rest, "?#"); j >= 0 {
		rest = rest[:j]
	}
	return Redact(scheme) + rest
}

// Printable returns a name (a path, a URL, a key) as a line of text may
// show it: as it is, or, if it holds a control character (a byte below
// 0x20, 0x7f, or U+0080 to U+009F), in double quotes with Go's escapes
// (strconv.Quote: "s3://b/n\nl.jsonl"), so that a newline or a carriage
// return in a key never starts a line of its own on stderr nor forges
// one. It is for showing only: a name recorded to be read again
// (Location.String, report.json) stays exact.
func Printable(name string) string {
	if strings.ContainsFunc(name, unicode.IsControl) {
		return strconv.Quote(name)
	}
	return name
}

// redact is Redact, for the package's own messages.
func redact(s string) string { return Redact(s) }
