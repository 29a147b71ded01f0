package objout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// gcsScope lets the store write and delete objects.
const gcsScope = "https://www.googleapis.com/auth/devstorage.read_write"

// gcsStore is one Cloud Storage bucket through the JSON API: uploads
// with uploadType=media (ifGenerationMatch=0 for put-if-absent), media
// with alt=media, listings and deletions on /storage/v1. With
// STORAGE_EMULATOR_HOST set it talks to that host unauthenticated, as
// the inputs' reader does; else with application default credentials.
type gcsStore struct {
	client *http.Client
	base   string
	bucket string
}

func newGCSStore(ctx context.Context, bucket string) (*gcsStore, error) {
	if host := os.Getenv("STORAGE_EMULATOR_HOST"); host != "" {
		base := host
		if !strings.Contains(base, "://") {
			base = "http://" + base
		}
		return &gcsStore{client: &http.Client{}, base: strings.TrimSuffix(base, "/"), bucket: bucket}, nil
	}
	creds, err := google.FindDefaultCredentials(context.WithoutCancel(ctx), gcsScope)
	if err != nil {
		return nil, fmt.Errorf("google application default credentials: %w", err)
	}
	return &gcsStore{client: oauth2.NewClient(context.WithoutCancel(ctx), creds.TokenSource), base: "https://storage.googleapis.com", bucket: bucket}, nil
}

// do sends a request and classifies a failure as s3Err does; the
// service's message is not echoed (it may quote a URL), only the status.
func (g *gcsStore) do(ctx context.Context, method, u string, body io.Reader, size int64) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.ContentLength = size
		req.Header.Set("Content-Type", "application/octet-stream")
	}
	resp, err := progressHTTP{g.client}.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &transientError{fmt.Errorf("%s: %w", method, errors.Unwrap(err))}
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	switch code := resp.StatusCode; {
	case code == http.StatusPreconditionFailed:
		return nil, fmt.Errorf("%w (HTTP 412)", ErrPrecondition)
	case code == http.StatusNotFound:
		return nil, fmt.Errorf("%w (HTTP 404)", ErrNotFound)
	case code == http.StatusTooManyRequests, code >= 500:
		return nil, &transientError{fmt.Errorf("%s: HTTP %d", method, code)}
	default:
		return nil, fmt.Errorf("%s: HTTP %d", method, code)
	}
}

func (g *gcsStore) objectURL(path, key string) string {
	return g.base + "/" + path + "/b/" + url.PathEscape(g.bucket) + "/o/" + url.PathEscape(key)
}

func (g *gcsStore) Put(ctx context.Context, key string, body io.ReadSeeker, size int64, ifAbsent bool) error {
	q := url.Values{"uploadType": {"media"}, "name": {key}}
	if ifAbsent {
		q.Set("ifGenerationMatch", "0")
	}
	resp, err := g.do(ctx, http.MethodPost, g.base+"/upload/storage/v1/b/"+url.PathEscape(g.bucket)+"/o?"+q.Encode(), io.NopCloser(body), size)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

func (g *gcsStore) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	resp, err := g.do(ctx, http.MethodGet, g.objectURL("download/storage/v1", key)+"?alt=media", nil, 0)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

func (g *gcsStore) List(ctx context.Context, prefix string, fn func(Object) error) error {
	q := url.Values{"prefix": {prefix}, "fields": {"items(name,size,updated),nextPageToken"}}
	for {
		resp, err := g.do(ctx, http.MethodGet, g.base+"/storage/v1/b/"+url.PathEscape(g.bucket)+"/o?"+q.Encode(), nil, 0)
		if err != nil {
			return err
		}
		var page struct {
			Items []struct {
				Name    string `json:"name"`
				Size    int64  `json:"size,string"`
				Updated string `json:"updated"`
			} `json:"items"`
			NextPageToken string `json:"nextPageToken"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			return &transientError{fmt.Errorf("decoding a listing: %w", err)}
		}
		for _, it := range page.Items {
			o := Object{Key: it.Name, Size: it.Size}
			o.ModTime, _ = time.Parse(time.RFC3339Nano, it.Updated)
			if err := fn(o); err != nil {
				return err
			}
		}
		if page.NextPageToken == "" {
			return nil
		}
		q.Set("pageToken", page.NextPageToken)
	}
}

func (g *gcsStore) Delete(ctx context.Context, key string) error {
	resp, err := g.do(ctx, http.MethodDelete, g.objectURL("storage/v1", key), nil, 0)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
