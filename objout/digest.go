package objout

import "context"

// digestKey is the context key of the SHA-256 of a body being put.
type digestKey struct{}

// withDigest returns ctx carrying sum, the hex SHA-256 of the body the
// next Put under it sends: a store that can use it (S3: the payload hash
// it signs, and the checksum the server checks the bytes it received
// against) does not read the body to compute it again.
func withDigest(ctx context.Context, sum string) context.Context {
	return context.WithValue(ctx, digestKey{}, sum)
}

// digestOf returns the SHA-256 withDigest put in ctx, "" for none.
func digestOf(ctx context.Context) string {
	s, _ := ctx.Value(digestKey{}).(string)
	return s
}
