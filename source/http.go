package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// httpBackend reaches objects on a web server with GET and HEAD, byte
// ranges through the Range header.
type httpBackend struct{ client *http.Client }

func (httpBackend) close() error { return nil }

func (h httpBackend) stat(ctx context.Context, loc Location) (Info, error) {
	resp, err := h.do(ctx, http.MethodHead, loc, "")
	if err != nil {
		var se *statusError
		if errors.As(err, &se) && (se.code == http.StatusMethodNotAllowed || se.code == http.StatusNotImplemented) {
			// A server without HEAD: ask for the first byte instead.
			body, info, err := h.read(ctx, loc, 0, 1, nil)
			if err != nil {
				return Info{}, err
			}
			body.Close()
			return info, nil
		}
		return Info{}, err
	}
	resp.Body.Close()
	info := headerInfo(loc, resp)
	info.Size = resp.ContentLength
	return info, nil
}

func (httpBackend) list(context.Context, Location, string, func(Info)) error {
	return fmt.Errorf("listing a web server: %w", ErrUnsupported)
}

func (h httpBackend) read(ctx context.Context, loc Location, off, n int64, pin *Info) (io.ReadCloser, Info, error) {
	rng := rangeHeader(off, n)
	resp, err := h.do(ctx, http.MethodGet, loc, rng)
	if err != nil {
		return nil, Info{}, err
	}
	return rangedBody(resp, off, n, rng, pin, headerInfo(loc, resp))
}

// rangeHeader is the Range header for n bytes at off (n < 0: to the end),
// or "" for the whole object.
func rangeHeader(off, n int64) string {
	switch {
	case n >= 0:
		return fmt.Sprintf("bytes=%d-%d", off, off+n-1)
	case off > 0:
		return fmt.Sprintf("bytes=%d-", off)
	}
	return ""
}

// rangedBody checks a successful response to a GET with Range header rng
// for n bytes at off, and returns its body and the version that answered:
// got, from the headers, with the object's size filled in (checkRange).
func rangedBody(resp *http.Response, off, n int64, rng string, pin *Info, got Info) (io.ReadCloser, Info, error) {
	return checkRange(resp.StatusCode, resp.Header.Get("Content-Range"), resp.ContentLength, resp.Body, off, n, rng, pin, got)
}

// checkRange checks the answer to a GET with Range header rng ("" for
// none) for n bytes at off, on any backend: its status, Content-Range
// and Content-Length, and body. A 206 must carry a Content-Range that
// starts at off; a 200 to a ranged GET (a store that ignores Range and
// sends the whole object) is skipped to off and cut after n, never taken
// as if it began at off; any other status is refused. It returns the body
// and got with the object's size filled in; with pin non-nil, another
// version is ErrChanged.
func checkRange(status int, contentRange string, contentLength int64, body io.ReadCloser, off, n int64, rng string, pin *Info, got Info) (io.ReadCloser, Info, error) {
	switch status {
	case http.StatusPartialContent:
		start, total, ok := parseContentRange(contentRange)
		if rng == "" || !ok || start != off {
			body.Close()
			return nil, got, fmt.Errorf("HTTP 206 with range %q to a GET from byte %d (Range %q)", contentRange, off, rng)
		}
		got.Size = total
	case http.StatusOK: // the whole object, any Range header ignored
		got.Size = contentLength
	default:
		body.Close()
		return nil, got, fmt.Errorf("HTTP %d to a GET (Range %q): neither the object nor the range", status, rng)
	}
	if pin != nil && !pin.sameVersion(got) {
		body.Close()
		return nil, got, changedError(*pin, got)
	}
	if status == http.StatusOK && rng != "" {
		// Costly but correct: skip to off, stop after n.
		if _, err := io.CopyN(io.Discard, body, off); err != nil {
			body.Close()
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, got, fmt.Errorf("skipping the %d bytes before the range of an answer that ignored it: %w", off, err)
		}
		if n >= 0 {
			body = readCloser{io.LimitReader(body, n), body}
		}
	}
	return body, got, nil
}

// changedError says how the version read differs from the one pinned.
func changedError(pin, got Info) error {
	switch {
	case pin.Size >= 0 && got.Size >= 0 && pin.Size != got.Size:
		return fmt.Errorf("%w: size %d, then %d", ErrChanged, pin.Size, got.Size)
	case pin.Generation != 0:
		return fmt.Errorf("%w: generation %d, then %d", ErrChanged, pin.Generation, got.Generation)
	case pin.ETag != "":
		return fmt.Errorf("%w: ETag %s, then %s", ErrChanged, pin.ETag, got.ETag)
	}
	return fmt.Errorf("%w: modified %s, then %s", ErrChanged, pin.ModTime, got.ModTime)
}

// do sends one request for loc, with rng as its Range header if not "".
func (h httpBackend) do(ctx context.Context, method string, loc Location, rng string) (*http.Response, error) {
	hdr := http.Header{}
	if rng != "" {
		hdr.Set("Range", rng)
	}
	// A compressed transfer would make byte offsets meaningless.
	hdr.Set("Accept-Encoding", "identity")
	return fetch(ctx, h.client, method, loc.requestURL(), loc, hdr, nil)
}

// fetch sends one request to u, on behalf of loc, with the headers hdr,
// and returns a 2xx response; any other status is a statusError, and a
// transport error names loc, not u, whose query may hold a token. The
// body of a failure is read up to errBodyLimit bytes and given to
// errBody, if not nil, for the service's reason and message (the
// statusError's); else it is discarded (it may echo the request).
func fetch(ctx context.Context, client *http.Client, method, u string, loc Location, hdr http.Header, errBody func([]byte) (reason, message string)) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = &url.Error{Op: ue.Op, URL: loc.String(), Err: ue.Err}
		}
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, errBodyLimit))
		resp.Body.Close()
		se := &statusError{code: resp.StatusCode}
		if errBody != nil {
			se.reason, se.message = errBody(body)
		}
		return nil, se
	}
	return resp, nil
}

// errBodyLimit is how much of a failed response's body fetch reads.
const errBodyLimit = 4096

// headerInfo reads the version headers of a response.
func headerInfo(loc Location, resp *http.Response) Info {
	info := Info{Location: loc, Size: -1, ETag: resp.Header.Get("ETag")}
	if t, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
		info.ModTime = t
	}
	return info
}

// parseContentRange reads "bytes start-end/total"; total is -1 for "*".
func parseContentRange(s string) (start, total int64, ok bool) {
	rest, found := strings.CutPrefix(s, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, tot, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	first, _, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	start, err := strconv.ParseInt(first, 10, 64)
	if err != nil || start < 0 {
		return 0, 0, false
	}
	if tot == "*" {
		return start, -1, true
	}
	total, err = strconv.ParseInt(tot, 10, 64)
	if err != nil || total < 0 {
		return 0, 0, false
	}
	return start, total, true
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}
