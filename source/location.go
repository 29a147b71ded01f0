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

// Parse parses s as a Location. It refuses other schemes and an empty
// bucket or host. An s3 or gs URL whose key is empty (s3://bucket,
// s3://bucket/) names the bucket's root, one whose key ends in '/' a
// prefix: Glob walks either as a directory (see IsDir). Its errors show s
// as RedactURL does.
func Parse(s string) (Location, error) {
	if !IsURL(s) {
		return Location{}, fmt.Errorf("source: %q is not an s3://, gs://, https:// or http:// URL", RedactURL(s))
	}
	i := strings.Index(s, "://")
	scheme := strings.ToLower(s[:i])
	rest := s[i+3:]
	switch scheme {
	case SchemeS3, SchemeGS:
		bucket, key, _ := strings.Cut(rest, "/")
		if bucket == "" {
			return Location{}, fmt.Errorf("source: %s: no bucket", RedactURL(s))
		}
		if !validBucket(bucket) {
			return Location{}, fmt.Errorf("source: %s: the bucket name is not valid (letters, digits, '.', '-' and '_')", RedactURL(s))
		}
		return Location{Scheme: scheme, Bucket: bucket, Key: key}, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return Location{}, fmt.Errorf("source: %s: not a valid URL", RedactURL(s))
	}
	if u.Host == "" {
		return Location{}, fmt.Errorf("source: %s: no host", RedactURL(s))
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

// IsDir reports whether an s3 or gs location names a directory rather
// than an object: the bucket's root (an empty key) or a prefix (a key
// ending in '/'). A web server has no directories.
func (l Location) IsDir() bool {
	return (l.Scheme == SchemeS3 || l.Scheme == SchemeGS) && (l.Key == "" || strings.HasSuffix(l.Key, "/"))
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
