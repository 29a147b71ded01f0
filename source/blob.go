package source

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"gocloud.dev/blob"
)

// blobBackend reaches one bucket of S3 through gocloud.dev/blob; the
// scheme says which driver's types to ask for the ETag and how to pin a
// read to one version.
type blobBackend struct {
	scheme string
	bucket *blob.Bucket
}

func (b *blobBackend) close() error { return b.bucket.Close() }

func (b *blobBackend) stat(ctx context.Context, loc Location) (Info, error) {
	a, err := b.bucket.Attributes(ctx, loc.Key)
	if err != nil {
		return Info{}, err
	}
	return Info{Location: loc, Size: a.Size, ETag: a.ETag, ModTime: a.ModTime}, nil
}

func (b *blobBackend) list(ctx context.Context, bucket Location, prefix string, fn func(Info)) error {
	it := b.bucket.List(&blob.ListOptions{Prefix: prefix})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if obj.IsDir {
			continue
		}
		info := Info{Location: Location{Scheme: b.scheme, Bucket: bucket.Bucket, Key: obj.Key}, Size: obj.Size, ModTime: obj.ModTime}
		var so types.Object
		if b.scheme == SchemeS3 && obj.As(&so) {
			info.ETag = aws.ToString(so.ETag)
		}
		fn(info)
	}
}

func (b *blobBackend) read(ctx context.Context, loc Location, off, n int64, pin *Info) (io.ReadCloser, Info, error) {
	opts := &blob.ReaderOptions{BeforeRead: func(as func(any) bool) error {
		// Ask S3 to refuse another version (HTTP 412). The comparison
		// below catches a store that ignores the condition.
		var in *s3.GetObjectInput
		if pin != nil && b.scheme == SchemeS3 && pin.ETag != "" && as(&in) {
			in.IfMatch = aws.String(pin.ETag)
		}
		return nil
	}}
	r, err := b.bucket.NewRangeReader(ctx, loc.Key, off, n, opts)
	if err != nil {
		return nil, Info{}, err
	}
	got := Info{Location: loc, Size: r.Size(), ModTime: r.ModTime()}
	var out s3.GetObjectOutput
	if b.scheme == SchemeS3 && r.As(&out) {
		got.ETag = aws.ToString(out.ETag)
	}
	if pin != nil && !pin.sameVersion(got) {
		r.Close()
		return nil, got, changedError(*pin, got)
	}
	return r, got, nil
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

// quoteETag restores the quotes that Cloud Storage's JSON API drops.
func quoteETag(e string) string {
	if e == "" || strings.HasPrefix(e, `"`) || strings.HasPrefix(e, `W/"`) {
		return e
	}
	return `"` + e + `"`
}
