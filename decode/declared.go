package decode

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// The column types producers declare, as the Flink types inference takes
// for them: MySQL column types (Canal's and TiCDC's mysqlType, Maxwell's
// DDL "def") and Debezium's Connect schema. The units read them out of
// their messages (Format.Declared).

var (
	tBoolean = arrowconv.Of(arrowconv.Boolean)
	tTiny    = arrowconv.Of(arrowconv.TinyInt)
	tSmall   = arrowconv.Of(arrowconv.SmallInt)
	tInt     = arrowconv.Of(arrowconv.Int)
	tBig     = arrowconv.Of(arrowconv.BigInt)
	tFloat   = arrowconv.Of(arrowconv.Float)
	tDouble  = arrowconv.Of(arrowconv.Double)
	tString  = arrowconv.Of(arrowconv.String)
	tBytes   = arrowconv.Of(arrowconv.Bytes)
	tDate    = arrowconv.Of(arrowconv.Date)
)

func tDecimal(p, s int) arrowconv.Type { return arrowconv.Of(arrowconv.Decimal, p, s) }
func tTime(p int) arrowconv.Type       { return arrowconv.Of(arrowconv.Time, p) }
func tTimestamp(p int) arrowconv.Type  { return arrowconv.Of(arrowconv.Timestamp, p) }
func tLTZ(p int) arrowconv.Type        { return arrowconv.Of(arrowconv.TimestampLTZ, p) }

var mysqlTypeRe = regexp.MustCompile(`^\s*([a-z]+)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?\s*(.*)$`)

// MySQLType maps a MySQL column type as Canal and TiCDC write it in
// mysqlType ("int(11) unsigned", "decimal(10,2)", "tinyint(1)",
// "datetime(3)") to the Flink type that holds its values, or ok false.
func MySQLType(text string) (t arrowconv.Type, ok bool) {
	m := mysqlTypeRe.FindStringSubmatch(strings.ToLower(text))
	if m == nil {
		return t, false
	}
	name := m[1]
	n1, has1 := atoi(m[2])
	n2, _ := atoi(m[3])
	unsigned := strings.Contains(m[4], "unsigned")
	return mysqlTypeNamed(name, n1, has1, n2, unsigned)
}

func atoi(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// mysqlTypeNamed maps a MySQL type name with its length or precision (n1,
// has1), scale (n2) and signedness.
func mysqlTypeNamed(name string, n1 int, has1 bool, n2 int, unsigned bool) (arrowconv.Type, bool) {
	switch name {
	case "bool", "boolean":
		return tBoolean, true
	case "bit":
		if !has1 || n1 <= 1 {
			return tBoolean, true
		}
		return tBytes, true
	case "tinyint":
		switch {
		case has1 && n1 == 1:
			return tBoolean, true // MySQL's boolean
		case unsigned:
			return tSmall, true
		}
		return tTiny, true
	case "smallint":
		if unsigned {
			return tInt, true
		}
		return tSmall, true
	case "mediumint":
		return tInt, true // signed or not, INT holds it
	case "int", "integer":
		if unsigned {
			return tBig, true
		}
		return tInt, true
	case "bigint":
		if unsigned {
			return tDecimal(20, 0), true
		}
		return tBig, true
	case "decimal", "numeric", "dec", "fixed":
		p, s := 10, 0 // MySQL's defaults
		if has1 {
			p, s = n1, n2
		}
		if p > 38 {
			return tString, true // wider than any DECIMAL Parquet and Flink hold exactly
		}
		return tDecimal(p, s), true
	case "float":
		if has1 && n1 > 24 {
			return tDouble, true // FLOAT(25..53) is a double
		}
		return tFloat, true
	case "double", "real":
		return tDouble, true
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set", "json":
		return tString, true
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		return tBytes, true
	case "geometry", "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon", "geometrycollection", "geomcollection":
		return tBytes, true // WKB (producer semantics)
	case "date":
		return tDate, true
	case "time":
		return tTime(precisionOf(n1, has1)), true
	case "datetime":
		return tTimestamp(precisionOf(n1, has1)), true
	case "timestamp":
		return tLTZ(precisionOf(n1, has1)), true
	case "year":
		return tInt, true
	}
	return arrowconv.Type{}, false
}

func precisionOf(n int, has bool) int {
	if !has || n < 0 {
		return 0
	}
	return min(n, 9)
}

// ConnectType maps a Debezium (Kafka Connect) field schema to the Flink
// type producer semantics decodes it into: the logical type name first,
// then the Connect type. scale and precision are a Decimal's parameters
// ("" when absent).
func ConnectType(typ, name, scale, precision string) (arrowconv.Type, bool) {
	switch name {
	case "io.debezium.time.Date", "org.apache.kafka.connect.data.Date":
		return tDate, true
	case "io.debezium.time.Time", "org.apache.kafka.connect.data.Time":
		return tTime(3), true
	case "io.debezium.time.MicroTime":
		return tTime(6), true
	case "io.debezium.time.NanoTime":
		return tTime(9), true
	case "io.debezium.time.ZonedTime":
		return tTime(6), true
	case "io.debezium.time.Timestamp", "org.apache.kafka.connect.data.Timestamp":
		return tTimestamp(3), true
	case "io.debezium.time.MicroTimestamp":
		return tTimestamp(6), true
	case "io.debezium.time.NanoTimestamp":
		return tTimestamp(9), true
	case "io.debezium.time.ZonedTimestamp":
		return tLTZ(6), true
	case "io.debezium.time.Year":
		return tInt, true
	case "org.apache.kafka.connect.data.Decimal":
		s, _ := strconv.Atoi(scale)
		p, err := strconv.Atoi(precision)
		if err != nil || p <= 0 {
			p = 38
		}
		if p > 38 {
			return tString, true
		}
		return tDecimal(p, min(s, p)), true
	case "io.debezium.data.VariableScaleDecimal":
		return tDecimal(38, 10), true // the scale varies by value: ten places, rounded HALF_UP beyond
	case "io.debezium.data.Json", "io.debezium.data.Enum", "io.debezium.data.EnumSet", "io.debezium.data.Uuid", "io.debezium.data.Xml":
		return tString, true
	case "io.debezium.data.Bits":
		return tBytes, true
	}
	if strings.HasPrefix(name, "io.debezium.data.geometry.") {
		return tBytes, true
	}
	switch typ {
	case "boolean":
		return tBoolean, true
	case "int8":
		return tTiny, true
	case "int16":
		return tSmall, true
	case "int32":
		return tInt, true
	case "int64":
		return tBig, true
	case "float32", "float":
		return tFloat, true
	case "float64", "double":
		return tDouble, true
	case "string":
		return tString, true
	case "bytes":
		return tBytes, true
	}
	return arrowconv.Type{}, false
}

// MaxwellDefType maps a column of a Maxwell DDL record's "def" ("type",
// "signed", "precision", "scale", "column-length") to a Flink type.
func MaxwellDefType(typ string, signed bool, hasSigned bool, precision, scale, length int) (arrowconv.Type, bool) {
	unsigned := hasSigned && !signed
	switch strings.ToLower(typ) {
	case "decimal", "numeric":
		return mysqlTypeNamed("decimal", precision, precision > 0, scale, unsigned)
	case "time", "datetime", "timestamp":
		return mysqlTypeNamed(strings.ToLower(typ), length, length > 0, 0, unsigned)
	case "bit":
		return mysqlTypeNamed("bit", length, length > 0, 0, unsigned)
	}
	return mysqlTypeNamed(strings.ToLower(typ), 0, false, 0, unsigned)
}
