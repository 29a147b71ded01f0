// Package source opens inputs that live in object storage or on a web
// server: s3://bucket/key, gs://bucket/key, https://host/path and
// http://host/path. It is the layer under the pipeline's first stage
// (package stream) for inputs that are not local files: it finds them
// (Glob, over object listings, in key order; a prefix ending in '/' or a
// bucket's root is walked as a directory, and a "**" segment matches any
// number of segments), tells their size and version
// (Stat: ETag or generation, modification time), and reads them, as one
// stream (Open), a byte range (NewRangeReader) or with several ranged GETs
// in flight (NewParallelReader), never holding an object whole.
//
// Retries belong here, not to the pipeline: a transient failure (HTTP 5xx,
// 408 or 429, a reset connection, a body cut short, a timeout, a stall:
// a GET, a stat or a listing that gets no answer for the stall timeout) is
// tried again with exponential backoff from the byte offset reached, a
// bounded number of times, every request pinned to the version first
// seen, so the bytes delivered equal an uninterrupted read or the read
// fails with ErrChanged. A permanent failure is an *Error that names the
// URL (never its query string or a password: see Redact and RedactURL),
// the service's error code and message or the status, and matches
// ErrNotFound, ErrForbidden or ErrNoCredentials with errors.Is; Temporary
// tells a fault of the store that outlasted the retries from one the user
// must fix.
//
// S3 is reached through the AWS SDK v2's s3.Client, by exact key, with
// the SDK's default credential chain; AWS_ENDPOINT_URL_S3 or
// AWS_ENDPOINT_URL names an S3-compatible store (MinIO, R2, Ceph),
// addressed path-style. Cloud Storage is reached through its JSON API
// with net/http, with application default credentials from
// golang.org/x/oauth2/google (not Google's storage library, which links
// gRPC and OpenTelemetry into every command); STORAGE_EMULATOR_HOST names
// an emulator. Web servers are reached with net/http and the Range header.
//
// One job per file: location.go parses URLs, client.go holds the Client
// and its options, s3.go (S3), gcs.go (Cloud Storage) and http.go are the
// three backends (http.go's checkRange checks every ranged answer),
// checksum.go checks a whole object against its store's checksum
// (ErrCorrupt), credentials.go finds a missing credential before any
// request, glob.go lists, reader.go streams with retries, parallel.go
// reads ranges in parallel, retry.go says what is transient, errors.go
// what an error says.
package source
