package writer

import (
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
	"github.com/parquet-go/parquet-go/format"
)

// fastSnappy is Parquet's SNAPPY codec with the plain (not "better")
// encoder: standard snappy blocks any reader decodes, written about twice
// as fast for a few percent more bytes. parquet-go's own codec uses the
// slower "better" encoder.
type fastSnappy struct{}

func (fastSnappy) String() string                            { return "SNAPPY" }
func (fastSnappy) CompressionCodec() format.CompressionCodec { return format.Snappy }

func (fastSnappy) Encode(dst, src []byte) ([]byte, error) {
	if n := s2.MaxEncodedLen(len(src)); cap(dst) < n {
		dst = make([]byte, n)
	}
	return s2.EncodeSnappy(dst[:cap(dst)], src), nil
}

func (fastSnappy) Decode(dst, src []byte) ([]byte, error) { return snappy.Decode(dst, src) }
