package decode

import (
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// CheckControl decodes msg, a message read as carrying no rows, with
// format f and opts (no columns), and returns the error conversion would
// meet on it, or nil. It lets a reader that only looks at envelopes (the
// schema inference behind inspect) agree with the decoder on which
// messages are control messages and which are errors.
func CheckControl(f *Format, opts Options, msg []byte) error {
	s := &arrowconv.Schema{}
	b := arrowconv.NewBuilder(memory.DefaultAllocator, s)
	defer b.Release()
	opts.IgnoreParseErrors = false
	d, err := New(f, s, opts, b)
	if err != nil {
		return err
	}
	_, err = d.Decode(msg)
	return err
}
