package source

import (
	"context"

	"cloud.google.com/go/storage"
	"gocloud.dev/blob/gcsblob"
)

// gcsDialer makes one Cloud Storage client per Client, from application
// default credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's user
// credentials, the metadata server), or unauthenticated against the
// emulator named by STORAGE_EMULATOR_HOST, on first use. Client.mu
// guards it.
type gcsDialer struct {
	client *storage.Client
}

// open returns the backend for one bucket.
func (d *gcsDialer) open(ctx context.Context, bucket string) (backend, error) {
	if d.client == nil {
		// storage.NewClient reads STORAGE_EMULATOR_HOST itself.
		c, err := storage.NewClient(ctx)
		if err != nil {
			return nil, err
		}
		// Client retries, resuming a read from the byte it reached.
		c.SetRetry(storage.WithPolicy(storage.RetryNever))
		d.client = c
	}
	b, err := gcsblob.OpenBucket(ctx, nil, bucket, &gcsblob.Options{Client: d.client})
	if err != nil {
		return nil, err
	}
	return &blobBackend{scheme: SchemeGS, bucket: b}, nil
}

// close closes the storage client, if one was made.
func (d *gcsDialer) close() error {
	if d.client == nil {
		return nil
	}
	err := d.client.Close()
	d.client = nil
	return err
}
