package arrowconv

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Kind is a Flink SQL logical type root.
type Kind uint8

const (
	Boolean Kind = iota + 1
	TinyInt
	SmallInt
	Int
	BigInt
	Float
	Double
	Decimal
	Char
	VarChar
	String
	Binary
	VarBinary
	Bytes
	Date
	Time
	Timestamp
	TimestampLTZ
	Array
	Map
	Multiset
	Row
)

// Type is a Flink SQL data type. Precision and Scale are used by DECIMAL
// (p, s), TIME/TIMESTAMP/TIMESTAMP_LTZ (p) and CHAR/VARCHAR/BINARY/VARBINARY
// (length, in Precision).
type Type struct {
	Kind      Kind
	Precision int
	Scale     int
	NotNull   bool
	Elem      *Type   // ARRAY and MULTISET element, MAP key
	Value     *Type   // MAP value
	Fields    []Field // ROW fields
}

// MaxLength is the length of Flink's STRING and BYTES: VARCHAR and
// VARBINARY at their longest.
const MaxLength = 1<<31 - 1

// Of is the type of kind k with the parameters given, in the order Flink
// writes them (DECIMAL(p, s), TIME(p), VARCHAR(n)). STRING and BYTES take
// MaxLength.
func Of(k Kind, params ...int) Type {
	t := Type{Kind: k}
	if k == String || k == Bytes {
		t.Precision = MaxLength
	}
	if len(params) > 0 {
		t.Precision = params[0]
	}
	if len(params) > 1 {
		t.Scale = params[1]
	}
	return t
}

// Field is a named column, or a field of a ROW type.
type Field struct {
	Name string
	Type Type
	// MetadataKey is the key of a METADATA column ("" for physical columns).
	MetadataKey string
	// Virtual is set for METADATA ... VIRTUAL columns.
	Virtual bool
	// Comment is the column's COMMENT text, if any.
	Comment string
}

// IsMetadata reports whether the column is read from message metadata.
func (f Field) IsMetadata() bool { return f.MetadataKey != "" }

// IsString reports whether t is CHAR, VARCHAR or STRING.
func (t Type) IsString() bool { return t.Kind == Char || t.Kind == VarChar || t.Kind == String }

// IsBinary reports whether t is BINARY, VARBINARY or BYTES.
func (t Type) IsBinary() bool { return t.Kind == Binary || t.Kind == VarBinary || t.Kind == Bytes }

// HasDecimal reports whether a DECIMAL appears anywhere inside t.
func (t Type) HasDecimal() bool {
	switch t.Kind {
	case Decimal:
		return true
	case Array, Multiset:
		return t.Elem.HasDecimal()
	case Map:
		return t.Elem.HasDecimal() || t.Value.HasDecimal()
	case Row:
		for _, f := range t.Fields {
			if f.Type.HasDecimal() {
				return true
			}
		}
	}
	return false
}

// String renders t in Flink SQL syntax, e.g. DECIMAL(10, 2) or ROW<`a` INT>.
func (t Type) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

func (t Type) write(b *strings.Builder) {
	switch t.Kind {
	case Boolean:
		b.WriteString("BOOLEAN")
	case TinyInt:
		b.WriteString("TINYINT")
	case SmallInt:
		b.WriteString("SMALLINT")
	case Int:
		b.WriteString("INT")
	case BigInt:
		b.WriteString("BIGINT")
	case Float:
		b.WriteString("FLOAT")
	case Double:
		b.WriteString("DOUBLE")
	case Decimal:
		fmt.Fprintf(b, "DECIMAL(%d, %d)", t.Precision, t.Scale)
	case Char:
		fmt.Fprintf(b, "CHAR(%d)", t.Precision)
	case VarChar:
		fmt.Fprintf(b, "VARCHAR(%d)", t.Precision)
	case String:
		b.WriteString("STRING")
	case Binary:
		fmt.Fprintf(b, "BINARY(%d)", t.Precision)
	case VarBinary:
		fmt.Fprintf(b, "VARBINARY(%d)", t.Precision)
	case Bytes:
		b.WriteString("BYTES")
	case Date:
		b.WriteString("DATE")
	case Time:
		fmt.Fprintf(b, "TIME(%d)", t.Precision)
	case Timestamp:
		fmt.Fprintf(b, "TIMESTAMP(%d)", t.Precision)
	case TimestampLTZ:
		fmt.Fprintf(b, "TIMESTAMP_LTZ(%d)", t.Precision)
	case Array:
		b.WriteString("ARRAY<")
		t.Elem.write(b)
		b.WriteString(">")
	case Multiset:
		b.WriteString("MULTISET<")
		t.Elem.write(b)
		b.WriteString(">")
	case Map:
		b.WriteString("MAP<")
		t.Elem.write(b)
		b.WriteString(", ")
		t.Value.write(b)
		b.WriteString(">")
	case Row:
		b.WriteString("ROW<")
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quoteIdent(f.Name))
			b.WriteByte(' ')
			f.Type.write(b)
		}
		b.WriteString(">")
	default:
		b.WriteString("UNKNOWN(" + strconv.Itoa(int(t.Kind)) + ")")
	}
	if t.NotNull {
		b.WriteString(" NOT NULL")
	}
}

func quoteIdent(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

// Field metadata keys written on every Arrow field cdcetl produces.
const (
	MetaSQLType     = "cdc.sql.type"     // the declared Flink type, e.g. TIMESTAMP(3)
	MetaMetadataKey = "cdc.metadata.key" // for METADATA columns: the format's key
)

// ArrowType maps t to the Arrow type cdcetl stores it as.
//
// TIMESTAMP and TIMESTAMP_LTZ are stored in microseconds up to precision
// 6 and in nanoseconds above ([TimestampUnit]), so that every year Flink
// accepts fits; the Parquet writer narrows to the declared precision. TIME
// is stored in milliseconds of the day up to precision 3, micro- and
// nanoseconds above ([TimeUnit]): Flink keeps whole seconds, producer
// semantics the fraction up to the precision.
func (t Type) ArrowType() arrow.DataType {
	switch t.Kind {
	case Boolean:
		return arrow.FixedWidthTypes.Boolean
	case TinyInt:
		return arrow.PrimitiveTypes.Int8
	case SmallInt:
		return arrow.PrimitiveTypes.Int16
	case Int:
		return arrow.PrimitiveTypes.Int32
	case BigInt:
		return arrow.PrimitiveTypes.Int64
	case Float:
		return arrow.PrimitiveTypes.Float32
	case Double:
		return arrow.PrimitiveTypes.Float64
	case Decimal:
		return &arrow.Decimal128Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}
	case Char, VarChar, String:
		return arrow.BinaryTypes.String
	case Binary, VarBinary, Bytes:
		return arrow.BinaryTypes.Binary
	case Date:
		return arrow.FixedWidthTypes.Date32
	case Time:
		switch TimeUnit(t.Precision) {
		case arrow.Millisecond:
			return arrow.FixedWidthTypes.Time32ms
		case arrow.Microsecond:
			return arrow.FixedWidthTypes.Time64us
		}
		return arrow.FixedWidthTypes.Time64ns
	case Timestamp:
		return &arrow.TimestampType{Unit: TimestampUnit(t.Precision)}
	case TimestampLTZ:
		return &arrow.TimestampType{Unit: TimestampUnit(t.Precision), TimeZone: "UTC"}
	case Array:
		return arrow.ListOfField(arrow.Field{Name: "element", Type: t.Elem.ArrowType(), Nullable: !t.Elem.NotNull})
	case Multiset:
		return arrow.MapOf(t.Elem.ArrowType(), arrow.PrimitiveTypes.Int32)
	case Map:
		return arrow.MapOf(t.Elem.ArrowType(), t.Value.ArrowType())
	case Row:
		fs := make([]arrow.Field, len(t.Fields))
		for i, f := range t.Fields {
			fs[i] = f.ArrowField()
		}
		return arrow.StructOf(fs...)
	}
	panic("arrowconv: no Arrow type for kind " + strconv.Itoa(int(t.Kind)))
}

// ArrowField is the Arrow field for f, with the declared SQL type (and the
// metadata key, for METADATA columns) in its field metadata.
func (f Field) ArrowField() arrow.Field {
	keys := []string{MetaSQLType}
	vals := []string{f.Type.String()}
	if f.MetadataKey != "" {
		keys = append(keys, MetaMetadataKey)
		vals = append(vals, f.MetadataKey)
	}
	return arrow.Field{
		Name:     f.Name,
		Type:     f.Type.ArrowType(),
		Nullable: true, // Flink's formats do not enforce NOT NULL (spec §2)
		Metadata: arrow.NewMetadata(keys, vals),
	}
}

// Schema is a declared table: its columns in order, the primary key, and
// the WITH options of a CREATE TABLE statement (nil for a column list).
type Schema struct {
	Name       string
	Columns    []Field
	PrimaryKey []string
	// PartitionedBy are the columns of a DDL's PARTITIONED BY (...).
	PartitionedBy []string
	Options       map[string]string
}

// Physical returns the non-metadata columns, in order.
func (s *Schema) Physical() []Field {
	var out []Field
	for _, c := range s.Columns {
		if !c.IsMetadata() {
			out = append(out, c)
		}
	}
	return out
}

// HasDecimal reports whether any physical column holds a DECIMAL.
func (s *Schema) HasDecimal() bool {
	for _, c := range s.Columns {
		if !c.IsMetadata() && c.Type.HasDecimal() {
			return true
		}
	}
	return false
}

// ArrowSchema is the output schema: _rowkind, then every declared column.
func (s *Schema) ArrowSchema() *arrow.Schema {
	fs := make([]arrow.Field, 0, len(s.Columns)+1)
	fs = append(fs, arrow.Field{Name: RowKindColumn, Type: RowKindType})
	for _, c := range s.Columns {
		fs = append(fs, c.ArrowField())
	}
	return arrow.NewSchema(fs, nil)
}

// RowKindType is the Arrow type of the _rowkind column: dictionary-encoded
// strings whose int8 index is the RowKind value.
var RowKindType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}

// ColumnList renders the schema as a Flink SQL column list that
// [ParseColumns] reads back to the same schema: columns with their types
// (and METADATA FROM clauses), then the PRIMARY KEY.
func (s *Schema) ColumnList() string {
	var b strings.Builder
	for i, c := range s.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(c.Name))
		b.WriteByte(' ')
		c.Type.write(&b)
		if c.MetadataKey != "" {
			b.WriteString(" METADATA FROM '")
			b.WriteString(strings.ReplaceAll(c.MetadataKey, "'", "''"))
			b.WriteString("'")
			if c.Virtual {
				b.WriteString(" VIRTUAL")
			}
		}
	}
	if len(s.PrimaryKey) > 0 {
		b.WriteString(", PRIMARY KEY (")
		for i, k := range s.PrimaryKey {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quoteIdent(k))
		}
		b.WriteString(") NOT ENFORCED")
	}
	return b.String()
}
