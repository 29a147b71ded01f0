package objout

import (
	"context"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// S3 takes at most 5 GiB in one PUT, and an archive of a large input is
// larger: such an object goes up as a multipart upload, whose
// completion is the put-if-absent (CompleteMultipartUpload with
// If-None-Match: *, which S3 honours since 2024).

// multipartThreshold is the size above which an object is uploaded in
// parts (a variable for the tests).
var multipartThreshold int64 = 4 << 30

// minPartSize is the size of every part but the last, unless the object
// needs bigger parts to stay within maxParts (S3: at least 5 MiB, at
// most 10,000 parts).
var minPartSize int64 = 64 << 20

const (
	maxParts = 10000
	// partWorkers is how many parts of one object go up at once.
	partWorkers = 4
	// partTries is how many times a part is sent before the upload
	// fails (then the whole object is tried again by Retry).
	partTries = 3
)

// partSize returns the part size for an object of size bytes.
func partSize(size int64) int64 {
	return max(minPartSize, (size+maxParts-1)/maxParts)
}

// putMultipart uploads size bytes of body under key in parts, read
// through body's ReadAt (an *os.File), partWorkers at a time, and
// completes the upload, with If-None-Match: * when ifAbsent. A failed
// upload is aborted, so that its parts are not kept (and billed).
func (s *s3Store) putMultipart(ctx context.Context, key string, body io.ReaderAt, size int64, ifAbsent bool) (err error) {
	created, err := s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return s3Err(err)
	}
	id := created.UploadId
	defer func() {
		if err != nil {
			// Aborted with a context of its own: ctx may be the reason.
			s.client.AbortMultipartUpload(context.WithoutCancel(ctx), &s3.AbortMultipartUploadInput{Bucket: &s.bucket, Key: &key, UploadId: id})
		}
	}()
	ps := partSize(size)
	n := int((size + ps - 1) / ps)
	parts := make([]types.CompletedPart, n)
	err = forEach(ctx, n, partWorkers, func(ctx context.Context, i int) error {
		off := int64(i) * ps
		etag, err := s.uploadPart(ctx, key, id, int32(i+1), io.NewSectionReader(body, off, min(ps, size-off)))
		parts[i] = types.CompletedPart{ETag: etag, PartNumber: aws.Int32(int32(i + 1))}
		return err
	})
	if err != nil {
		return err
	}
	in := &s3.CompleteMultipartUploadInput{Bucket: &s.bucket, Key: &key, UploadId: id,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}
	if ifAbsent {
		in.IfNoneMatch = aws.String("*")
	}
	_, err = s.client.CompleteMultipartUpload(ctx, in)
	return s3Err(err)
}

// uploadPart sends one part, partTries times at most on a transient
// error, and returns its ETag.
func (s *s3Store) uploadPart(ctx context.Context, key string, id *string, num int32, body *io.SectionReader) (*string, error) {
	var err error
	for range partTries {
		if _, serr := body.Seek(0, io.SeekStart); serr != nil {
			return nil, serr
		}
		var out *s3.UploadPartOutput
		out, err = s.client.UploadPart(ctx, &s3.UploadPartInput{Bucket: &s.bucket, Key: &key, UploadId: id,
			PartNumber: aws.Int32(num), Body: body, ContentLength: aws.Int64(body.Size())})
		if err = s3Err(err); err == nil {
			return out.ETag, nil
		}
		if !isTransient(err) || ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("part %d: %w", num, err)
}
