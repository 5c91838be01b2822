package decode

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"pgregory.net/rapid"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/testutil"
)

// genType draws a Flink type; nested types down to depth.
func genType(t *rapid.T, depth int, label string) arrowconv.Type {
	kinds := []arrowconv.Kind{arrowconv.Boolean, arrowconv.TinyInt, arrowconv.SmallInt, arrowconv.Int, arrowconv.BigInt,
		arrowconv.Float, arrowconv.Double, arrowconv.Decimal, arrowconv.String, arrowconv.VarChar, arrowconv.Bytes,
		arrowconv.Date, arrowconv.Time, arrowconv.Timestamp, arrowconv.TimestampLTZ}
	if depth > 0 {
		kinds = append(kinds, arrowconv.Array, arrowconv.Map, arrowconv.Multiset, arrowconv.Row)
	}
	k := rapid.SampledFrom(kinds).Draw(t, label)
	switch k {
	case arrowconv.Decimal:
		p := rapid.IntRange(1, 38).Draw(t, label+".p")
		return arrowconv.Type{Kind: k, Precision: p, Scale: rapid.IntRange(0, p).Draw(t, label+".s")}
	case arrowconv.VarChar:
		return arrowconv.Type{Kind: k, Precision: 10}
	case arrowconv.Time:
		return arrowconv.Type{Kind: k, Precision: rapid.IntRange(0, 3).Draw(t, label+".p")}
	case arrowconv.Timestamp, arrowconv.TimestampLTZ:
		return arrowconv.Type{Kind: k, Precision: rapid.IntRange(0, 9).Draw(t, label+".p")}
	case arrowconv.Array:
		e := genType(t, depth-1, label+".e")
		return arrowconv.Type{Kind: k, Elem: &e}
	case arrowconv.Map, arrowconv.Multiset:
		key := arrowconv.Type{Kind: arrowconv.String}
		v := genType(t, depth-1, label+".v")
		return arrowconv.Type{Kind: k, Elem: &key, Value: &v}
	case arrowconv.Row:
		n := rapid.IntRange(1, 3).Draw(t, label+".n")
		var fs []arrowconv.Field
		for i := 0; i < n; i++ {
			// Nested names may repeat top-level ones: canal's "old" search
			// looks inside nested objects.
			fs = append(fs, arrowconv.Field{Name: fmt.Sprintf("c%d", i), Type: genType(t, depth-1, fmt.Sprintf("%s.f%d", label, i))})
		}
		return arrowconv.Type{Kind: k, Fields: fs}
	}
	return arrowconv.Type{Kind: k}
}

// genJSON draws a JSON text that decodes to a value of typ, or null.
func genJSON(t *rapid.T, typ arrowconv.Type, label string) string {
	if rapid.IntRange(0, 9).Draw(t, label+".null") == 0 {
		return "null"
	}
	switch typ.Kind {
	case arrowconv.Boolean:
		return strconv.FormatBool(rapid.Bool().Draw(t, label))
	case arrowconv.TinyInt:
		return strconv.Itoa(int(rapid.Int8().Draw(t, label)))
	case arrowconv.SmallInt:
		return strconv.Itoa(int(rapid.Int16().Draw(t, label)))
	case arrowconv.Int:
		return strconv.Itoa(int(rapid.Int32().Draw(t, label)))
	case arrowconv.BigInt:
		return strconv.FormatInt(rapid.Int64().Draw(t, label), 10)
	case arrowconv.Float, arrowconv.Double:
		f := rapid.Float64().Draw(t, label)
		if typ.Kind == arrowconv.Float {
			f = float64(float32(f))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return `"` + string(arrowconv.AppendJavaDouble(nil, f)) + `"`
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	case arrowconv.Decimal:
		digits := rapid.StringMatching(fmt.Sprintf("[0-9]{1,%d}", typ.Precision)).Draw(t, label)
		for len(digits) <= typ.Scale {
			digits = "0" + digits
		}
		s := digits[:len(digits)-typ.Scale]
		if typ.Scale > 0 {
			s += "." + digits[len(digits)-typ.Scale:]
		}
		if rapid.Bool().Draw(t, label+".neg") {
			s = "-" + s
		}
		return `"` + s + `"`
	case arrowconv.String, arrowconv.VarChar:
		b, _ := json.Marshal(rapid.String().Draw(t, label))
		return string(b)
	case arrowconv.Bytes:
		return `"` + base64.StdEncoding.EncodeToString(rapid.SliceOfN(rapid.Byte(), 0, 8).Draw(t, label)) + `"`
	case arrowconv.Date:
		d := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rapid.IntRange(0, 3652058).Draw(t, label))
		return `"` + d.Format("2006-01-02") + `"`
	case arrowconv.Time:
		s := rapid.IntRange(0, 86399).Draw(t, label)
		return fmt.Sprintf(`"%02d:%02d:%02d"`, s/3600, s/60%60, s%60)
	case arrowconv.Timestamp, arrowconv.TimestampLTZ:
		ns := rapid.Int64Range(-2208988800e9, 7258118400e9).Draw(t, label) // 1900..2200
		s := time.Unix(0, ns).UTC().Format("2006-01-02 15:04:05.999999999")
		if typ.Kind == arrowconv.TimestampLTZ {
			s += "Z"
		}
		return `"` + s + `"`
	case arrowconv.Array:
		n := rapid.IntRange(0, 3).Draw(t, label+".len")
		var parts []string
		for i := 0; i < n; i++ {
			parts = append(parts, genJSON(t, *typ.Elem, fmt.Sprintf("%s[%d]", label, i)))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case arrowconv.Map, arrowconv.Multiset:
		n := rapid.IntRange(0, 3).Draw(t, label+".len")
		vt := arrowconv.Type{Kind: arrowconv.Int}
		if typ.Kind == arrowconv.Map {
			vt = *typ.Value
		}
		var parts []string
		for i := 0; i < n; i++ {
			parts = append(parts, fmt.Sprintf(`"k%d":%s`, i, genJSON(t, vt, fmt.Sprintf("%s.k%d", label, i))))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case arrowconv.Row:
		var parts []string
		for _, f := range typ.Fields {
			parts = append(parts, fmt.Sprintf(`%q:%s`, f.Name, genJSON(t, f.Type, label+"."+f.Name)))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	panic("no generator for " + typ.String())
}

// batchesOf decodes lines with format f into batches, flushing after each
// message with probability 1/3 so that update pairs span batches.
func batchesOf(t *rapid.T, f *Format, s *arrowconv.Schema, o Options, lines [][]byte, label string) []arrow.RecordBatch {
	b := arrowconv.NewBuilder(memory.NewGoAllocator(), s)
	d, err := New(f, s, o, b)
	if err != nil {
		t.Fatal(err)
	}
	var out []arrow.RecordBatch
	for i, l := range lines {
		if _, err := d.Decode(l); err != nil {
			t.Fatalf("%s: decoding %s: %v", f.Name, l, err)
		}
		if rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("%s.flush%d", label, i)) == 0 {
			if rec := b.Flush(); rec != nil {
				out = append(out, rec)
			}
		}
	}
	if rec := b.Flush(); rec != nil {
		out = append(out, rec)
	}
	return out
}

// printRows renders each row as --to print does, one string per row.
func printRows(t *rapid.T, batches []arrow.RecordBatch) []string {
	var rows []string
	for _, rec := range batches {
		rows = append(rows, testutil.PrintedRows(rec)...)
	}
	return rows
}

// TestRoundTripProperty: for random schemas and changelogs, decoding what a
// format's encoder wrote gives the original rows back with --merge-updates,
// and Flink's delete/insert rewrite of them without.
func TestRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 5).Draw(t, "columns")
		var cols []string
		var fields []arrowconv.Field
		for i := 0; i < n; i++ {
			typ := genType(t, 2, fmt.Sprintf("col%d", i))
			fields = append(fields, arrowconv.Field{Name: fmt.Sprintf("c%d", i), Type: typ})
			cols = append(cols, fmt.Sprintf("c%d %s", i, typ))
		}
		s, err := arrowconv.ParseColumns(strings.Join(cols, ", "))
		if err != nil {
			t.Fatalf("%v: %s", err, strings.Join(cols, ", "))
		}
		row := func(label string) string {
			var parts []string
			for _, f := range fields {
				parts = append(parts, fmt.Sprintf("%q:%s", f.Name, genJSON(t, f.Type, label+"."+f.Name)))
			}
			return "{" + strings.Join(parts, ",") + "}"
		}
		// The original changelog, written as debezium messages.
		var src [][]byte
		for i, m := 0, rapid.IntRange(1, 8).Draw(t, "messages"); i < m; i++ {
			lbl := fmt.Sprintf("m%d", i)
			switch rapid.SampledFrom([]string{"c", "u", "d"}).Draw(t, lbl+".op") {
			case "c":
				src = append(src, []byte(`{"before":null,"after":`+row(lbl+".a")+`,"op":"c"}`))
			case "u":
				src = append(src, []byte(`{"before":`+row(lbl+".b")+`,"after":`+row(lbl+".a")+`,"op":"u"}`))
			case "d":
				src = append(src, []byte(`{"before":`+row(lbl+".b")+`,"after":null,"op":"d"}`))
			}
		}
		dbz, _ := Lookup("debezium-json")
		orig := printRows(t, batchesOf(t, dbz, s, Options{}, src, "src"))

		target := rapid.SampledFrom([]string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"}).Draw(t, "target")
		merge := rapid.Bool().Draw(t, "merge")
		tf, _ := Lookup(target)
		kv := map[string]string{
			target + ".encode.ignore-null-fields":      strconv.FormatBool(rapid.Bool().Draw(t, "ignoreNulls")),
			target + ".encode.decimal-as-plain-number": strconv.FormatBool(rapid.Bool().Draw(t, "plain")),
			target + ".timestamp-format.standard":      rapid.SampledFrom([]string{"SQL", "ISO-8601"}).Draw(t, "tsf"),
		}
		o, err := ParseOptions(tf, kv, true)
		if err != nil {
			t.Fatal(err)
		}
		enc, err := NewEncoder(tf, s, o, EncodeOptions{MergeUpdates: merge})
		if err != nil {
			t.Fatal(err)
		}
		var out []byte
		for _, rec := range batchesOf(t, dbz, s, Options{}, src, "enc") {
			if out, err = enc.AppendBatch(out, rec); err != nil {
				t.Fatal(err)
			}
		}
		out = enc.Finish(out)
		lines := bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
		back := printRows(t, batchesOf(t, tf, s, o, lines, "back"))

		want := orig
		if !merge {
			want = make([]string, len(orig))
			for i, r := range orig {
				switch r[:2] {
				case "-U":
					r = "-D" + r[2:]
				case "+U":
					r = "+I" + r[2:]
				}
				want[i] = r
			}
		}
		if strings.Join(back, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s merge=%v schema %s\nencoded:\n%s\ngot:\n%s\nwant:\n%s", target, merge, strings.Join(cols, ", "), out,
				strings.Join(back, "\n"), strings.Join(want, "\n"))
		}
	})
}
