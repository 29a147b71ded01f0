package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// s3Dialer makes one S3 client per Client, from the AWS SDK's default
// chain (environment, shared config and credentials files, SSO, instance
// and container roles), on first use. Client.mu guards it.
type s3Dialer struct {
	client *s3.Client
}

// open returns the backend for one bucket.
func (d *s3Dialer) open(ctx context.Context, bucket string) (backend, error) {
	if d.client == nil {
		c, err := newS3Client(ctx)
		if err != nil {
			return nil, err
		}
		d.client = c
	}
	return &s3Backend{client: d.client, bucket: bucket}, nil
}

// newS3Client builds the S3 client. An endpoint set through
// AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (or endpoint_url in the shared
// config) is addressed path-style, as MinIO, Ceph and most S3-compatible
// stores expect; without a configured region, us-east-1 is used. The SDK
// does not retry: Client does, resuming a read from the byte it reached.
func newS3Client(ctx context.Context) (*s3.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx, append(quietAWS(), config.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }))...)
	if err != nil {
		return nil, err
	}
	if err := checkAWSCredentials(ctx, cfg); err != nil {
		return nil, err
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		if o.BaseEndpoint != nil {
			o.UsePathStyle = true
		}
		// Reader checks the whole object's checksum itself, across
		// resumed GETs (checksum.go); the SDK checks only one response.
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.DisableLogOutputChecksumValidationSkipped = true
	}), nil
}

// s3Backend reaches one bucket with the AWS SDK's S3 client directly:
// ListObjectsV2, HeadObject and GetObject, each with the key exactly as
// the listing or the URL gave it. (gocloud.dev/blob, used before, maps
// keys through its own escaping, so that a key holding "__0x2f__", "../",
// a newline or a tab was listed under one name and fetched under another,
// and it hid the GET's status and Content-Range.)
type s3Backend struct {
	client *s3.Client
	bucket string
}

func (b *s3Backend) close() error { return nil }

func (b *s3Backend) stat(ctx context.Context, loc Location) (Info, error) {
	out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{
		Bucket: aws.String(b.bucket), Key: aws.String(loc.Key),
		// S3 sends the object's full-object checksums only when asked.
		ChecksumMode: types.ChecksumModeEnabled,
	})
	if err != nil {
		return Info{}, err
	}
	info := Info{Location: loc, Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag), ModTime: aws.ToTime(out.LastModified)}
	info.Checksum = s3Checksum(etagMD5(info.ETag, out.ServerSideEncryption, out.SSECustomerAlgorithm), out.ChecksumType, out.ChecksumCRC32C, out.ChecksumCRC32, out.ChecksumCRC64NVME, out.ChecksumSHA256, out.ChecksumSHA1)
	return info, nil
}

func (b *s3Backend) list(ctx context.Context, bucket Location, prefix string, fn func(Info)) error {
	in := &s3.ListObjectsV2Input{Bucket: aws.String(b.bucket), Prefix: aws.String(prefix), EncodingType: types.EncodingTypeUrl}
	for {
		out, err := b.client.ListObjectsV2(ctx, in)
		if err != nil {
			return err
		}
		for _, obj := range out.Contents {
			key := aws.ToString(obj.Key)
			if out.EncodingType == types.EncodingTypeUrl {
				// Asked for, so that a key with characters XML 1.0
				// cannot carry comes through; a store that ignores the
				// request sends the keys as they are and does not say
				// "url".
				if key, err = url.QueryUnescape(key); err != nil {
					return fmt.Errorf("listing: a URL-encoded key that does not decode: %w", err)
				}
			}
			// No checksum: a listing does not say whether the ETag is
			// the MD5 of the bytes (not with SSE-KMS or SSE-C); the first
			// GET of a read tells.
			fn(Info{
				Location: Location{Scheme: SchemeS3, Bucket: bucket.Bucket, Key: key},
				Size:     aws.ToInt64(obj.Size), ETag: aws.ToString(obj.ETag), ModTime: aws.ToTime(obj.LastModified),
			})
		}
		if !aws.ToBool(out.IsTruncated) || aws.ToString(out.NextContinuationToken) == "" {
			return nil
		}
		in.ContinuationToken = out.NextContinuationToken
	}
}

func (b *s3Backend) read(ctx context.Context, loc Location, off, n int64, pin *Info) (io.ReadCloser, Info, error) {
	rng := rangeHeader(off, n)
	in := &s3.GetObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(loc.Key)}
	if rng != "" {
		in.Range = aws.String(rng)
	} else {
		// A GET of the whole object carries its full-object checksum
		// when asked for; a ranged one never does.
		in.ChecksumMode = types.ChecksumModeEnabled
	}
	if pin != nil && pin.ETag != "" {
		// Ask S3 to refuse another version (HTTP 412). rangedBody's
		// comparison catches a store that ignores the condition.
		in.IfMatch = aws.String(pin.ETag)
	}
	out, err := b.client.GetObject(ctx, in, withoutSDKChecksum)
	if err != nil {
		return nil, Info{}, err
	}
	raw, ok := awsmiddleware.GetRawResponse(out.ResultMetadata).(*smithyhttp.Response)
	if !ok {
		out.Body.Close()
		return nil, Info{}, errors.New("the S3 client gave no HTTP response")
	}
	got := Info{Location: loc, Size: -1, ETag: aws.ToString(out.ETag), ModTime: aws.ToTime(out.LastModified)}
	got.Checksum = etagMD5(got.ETag, out.ServerSideEncryption, out.SSECustomerAlgorithm)
	if raw.StatusCode == 200 && rng == "" {
		got.Checksum = s3Checksum(got.Checksum, out.ChecksumType, out.ChecksumCRC32C, out.ChecksumCRC32, out.ChecksumCRC64NVME, out.ChecksumSHA256, out.ChecksumSHA1)
	}
	length := int64(-1) // unknown, as for a chunked answer
	if out.ContentLength != nil {
		length = *out.ContentLength
	}
	return checkRange(raw.StatusCode, aws.ToString(out.ContentRange), length, out.Body, off, n, rng, pin, got)
}

// withoutSDKChecksum takes the SDK's own check of a GET's checksum out of
// the request: Reader computes the checksum once, over every resumed
// GET of the object, not twice over the first.
func withoutSDKChecksum(o *s3.Options) {
	o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
		st.Deserialize.Remove("AWSChecksum:ValidateOutputPayloadChecksum")
		return nil
	})
}

// etagMD5 is the MD5 that the ETag of a single-part S3 object is, unless
// the object is encrypted with SSE-KMS or SSE-C, whose ETags are not the
// MD5 of the bytes.
func etagMD5(etag string, sse types.ServerSideEncryption, sseC *string) Checksum {
	if (sse != "" && sse != types.ServerSideEncryptionAes256) || aws.ToString(sseC) != "" {
		return Checksum{}
	}
	return etagChecksum(etag)
}

// s3Checksum is the cheapest whole-object checksum S3 told: a
// full-object checksum (not a composite one, "…-N", of the parts of a
// multipart upload), else md5, from the ETag.
func s3Checksum(md5 Checksum, typ types.ChecksumType, crc32c, crc32, crc64, sha256, sha1 *string) Checksum {
	cs := []Checksum{md5}
	if typ == "" || typ == types.ChecksumTypeFullObject {
		cs = append(cs,
			base64Checksum(AlgCRC32C, aws.ToString(crc32c)),
			base64Checksum(AlgCRC32, aws.ToString(crc32)),
			base64Checksum(AlgCRC64NVME, aws.ToString(crc64)),
			base64Checksum(AlgSHA256, aws.ToString(sha256)),
			base64Checksum(AlgSHA1, aws.ToString(sha1)))
	}
	return bestChecksum(cs...)
}

// NewS3Client returns an S3 client set up as the one that reads inputs
// (the SDK's default credential chain, checked once; AWS_ENDPOINT_URL_S3
// or AWS_ENDPOINT_URL addressed path-style; us-east-1 without a region;
// no retries in the SDK), for the package that writes OUT to S3 (objout),
// which retries itself. A missing credential matches ErrNoCredentials.
func NewS3Client(ctx context.Context) (*s3.Client, error) {
	return newS3Client(ctx)
}
