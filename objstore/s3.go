//go:build !cdcetl_no_s3

package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	gcaws "gocloud.dev/aws"
	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"

	"github.com/apache/iceberg-go/utils"
)

// s3Params are the query parameters of s3:// URLs that set the S3 client
// (the others set the AWS configuration: region, endpoint, profile, ...).
var s3Params = []string{"use_path_style", "s3ForcePathStyle", "disable_https", "accelerate", "ssetype", "kmskeyid"}

// openS3 opens an s3:// bucket URL with the policy's deadlines and
// retries: gocloud's own opener keeps the SDK's defaults, under which a
// request the server never answers waits for ever and three tries are
// all a flaky endpoint gets.
func openS3(ctx context.Context, u *url.URL) (*blob.Bucket, error) {
	q := u.Query()
	var s3opts []func(*s3.Options)
	var bopts s3blob.Options
	for _, k := range s3Params {
		v := q.Get(k)
		if v == "" {
			continue
		}
		q.Del(k)
		switch k {
		case "use_path_style", "s3ForcePathStyle", "disable_https", "accelerate":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("%s=%q: want true or false", k, v)
			}
			switch k {
			case "disable_https":
				s3opts = append(s3opts, func(o *s3.Options) { o.EndpointOptions.DisableHTTPS = b })
			case "accelerate":
				s3opts = append(s3opts, func(o *s3.Options) { o.UseAccelerate = b })
			default:
				s3opts = append(s3opts, func(o *s3.Options) { o.UsePathStyle = b })
			}
		case "ssetype":
			t, err := sseType(v)
			if err != nil {
				return nil, err
			}
			bopts.EncryptionType = t
		case "kmskeyid":
			bopts.KMSEncryptionID = v
		}
	}
	cfg, err := AWSConfig(ctx, q)
	if err != nil {
		return nil, err
	}
	bopts.RequestChecksumCalculation = cfg.RequestChecksumCalculation
	return s3blob.OpenBucket(ctx, s3.NewFromConfig(cfg, s3opts...), u.Host, &bopts)
}

func sseType(v string) (types.ServerSideEncryption, error) {
	for _, t := range types.ServerSideEncryptionAes256.Values() {
		if strings.EqualFold(string(t), v) {
			return t, nil
		}
	}
	return "", fmt.Errorf("ssetype=%q: want one of %v", v, types.ServerSideEncryptionAes256.Values())
}

// AWSConfig is the AWS configuration of a URL's query (region, endpoint,
// profile, ...) with the policy's HTTP client and retryer: for the
// buckets cdcetl opens and for iceberg-go's own S3 client alike.
func AWSConfig(ctx context.Context, q url.Values) (aws.Config, error) {
	cfg, err := gcaws.V2ConfigFromURLParams(ctx, q)
	if err != nil {
		return aws.Config{}, err
	}
	p := CurrentPolicy()
	cfg.HTTPClient = awshttp.NewBuildableClient().
		WithReadTimeout(p.Timeout). // no byte of an answer for Timeout
		WithTransportOptions(func(t *http.Transport) {
			t.ResponseHeaderTimeout = p.Timeout
			t.TLSHandshakeTimeout = min(p.Timeout, 10*time.Second)
			dial := t.DialContext
			if dial == nil {
				dial = (&net.Dialer{Timeout: min(p.Timeout, 10*time.Second)}).DialContext
			}
			t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := dial(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return &writeDeadlineConn{Conn: c, timeout: p.Timeout}, nil
			}
		})
	cfg.Retryer = func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = p.Attempts
			o.MaxBackoff = maxBackoff
			o.RateLimiter = ratelimit.None
			o.Retryables = append(o.Retryables, cutShort{})
		})
	}
	return cfg, nil
}

// WithAWSConfig gives ctx the AWS configuration of an s3:// location URL
// (ctx as it is for other schemes), where iceberg-go's S3 file IO looks
// for one.
func WithAWSConfig(ctx context.Context, raw string) (context.Context, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "s3" {
		return ctx, nil
	}
	q := u.Query()
	for _, k := range s3Params {
		q.Del(k)
	}
	cfg, err := AWSConfig(ctx, q)
	if err != nil {
		return ctx, fmt.Errorf("%s: %w", raw, err)
	}
	return utils.WithAwsConfig(ctx, &cfg), nil
}

// gaveUp reports whether err is a request that failed every try the
// policy allows, or one that timed out.
func gaveUp(err error) bool {
	var maxed *retry.MaxAttemptsError
	var timeout interface{ Timeout() bool }
	return errors.As(err, &maxed) || errors.As(err, &timeout) && timeout.Timeout()
}

// writeDeadlineConn fails a write that makes no progress for timeout (a
// server that stopped reading a request body); the SDK's read timeout
// covers the other direction.
type writeDeadlineConn struct {
	net.Conn
	timeout time.Duration
}

func (c *writeDeadlineConn) Write(p []byte) (int, error) {
	if err := c.Conn.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

// cutShort retries an answer whose body ended early.
type cutShort struct{}

func (cutShort) IsErrorRetryable(err error) aws.Ternary {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return aws.TrueTernary
	}
	return aws.UnknownTernary
}
