package source

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob/s3blob"
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
	b, err := s3blob.OpenBucket(ctx, d.client, bucket, nil)
	if err != nil {
		return nil, err
	}
	return &blobBackend{scheme: SchemeS3, bucket: b}, nil
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
		// Ranged reads carry no whole-object checksum; do not warn of it.
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.DisableLogOutputChecksumValidationSkipped = true
	}), nil
}
