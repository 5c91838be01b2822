package cdcetl

import (
	"bytes"
	"context"
	"testing"

	"github.com/cdcetl/cdcetl/writer"
)

// FuzzReader: any input reads to the end or to a located error, never a
// panic, and batches of one row give exactly the rows and the error of
// batches of many.
func FuzzReader(f *testing.F) {
	f.Add([]byte(`{"data":[{"id":"1","name":"a"}],"type":"INSERT"}` + "\n" + `{"data":[{"id":"1","name":"b"}],"old":[{"name":"a"}],"type":"UPDATE"}`))
	f.Add([]byte("\n\n{oops\n"))
	f.Add([]byte{0x1f, 0x8b, 0, 1})
	d := Decoding{Format: "canal-json", Schema: "id BIGINT, name STRING, `table` STRING METADATA FROM 'table' VIRTUAL",
		Options: map[string]string{"canal-json.ignore-parse-errors": "false"}}
	read := func(t *testing.T, in []byte, rows int) (string, string) {
		rr, err := NewReader(bytes.NewReader(in), d, WithBatchRows(rows), WithMaxLine(1<<16))
		if err != nil {
			return "", err.Error()
		}
		defer rr.Release()
		var buf bytes.Buffer
		p := writer.NewPrint(&buf, rr.Schema())
		for rr.Next() {
			if err := p.Write(context.Background(), rr.RecordBatch()); err != nil {
				t.Fatal(err)
			}
		}
		p.Close()
		if rr.Err() != nil {
			return "", rr.Err().Error() // the rows before an error are not returned
		}
		return buf.String(), ""
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		a, aerr := read(t, in, 1<<14)
		b, berr := read(t, in, 1)
		if a != b || aerr != berr {
			t.Fatalf("batches of many: %q %q\nbatches of one: %q %q", a, aerr, b, berr)
		}
	})
}
