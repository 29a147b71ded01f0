package source

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

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
)

// Error is a failed operation on one location. Its message names the
// operation, the URL (without query string or user information) and the
// HTTP status if there was one, then the cause with any URL's query string
// removed. Is matches Kind; Unwrap returns the cause, whose own text is not
// redacted.
type Error struct {
	Op     string // "stat", "list", "read"
	URL    string // Location.String()
	Status int    // HTTP status, 0 if none was received
	Kind   error  // ErrNotFound, ErrForbidden, ErrChanged, ErrUnsupported, or nil
	Tries  int    // requests made, when retries were given up, else 0
	Err    error  // the cause
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", e.Op, e.URL)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d %s", e.Status, http.StatusText(e.Status))
	}
	if e.Kind != nil {
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
	st := httpStatus(err)
	e = &Error{Op: op, URL: loc.String(), Status: st, Err: err}
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

// statusError is an HTTP response that was not a success, from the
// http(s) backend.
type statusError struct{ code int }

func (e *statusError) Error() string { return fmt.Sprintf("HTTP %d", e.code) }

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

// queryRE finds a URL's query string and user information in a message.
var (
	queryRE    = regexp.MustCompile(`(https?://[^\s"'?]*)\?[^\s"']*`)
	userinfoRE = regexp.MustCompile(`(https?://)[^\s"'/@]*@`)
)

// redact removes query strings (where signatures and tokens live) and
// user:password parts from every URL in s.
func redact(s string) string {
	s = userinfoRE.ReplaceAllString(s, "$1")
	return queryRE.ReplaceAllString(s, "$1")
}
