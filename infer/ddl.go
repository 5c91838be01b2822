package infer

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// A table's schema is kept, and handed to the user, as a Flink CREATE
// TABLE: `convert --ddl` reads it back and decodes just that table, the way
// the inferred conversion did. Each column's evidence is its COMMENT, which
// is also how a reloaded column knows whether values may still widen it.

// UnchangedColumn is the column of the unchanged-columns metadata every
// inferred table has (empty lists where the producer sent every column).
const UnchangedColumn = "_unchanged"

// Lineage columns: where each row comes from (the input file and line)
// and its place in the producer's log, so that rows of many files order.
const (
	FileColumn     = "_file"
	LineColumn     = "_line"
	PositionColumn = "_source_pos"
)

// Extra are the columns cdcetl adds to every inferred table, after the
// table's own: the unchanged-columns list (producer semantics), then, with
// lineage, _file, _line and _source_pos.
func Extra(lineage bool) []arrowconv.Field {
	str := arrowconv.Of(arrowconv.String)
	out := []arrowconv.Field{{Name: UnchangedColumn, Type: arrowconv.Type{Kind: arrowconv.Array, Elem: &str}, MetadataKey: "unchanged-columns", Virtual: true}}
	if lineage {
		out = append(out,
			arrowconv.Field{Name: FileColumn, Type: str, MetadataKey: "file.path", Virtual: true},
			arrowconv.Field{Name: LineColumn, Type: arrowconv.Type{Kind: arrowconv.BigInt}, MetadataKey: "file.line", Virtual: true},
			arrowconv.Field{Name: PositionColumn, Type: str, MetadataKey: "source-position", Virtual: true})
	}
	return out
}

// DecodeSchema is the schema a table's rows are decoded with: its columns,
// then Extra, and its primary key.
func (t *Table) DecodeSchema() *arrowconv.Schema {
	s := t.Schema()
	s.Columns = append(s.Columns, Extra(!t.NoLineage)...)
	return s
}

// DDL renders the table as a CREATE TABLE: the columns with their
// evidence, the primary key, and WITH the format, producer semantics and
// the table ('cdcetl.namespace', 'cdcetl.table': `convert --ddl` takes this
// table's messages only), plus with.
func (t *Table) DDL(with map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s.%s (\n", quote(t.Namespace), quote(t.Name))
	s := t.DecodeSchema()
	for i, c := range s.Columns {
		one := &arrowconv.Schema{Columns: []arrowconv.Field{c}}
		b.WriteString("  " + one.ColumnList())
		if c.Comment != "" {
			b.WriteString(" COMMENT " + sqlString(c.Comment))
		}
		if i < len(s.Columns)-1 || len(s.PrimaryKey) > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	if len(s.PrimaryKey) > 0 {
		var q []string
		for _, k := range s.PrimaryKey {
			q = append(q, quote(k))
		}
		fmt.Fprintf(&b, "  PRIMARY KEY (%s) NOT ENFORCED\n", strings.Join(q, ", "))
	}
	opts := map[string]string{"format": t.Format, "cdcetl.semantics": "producer", "cdcetl.namespace": t.Namespace, "cdcetl.table": t.Name}
	if t.Version > 1 {
		opts["cdcetl.schema-version"] = strconv.Itoa(t.Version)
	}
	if t.SchemaInclude {
		opts[t.Format+".schema-include"] = "true"
	}
	for k, v := range with {
		opts[k] = v
	}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if (keys[i] == "format") != (keys[j] == "format") {
			return keys[i] == "format" // 'format' first, as Flink's docs write it
		}
		return keys[i] < keys[j]
	})
	b.WriteString(") WITH (\n")
	for i, k := range keys {
		fmt.Fprintf(&b, "  %s = %s", sqlString(k), sqlString(opts[k]))
		if i < len(keys)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(");\n")
	return b.String()
}

func quote(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// LoadTable reads a table back from its DDL (as DDL wrote it): the extra
// columns are dropped, evidence comments restored; columns whose comment
// says they came from values may go on widening.
func LoadTable(text string) (*Table, error) {
	s, err := arrowconv.ParseDDL(text)
	if err != nil {
		return nil, err
	}
	k := Key{s.Options["cdcetl.namespace"], s.Options["cdcetl.table"]}
	t := NewTable(k, s.Options["format"])
	if v, err := strconv.Atoi(s.Options["cdcetl.schema-version"]); err == nil && v > 1 {
		t.Version = v
	}
	t.PrimaryKey = s.PrimaryKey
	t.SchemaInclude = s.Options[t.Format+".schema-include"] == "true"
	for i, f := range s.Columns {
		if f.MetadataKey != "" {
			continue // Extra, added again on use
		}
		c := &Column{Name: f.Name, Type: f.Type, Evidence: f.Comment, first: Pos{File: -1, Line: i}}
		if strings.HasPrefix(f.Comment, "values:") {
			c.vals = valueOf(f.Type)
		} else {
			c.typed = true
		}
		t.Columns = append(t.Columns, c)
		t.byName[c.Name] = c
	}
	return t, nil
}

// valueOf is the value-lattice point of a type a column was given from its
// values.
func valueOf(t arrowconv.Type) valueType {
	switch t.Kind {
	case arrowconv.Boolean:
		return valueType{k: kBool}
	case arrowconv.Int:
		return valueType{k: kInt, bits: 32}
	case arrowconv.BigInt:
		return valueType{k: kInt, bits: 64}
	case arrowconv.Decimal:
		return valueType{k: kDecimal, scale: t.Scale, wide: t.Precision - t.Scale}
	case arrowconv.Double:
		return valueType{k: kDouble}
	case arrowconv.Date:
		return valueType{k: kDate}
	case arrowconv.Time:
		return valueType{k: kTime, scale: t.Precision}
	case arrowconv.Timestamp:
		return valueType{k: kTimestamp, scale: t.Precision}
	case arrowconv.TimestampLTZ:
		return valueType{k: kLTZ, scale: t.Precision}
	}
	return valueType{k: kString}
}
