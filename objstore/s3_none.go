//go:build cdcetl_no_s3

package objstore

import (
	"context"
	"errors"
	"net/url"

	"gocloud.dev/blob"
)

func init() { leftOut["s3"] = "cdcetl_no_s3" }

func openS3(ctx context.Context, u *url.URL) (*blob.Bucket, error) {
	return nil, checkScheme(u.String())
}

// WithAWSConfig leaves ctx as it is: there is no S3 in this build.
func WithAWSConfig(ctx context.Context, raw string) (context.Context, error) {
	return ctx, checkScheme(raw)
}

// gaveUp reports whether err is a request that timed out.
func gaveUp(err error) bool {
	var timeout interface{ Timeout() bool }
	return errors.As(err, &timeout) && timeout.Timeout()
}
