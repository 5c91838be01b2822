package decode

import "testing"

func TestMySQLTypes(t *testing.T) {
	for text, want := range map[string]string{
		"tinyint(1)": "BOOLEAN", "bit(1)": "BOOLEAN", "bool": "BOOLEAN", "tinyint(4)": "TINYINT", "tinyint unsigned": "SMALLINT",
		"smallint": "SMALLINT", "smallint(5) unsigned": "INT", "mediumint": "INT", "int(11)": "INT", "INT UNSIGNED": "BIGINT",
		"bigint(20)": "BIGINT", "bigint(20) unsigned": "DECIMAL(20, 0)", "decimal(10,2)": "DECIMAL(10, 2)", "decimal": "DECIMAL(10, 0)",
		"DECIMAL(65,30)": "STRING", "float": "FLOAT", "double": "DOUBLE", "varchar(255)": "STRING", "longtext": "STRING",
		"enum('a','b')": "STRING", "json": "STRING", "varbinary(16)": "BYTES", "longblob": "BYTES", "bit(8)": "BYTES",
		"date": "DATE", "time(3)": "TIME(3)", "time": "TIME(0)", "datetime(6)": "TIMESTAMP(6)", "datetime": "TIMESTAMP(0)",
		"timestamp(3)": "TIMESTAMP_LTZ(3)", "year": "INT", "point": "BYTES", "geometry": "BYTES",
	} {
		got, ok := MySQLType(text)
		if !ok || got.String() != want {
			t.Errorf("MySQLType(%q) = %s, %v; want %s", text, got, ok, want)
		}
	}
}
