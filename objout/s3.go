package objout

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/convbatch/convbatch/source"
)

// s3Store is one S3 bucket through the AWS SDK.
type s3Store struct {
	client *s3.Client
	bucket string
}

func newS3Store(ctx context.Context, bucket string) (*s3Store, error) {
	c, err := source.NewS3Client(ctx)
	if err != nil {
		return nil, err
	}
	// The same client, its answers counted as progress by the watchdog.
	c = s3.New(c.Options(), func(o *s3.Options) { o.HTTPClient = progressHTTP{o.HTTPClient} })
	return &s3Store{client: c, bucket: bucket}, nil
}

// s3Err classifies an SDK error: 412 is ErrPrecondition, 404
// ErrNotFound, 409 (concurrent conditional writes), 429, 5xx and a
// request that got no answer (a connection cut mid-PUT) are transient.
func s3Err(err error) error {
	if err == nil {
		return nil
	}
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		switch code := re.HTTPStatusCode(); {
		case code == http.StatusPreconditionFailed:
			return fmt.Errorf("%w (HTTP 412)", ErrPrecondition)
		case code == http.StatusNotFound:
			return fmt.Errorf("%w (HTTP 404)", ErrNotFound)
		case code == 0, // no answer: the request was cut on its way
			code == http.StatusConflict, code == http.StatusTooManyRequests, code >= 500:
			return &transientError{err}
		}
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &transientError{err}
}

func (s *s3Store) Put(ctx context.Context, key string, body io.ReadSeeker, size int64, ifAbsent bool) error {
	if ra, ok := body.(io.ReaderAt); ok && size > multipartThreshold {
		return s.putMultipart(ctx, key, ra, size, ifAbsent)
	}
	in := &s3.PutObjectInput{Bucket: &s.bucket, Key: &key, Body: body, ContentLength: aws.Int64(size)}
	if ifAbsent {
		in.IfNoneMatch = aws.String("*")
	}
	var opts []func(*s3.Options)
	if sum := digestOf(ctx); sum != "" {
		// The body's SHA-256 is known (the manifest's): S3 checks the
		// bytes it receives against it (x-amz-checksum-sha256), and the
		// SDK signs it as the payload hash instead of reading the body
		// once more to compute it.
		b, err := hex.DecodeString(sum)
		if err != nil || len(b) != sha256.Size {
			return fmt.Errorf("put %s: bad SHA-256 %q", key, sum)
		}
		in.ChecksumSHA256 = aws.String(base64.StdEncoding.EncodeToString(b))
		opts = append(opts, withPayloadHash(sum))
	}
	_, err := s.client.PutObject(ctx, in, opts...)
	return s3Err(err)
}

func (s *s3Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return nil, s3Err(err)
	}
	return out.Body, nil
}

func (s *s3Store) List(ctx context.Context, prefix string, fn func(Object) error) error {
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return s3Err(err)
		}
		for _, o := range page.Contents {
			obj := Object{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size)}
			if o.LastModified != nil {
				obj.ModTime = *o.LastModified
			}
			if err := fn(obj); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *s3Store) Delete(ctx context.Context, key string) error {
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key})
	if err = s3Err(err); errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// withPayloadHash makes the request's signed payload hash sum, so that
// the SDK's ComputePayloadSHA256 step, which reads the whole body, is
// skipped.
func withPayloadHash(sum string) func(*s3.Options) {
	return func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("convbatchPayloadHash",
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					return next.HandleFinalize(v4.SetPayloadHash(ctx, sum), in)
				}), "ComputePayloadHash", middleware.Before)
		})
	}
}
