package decode

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// TestEncodeSlicedBatch: a batch that is a slice of a larger one (its
// string arrays' offsets count from the start of the whole values buffer,
// while Arrow's ValueBytes starts at the slice's first value) encodes to
// the lines of its own rows. Before arrowconv.StringBytes the STRING
// encoder read another row's bytes.
func TestEncodeSlicedBatch(t *testing.T) {
	s, err := arrowconv.ParseColumns("id INT, name STRING, tags MAP<STRING, STRING>")
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	bld := arrowconv.NewBuilder(mem, s)
	defer bld.Release()
	for r := range 10 {
		bld.AppendKind(arrowconv.Insert)
		bld.Column(0).(*arrowconv.FixedCol[int32]).Append(int32(r))
		bld.Column(1).(*arrowconv.BytesCol).Append([]byte(fmt.Sprintf("row %d %s", r, strings.Repeat("x", r))))
		m := bld.Column(2).(*arrowconv.MapCol)
		m.Start()
		m.Keys.(*arrowconv.BytesCol).Append([]byte(fmt.Sprintf("k%d", r)))
		m.Values.(*arrowconv.BytesCol).Append([]byte(fmt.Sprintf("v%d", r)))
	}
	rec := bld.Flush()
	defer rec.Release()
	part := rec.NewSlice(3, 8)
	defer part.Release()
	f, _ := Lookup("debezium-json")
	encode := func(r arrow.RecordBatch) [][]byte {
		enc, err := NewEncoder(f, s, Options{}, EncodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out, err := enc.AppendBatch(nil, r)
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Split(bytes.TrimSuffix(enc.Finish(out), []byte("\n")), []byte("\n"))
	}
	whole, sliced := encode(rec), encode(part)
	if got, want := bytes.Join(sliced, []byte("\n")), bytes.Join(whole[3:8], []byte("\n")); !bytes.Equal(got, want) {
		t.Fatalf("the slice's rows encode to\n%s\nwant\n%s", got, want)
	}
}
