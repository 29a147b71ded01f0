package source

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// gcsScope is the OAuth scope the backend asks for: reading objects and
// their metadata, nothing more.
const gcsScope = "https://www.googleapis.com/auth/devstorage.read_only"

// gcsEndpoint is Cloud Storage's JSON API, when no emulator is named.
const gcsEndpoint = "https://storage.googleapis.com"

// gcsDialer makes one HTTP client for Cloud Storage per Client, on first
// use: with STORAGE_EMULATOR_HOST set, unauthenticated against that host
// (http:// unless the variable names a scheme), as Google's own client
// does; else against storage.googleapis.com with application default
// credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's user credentials,
// the metadata server). Client.mu guards it.
type gcsDialer struct {
	client *http.Client
	base   string // scheme and host, no trailing slash
}

// open returns the backend for one bucket.
func (d *gcsDialer) open(ctx context.Context, bucket string) (backend, error) {
	if d.client == nil {
		c, base, err := newGCSClient(ctx)
		if err != nil {
			return nil, err
		}
		d.client, d.base = c, base
	}
	return &gcsBackend{client: d.client, base: d.base, bucket: bucket}, nil
}

// close releases the client's idle connections.
func (d *gcsDialer) close() error {
	if d.client != nil {
		d.client.CloseIdleConnections()
		d.client = nil
	}
	return nil
}

// newGCSClient returns the HTTP client and the base URL of the JSON API.
// The token source lives as long as the Client, so it is made under a
// context of its own, not the caller's, whose end would stop token
// refreshes.
func newGCSClient(ctx context.Context) (*http.Client, string, error) {
	if host := os.Getenv("STORAGE_EMULATOR_HOST"); host != "" {
		base := host
		if !strings.Contains(base, "://") {
			base = "http://" + base
		}
		return &http.Client{}, strings.TrimSuffix(base, "/"), nil
	}
	creds, err := google.FindDefaultCredentials(context.WithoutCancel(ctx), gcsScope)
	if err != nil {
		return nil, "", fmt.Errorf("google application default credentials: %w", err)
	}
	return oauth2.NewClient(context.WithoutCancel(ctx), creds.TokenSource), gcsEndpoint, nil
}

// gcsBackend reaches one bucket through Cloud Storage's JSON API: object
// metadata at /storage/v1/b/{bucket}/o/{object}, listings at
// /storage/v1/b/{bucket}/o?prefix=, media at /download/storage/v1/... with
// alt=media, a Range header and, once the version is known, the
// generation, so that a resumed read gets the same bytes or nothing.
type gcsBackend struct {
	client *http.Client
	base   string
	bucket string
}

func (g *gcsBackend) close() error { return nil }

// gcsObject is the part of an object resource the backend reads.
type gcsObject struct {
	Name       string `json:"name"`
	Size       int64  `json:"size,string"`
	Etag       string `json:"etag"`
	Generation int64  `json:"generation,string"`
	Updated    string `json:"updated"`
	Crc32c     string `json:"crc32c"`  // base64, big-endian
	MD5Hash    string `json:"md5Hash"` // base64; none for a composite object
}

// info converts the resource for the object at loc.
func (o gcsObject) info(loc Location) Info {
	info := Info{Location: loc, Size: o.Size, ETag: quoteETag(o.Etag), Generation: o.Generation,
		Checksum: bestChecksum(base64Checksum(AlgCRC32C, o.Crc32c), base64Checksum(AlgMD5, o.MD5Hash))}
	if t, err := time.Parse(time.RFC3339Nano, o.Updated); err == nil {
		info.ModTime = t
	}
	return info
}

// objectURL is the JSON API's URL for key under path ("storage/v1" for
// metadata, "download/storage/v1" for media); the key is one escaped path
// segment, '/' included.
func (g *gcsBackend) objectURL(path, key string) string {
	return g.base + "/" + path + "/b/" + url.PathEscape(g.bucket) + "/o/" + url.PathEscape(key)
}

// getJSON decodes the JSON answer to a GET of u into v.
func (g *gcsBackend) getJSON(ctx context.Context, loc Location, u string, v any) error {
	resp, err := fetch(ctx, g.client, http.MethodGet, u, loc, nil, gcsErrorBody)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("decoding the JSON API's answer: %w", err)
	}
	return nil
}

func (g *gcsBackend) stat(ctx context.Context, loc Location) (Info, error) {
	var o gcsObject
	u := g.objectURL("storage/v1", loc.Key) + "?fields=" + url.QueryEscape("name,size,etag,generation,updated,crc32c,md5Hash")
	if err := g.getJSON(ctx, loc, u, &o); err != nil {
		return Info{}, err
	}
	return o.info(loc), nil
}

func (g *gcsBackend) list(ctx context.Context, bucket Location, prefix string, fn func(Info)) error {
	q := url.Values{}
	q.Set("prefix", prefix)
	q.Set("fields", "items(name,size,etag,generation,updated,crc32c,md5Hash),nextPageToken")
	for {
		var page struct {
			Items         []gcsObject `json:"items"`
			NextPageToken string      `json:"nextPageToken"`
		}
		u := g.base + "/storage/v1/b/" + url.PathEscape(g.bucket) + "/o?" + q.Encode()
		if err := g.getJSON(ctx, bucket, u, &page); err != nil {
			return err
		}
		for _, o := range page.Items {
			fn(o.info(Location{Scheme: SchemeGS, Bucket: bucket.Bucket, Key: o.Name}))
		}
		if page.NextPageToken == "" {
			return nil
		}
		q.Set("pageToken", page.NextPageToken)
	}
}

func (g *gcsBackend) read(ctx context.Context, loc Location, off, n int64, pin *Info) (io.ReadCloser, Info, error) {
	q := url.Values{"alt": {"media"}}
	if pin != nil && pin.Generation != 0 {
		// An overwritten generation answers 404; Reader then stats the
		// object to tell a change from a deletion.
		q.Set("generation", strconv.FormatInt(pin.Generation, 10))
	}
	hdr := http.Header{}
	rng := rangeHeader(off, n)
	if rng != "" {
		hdr.Set("Range", rng)
	}
	// Ask for the bytes as stored: without this, an object uploaded with
	// Content-Encoding gzip is decompressed on the way and its Range
	// ignored, so offsets would not be the object's.
	hdr.Set("Accept-Encoding", "gzip")
	resp, err := fetch(ctx, g.client, http.MethodGet, g.objectURL("download/storage/v1", loc.Key)+"?"+q.Encode(), loc, hdr, gcsErrorBody)
	if err != nil {
		return nil, Info{}, err
	}
	got := headerInfo(loc, resp)
	got.Generation, _ = strconv.ParseInt(resp.Header.Get("X-Goog-Generation"), 10, 64)
	got.Checksum = googHash(resp.Header.Values("X-Goog-Hash"))
	if ce, stored := resp.Header.Get("Content-Encoding"), resp.Header.Get("X-Goog-Stored-Content-Encoding"); ce != "" && ce != "identity" && stored != "" && stored != ce {
		resp.Body.Close()
		return nil, got, fmt.Errorf("the server sent the object with Content-Encoding %q, stored as %q", ce, stored)
	}
	return rangedBody(resp, off, n, rng, pin, got)
}

// gcsErrorBody reads the JSON API's error body,
// {"error":{"code":404,"message":"…","errors":[{"reason":"notFound",…}]}},
// for its first reason and its message; a body of another form gives
// neither (an emulator or a proxy may answer in plain text), and a
// message without a reason is given as both. The message is the
// service's, whole: Error shows it with every URL's query removed.
func gcsErrorBody(body []byte) (reason, message string) {
	var e struct {
		Error struct {
			Message string `json:"message"`
			Errors  []struct {
				Reason string `json:"reason"`
			} `json:"errors"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return "", ""
	}
	for _, x := range e.Error.Errors {
		if x.Reason != "" {
			reason = x.Reason
			break
		}
	}
	message = e.Error.Message
	if reason == "" {
		reason = message
	}
	return reason, message
}

// googHash reads the whole object's checksums from X-Goog-Hash headers
// ("crc32c=BASE64,md5=BASE64", one or several headers), which Cloud
// Storage sends with every GET of an object's bytes, ranged or not.
func googHash(values []string) Checksum {
	var cs []Checksum
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			name, val, _ := strings.Cut(strings.TrimSpace(part), "=")
			switch name {
			case "crc32c":
				cs = append(cs, base64Checksum(AlgCRC32C, val))
			case "md5":
				cs = append(cs, base64Checksum(AlgMD5, val))
			}
		}
	}
	return bestChecksum(cs...)
}

// quoteETag restores the quotes that Cloud Storage's JSON API drops.
func quoteETag(e string) string {
	if e == "" || strings.HasPrefix(e, `"`) || strings.HasPrefix(e, `W/"`) {
		return e
	}
	return `"` + e + `"`
}
