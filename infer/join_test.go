package infer

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/internal/cdcgen"
)

// joinInputs are inputs of every format: the project's test files and
// generated messages of several tables, plus key-only deletes.
func joinInputs(t testing.TB) map[string][][]byte {
	t.Helper()
	in := map[string][][]byte{}
	files, _ := filepath.Glob("../testdata/*-json/*.jsonl")
	more, _ := filepath.Glob("../testdata/samples/*/*.json*")
	archives, _ := filepath.Glob("../testdata/archives/*/*.jsonl") // real producers' output
	more = append(more, archives...)
	for _, p := range append(files, more...) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(p, ".gz") { // the sample archives, as Kafka Connect writes them
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if data, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		var lines [][]byte
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			lines = append(lines, append([]byte(nil), sc.Bytes()...))
		}
		in[p] = lines
	}
	for _, f := range cdcgen.Formats {
		for _, shape := range []string{"products", "envelope", "wide"} {
			g, err := cdcgen.NewShape(f, shape, 7)
			if err != nil {
				t.Fatal(err)
			}
			if p, ok := g.(*cdcgen.Generator); ok {
				p.Tables, p.Run = 3, 40
			}
			var lines [][]byte
			for range 300 {
				lines = append(lines, g.Next(nil))
			}
			in[f+"/"+shape] = lines
		}
	}
	in["debezium-json/key-only"] = [][]byte{
		[]byte(`{"op":"d","source":{"db":"d","table":"t","ts_ms":5},"before":{"id":1,"a":null,"b":2}}`),
		[]byte(`{"op":"c","source":{"db":"d","table":"t","ts_ms":6},"after":{"id":2,"a":"x","b":3}}`),
		[]byte(`{"op":"d","source":{"db":"d","table":"t","ts_ms":7},"before":{"id":1,"a":null,"b":null}}`),
		[]byte(`{"op":"d","source":{"db":"d","table":"t","ts_ms":8},"before":{"id":null,"a":3,"b":null}}`),
		[]byte(`{"op":"d","source":{"db":"d","table":"t","ts_ms":9},"before":{"id":4,"a":null,"b":null}}`),
		[]byte(`{"op":"d","source":{"db":"d","table":"u","ts_ms":9},"before":{"id":4,"a":5,"b":6}}`),
	}
	// Maxwell: a DDL record's types, then values of typed and untyped
	// columns, columns that come later, a type that changes.
	in["maxwell-json/evolving"] = [][]byte{
		[]byte(`{"database":"d","table":"t","type":"insert","ts":1,"data":{"id":1,"a":1}}`),
		[]byte(`{"database":"d","table":"t","type":"insert","ts":2,"data":{"id":2,"a":2,"b":1}}`),
		[]byte(`{"database":"d","table":"t","type":"table-alter","ts":3,"def":{"columns":[{"type":"bigint","name":"id","signed":true},{"type":"varchar","name":"a"}],"primary-key":["id"]}}`),
		[]byte(`{"database":"d","table":"t","type":"insert","ts":4,"data":{"id":3,"a":"y","b":2.5,"c":true}}`),
		[]byte(`{"database":"d","table":"u","type":"insert","ts":4,"data":{"z":3}}`),
		[]byte(`{"database":"d","table":"t","type":"update","ts":5,"data":{"id":3,"a":"y","b":3,"d":"10:00:00","e":null},"old":{"a":"x"}}`),
		[]byte(`{"database":"d","table":"t","type":"table-alter","ts":6,"def":{"columns":[{"type":"int","name":"b","signed":true},{"type":"int","name":"id","signed":true}],"primary-key":["id","b"]}}`),
		[]byte(`{"database":"d","table":"t","type":"insert","ts":7,"data":{"id":4,"b":7,"f":"s","c":false}}`),
		[]byte(`{"database":"d","table":"u","type":"delete","ts":8,"data":{"z":4,"y":5}}`),
	}
	return in
}

// observe reads lines[from:to] (line numbers from 1) into new evidence.
func observe(format string, si bool, lines [][]byte, from, to int) *FileEvidence {
	fe := NewFileEvidence(format, 3, Options{SchemaInclude: si})
	for i := from; i < to; i++ {
		fe.Observe(lines[i], i+1)
	}
	return fe
}

// forget clears what only speeds reading up (the last type object and
// table, scratch).
func forget(fe *FileEvidence) *FileEvidence {
	fe.last, fe.lastNS, fe.lastName, fe.members, fe.obs = nil, nil, nil, nil, decode.Observation{}
	for _, e := range fe.tables {
		e.lastTypes, e.lastKey = nil, nil
		if len(e.lastPos) == 0 {
			e.lastPos = nil // reused: empty or nil alike
		}
	}
	return fe
}

// TestJoin: an input read in parts, each observed on its own and joined in
// order, has the evidence of the input read whole, for every format and
// wherever it is cut.
func TestJoin(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for name, lines := range joinInputs(t) {
		if len(lines) == 0 {
			continue
		}
		dir := strings.Split(strings.TrimPrefix(strings.TrimPrefix(name, "../testdata/"), "samples/"), "/")[0]
		format, _ := decode.Lookup(strings.TrimSuffix(dir, "-json") + "-json")
		detected, si, _, _ := decode.Detect(lines[:min(64, len(lines))], 1)
		if dir == "archives" {
			format = detected
		}
		if format == nil || format.Name == "json" {
			continue // plain JSON: no evidence to take
		}
		whole := forget(observe(format.Name, si, lines, 0, len(lines)))
		cuts := [][]int{}
		for c := 0; c <= len(lines) && c < 40; c++ {
			cuts = append(cuts, []int{c})
		}
		for range 30 {
			var cs []int
			for range 1 + r.IntN(6) {
				cs = append(cs, r.IntN(len(lines)+1))
			}
			cuts = append(cuts, cs)
		}
		for _, cs := range cuts {
			cs = append([]int{0}, cs...)
			cs = append(cs, len(lines))
			sortInts(cs)
			got := observe(format.Name, si, lines, cs[0], cs[1])
			for i := 1; i+1 < len(cs); i++ {
				got.Join(observe(format.Name, si, lines, cs[i], cs[i+1]))
			}
			if forget(got); !reflect.DeepEqual(got, whole) {
				t.Fatalf("%s cut at %v: joined evidence differs from the whole input's\n got %s\nwant %s", name, cs[1:len(cs)-1], dump(got), dump(whole))
			}
		}
	}
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func dump(fe *FileEvidence) string {
	var b strings.Builder
	for _, k := range fe.order {
		e := fe.tables[k]
		b.WriteString(k.String() + ": ")
		for _, c := range e.cols {
			b.WriteString(c.name + "=" + c.vals.describe() + " ")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestJoinValuesAssociative: the value types join the same whichever
// pairs are joined first (what Join relies on).
func TestJoinValuesAssociative(t *testing.T) {
	vals := []string{"null", "true", "1", "70000", "5000000000", "99999999999999999999999", "2.5", "1.125", "1e3", `"x"`,
		`"2020-01-01"`, `"2020-01-01 10:00:00.123"`, `"2020-01-01T10:00:00Z"`, `"10:00:00"`, `{"$numberLong":"5"}`, `{"$date":1}`}
	types := make([]valueType, len(vals))
	for i, v := range vals {
		fe := NewFileEvidence("maxwell-json", 0, Options{})
		fe.Observe([]byte(`{"database":"d","table":"t","type":"insert","data":{"c":`+v+`}}`), 1)
		types[i] = fe.tables[Key{"d", "t"}].cols["c"].vals
	}
	for _, a := range types {
		for _, b := range types {
			for _, c := range types {
				l, r := a, b
				l.join(b)
				l.join(c)
				r.join(c)
				x := a
				x.join(r)
				if l != x {
					t.Fatalf("(%s ∨ %s) ∨ %s = %s, %s ∨ (%s ∨ %s) = %s", a.describe(), b.describe(), c.describe(), l.describe(), a.describe(), b.describe(), c.describe(), x.describe())
				}
			}
		}
	}
}

// FuzzObserve: the evidence the fast walk takes is the evidence
// jsonparser alone takes, for any message of any format (the fuzz twin).
func FuzzObserve(f *testing.F) {
	for name, lines := range joinInputs(f) {
		for i, l := range lines {
			if i < 8 || strings.Contains(name, "evolving") || strings.Contains(name, "key-only") {
				f.Add(uint8(i), l)
			}
		}
	}
	f.Add(uint8(0), []byte(`{"database":"d","table":"t","type":"insert","data":{"a":1}} {"type":"delete"}`))
	f.Add(uint8(3), []byte(`{"source":{"file":"f","pos":null,"pos":3,"row":"x\"y"},"op":"c","after":{"a\u0041":1,"a":[1,{"b":2}]}}`))
	f.Add(uint8(1), []byte(`{"type":"insert""data":{"":0A0.""}`))
	formats := []string{"canal-json", "maxwell-json", "ogg-json", "debezium-json"}
	f.Fuzz(func(t *testing.T, which uint8, msg []byte) {
		format, si := formats[int(which)%4], which&4 != 0
		observeBoth := func(slow bool) *FileEvidence {
			slowScan = slow
			defer func() { slowScan = false }()
			fe := NewFileEvidence(format, 0, Options{SchemaInclude: si})
			fe.Observe(msg, 1)
			fe.Observe(msg, 2) // the table met again: the cached one
			return forget(fe)
		}
		fast, slow := observeBoth(false), observeBoth(true)
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%s %q: fast walk's evidence differs from jsonparser's\nfast %s\nslow %s", format, msg, dump(fast), dump(slow))
		}
	})
}
