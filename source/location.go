package source

import (
	"fmt"
	"net/url"
	"strings"
)

// Schemes this package opens.
const (
	SchemeS3    = "s3"    // Amazon S3 and S3-compatible stores
	SchemeGS    = "gs"    // Google Cloud Storage
	SchemeHTTPS = "https" // any web server
	SchemeHTTP  = "http"  // any web server, unencrypted (local servers)
)

// Location is a parsed input URL: s3://bucket/key, gs://bucket/key,
// https://host/path or http://host/path.
//
// For s3 and gs, Key is everything after "bucket/", verbatim: a '?' or '#'
// in it is part of the key, and nothing is percent-decoded. For http and
// https, Bucket is host[:port] and Key is the decoded path without its
// leading slash; the query and any user:password are kept for the request
// but never shown by String.
type Location struct {
	Scheme string
	Bucket string
	Key    string

	u *url.URL // http(s) only: the URL as given, for the request
}

// IsURL reports whether s names one of the schemes this package opens
// (s3://, gs://, https://, http://, case-insensitive). It does not check
// the rest of s; Parse does.
func IsURL(s string) bool {
	i := strings.Index(s, "://")
	if i <= 0 {
		return false
	}
	switch strings.ToLower(s[:i]) {
	case SchemeS3, SchemeGS, SchemeHTTPS, SchemeHTTP:
		return true
	}
	return false
}

// Parse parses s as a Location. It refuses other schemes, an empty bucket
// or host, and an s3 or gs URL without a key.
func Parse(s string) (Location, error) {
	if !IsURL(s) {
		return Location{}, fmt.Errorf("source: %q is not an s3://, gs://, https:// or http:// URL", redact(s))
	}
	i := strings.Index(s, "://")
	scheme := strings.ToLower(s[:i])
	rest := s[i+3:]
	switch scheme {
	case SchemeS3, SchemeGS:
		bucket, key, _ := strings.Cut(rest, "/")
		if bucket == "" {
			return Location{}, fmt.Errorf("source: %s: no bucket", redact(s))
		}
		if !validBucket(bucket) {
			return Location{}, fmt.Errorf("source: %s: bucket name %q is not valid", redact(s), bucket)
		}
		if key == "" {
			return Location{}, fmt.Errorf("source: %s: no object key", redact(s))
		}
		return Location{Scheme: scheme, Bucket: bucket, Key: key}, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return Location{}, fmt.Errorf("source: %s: not a valid URL", redact(s))
	}
	if u.Host == "" {
		return Location{}, fmt.Errorf("source: %s: no host", redact(s))
	}
	u.Scheme = scheme
	u.Fragment, u.RawFragment = "", ""
	return Location{Scheme: scheme, Bucket: u.Host, Key: strings.TrimPrefix(u.Path, "/"), u: u}, nil
}

// String returns the URL without a query string or user information, so
// it can go into errors, logs and reports: a signed URL's signature or a
// password never shows.
func (l Location) String() string {
	if l.Scheme == "" {
		return ""
	}
	if l.Scheme == SchemeHTTP || l.Scheme == SchemeHTTPS {
		u := url.URL{Scheme: l.Scheme, Host: l.Bucket, Path: "/" + l.Key}
		return u.String()
	}
	return l.Scheme + "://" + l.Bucket + "/" + l.Key
}

// requestURL is the URL an http(s) request goes to, query included.
func (l Location) requestURL() string {
	if l.u != nil {
		return l.u.String()
	}
	u := url.URL{Scheme: l.Scheme, Host: l.Bucket, Path: "/" + l.Key}
	return u.String()
}

// validBucket accepts what S3 and GCS bucket names may hold (letters,
// digits, '.', '-', '_'), so that a glob character or a path in a bucket
// name is refused before any request.
func validBucket(b string) bool {
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

// hasMeta reports whether a key holds a path.Match meta character.
func hasMeta(key string) bool {
	return strings.ContainsAny(key, `*?[\`)
}
