package decode

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/cdcetl/cdcetl/writer"
)

// TestPlaceholderInImages: under producer semantics Debezium's
// unavailable-value placeholder is a value not sent wherever a whole image
// is converted (a create's after, an update's and a delete's before) --
// as text, as base64 in a BYTES column, as an array's one element -- and
// NULL there, listed in unchanged-columns; a text that only resembles it
// is a value. placeholderSeeds are the messages.
func TestPlaceholderInImages(t *testing.T) {
	const schema = "id INT, name STRING, description STRING, bin BYTES, arr ARRAY<STRING>, " +
		"unchanged ARRAY<STRING> METADATA FROM 'unchanged-columns' VIRTUAL"
	want := []string{
		"+I[1, null, d, null, null, [name, bin, arr]]",
		"-U[1, null, null, [1, 2], null, [name, description, arr]]",
		"+U[1, null, x, null, null, [name, bin, arr]]",
		"-D[2, null, __debezium_unavailable_valu, null, null, [name, bin, arr]]",
	}
	for _, plain := range []bool{false, true} {
		d, b := producerDecoder(t, "debezium-json", schema, nil)
		d.(*base).plain = plain
		for _, m := range placeholderSeeds {
			if _, err := d.Decode([]byte(m)); err != nil {
				t.Fatalf("%s: %v", m, err)
			}
		}
		rec := b.Flush()
		var out bytes.Buffer
		p := writer.NewPrint(&out, b.Schema())
		if err := p.Write(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		p.Close()
		rec.Release()
		b.Release()
		if got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("plain=%v:\n%s\nwant\n%s", plain, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
