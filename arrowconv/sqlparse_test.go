package arrowconv

import (
	"errors"
	"strings"
	"testing"
)

func TestParseColumns(t *testing.T) {
	s, err := ParseColumns("id BIGINT NOT NULL, `na``me` VARCHAR(20), weight DECIMAL(10, 2), ts TIMESTAMP(3) WITH LOCAL TIME ZONE, " +
		"t TIME, d DEC, m MAP<STRING, ARRAY<INT>>, r ROW<a INT, `b c` ROW(x STRING)>, ms MULTISET<STRING>, " +
		"origin STRING METADATA FROM 'table' VIRTUAL, `database` STRING METADATA VIRTUAL, PRIMARY KEY (id) NOT ENFORCED")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range s.Columns {
		x := c.Name + " " + c.Type.String()
		if c.IsMetadata() {
			x += " <" + c.MetadataKey + ">"
		}
		got = append(got, x)
	}
	want := []string{
		"id BIGINT NOT NULL", "na`me VARCHAR(20)", "weight DECIMAL(10, 2)", "ts TIMESTAMP_LTZ(3)", "t TIME(0)",
		"d DECIMAL(10, 0)", "m MAP<STRING, ARRAY<INT>>", "r ROW<`a` INT, `b c` ROW<`x` STRING>>", "ms MULTISET<STRING>",
		"origin STRING <table>", "database STRING <database>",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(s.PrimaryKey) != 1 || s.PrimaryKey[0] != "id" {
		t.Errorf("primary key %v", s.PrimaryKey)
	}
	if !s.HasDecimal() {
		t.Error("HasDecimal false")
	}
}

func TestParseColumnsErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"id INTEGR", "Unsupported type: INTEGR (did you mean INTEGER?)"},
		{"id INT, s STRNG", "Unsupported type: STRNG (did you mean STRING?)"},
		{"m MAP<INT, STRING>", "JSON format doesn't support non-string as key type of map. The type is: MAP<INT, STRING>"},
		{"d DECIMAL(39, 2)", "precision must be between 1 and 38"},
		{"d DECIMAL(5, 6)", "scale must be between 0"},
		{"t TIMESTAMP(10)", "precision must be between 0 and 9"},
		{"t TIMESTAMP WITH TIME ZONE", "Unsupported type"},
		{"a INT, a STRING", "declared twice"},
		{"a INT, PRIMARY KEY (b) NOT ENFORCED", "does not exist"},
		{"a INT, PRIMARY KEY (a)", "NOT ENFORCED"},
		{"a AS b + 1", "computed columns"},
		{"a INT,", "expected a name"},
		{"`a INT", "unterminated"},
		{"", "no columns"},
	}
	for _, tt := range tests {
		_, err := ParseColumns(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseColumns(%q) = %v, want error containing %q", tt.in, err, tt.want)
		}
		if err != nil && !errors.Is(err, ErrSchema) {
			t.Errorf("ParseColumns(%q): %v is not ErrSchema", tt.in, err)
		}
	}
}

// TestDDLErrorPlace: an error in a DDL of several lines knows its line and
// column, and InFile says FILE:LINE:COL.
func TestDDLErrorPlace(t *testing.T) {
	_, err := ParseDDL("CREATE TABLE t (\n  id INT,\n  s STRNG\n) WITH ('format' = 'canal-json')")
	if got := InFile("t.sql", err); got == nil || !strings.HasPrefix(got.Error(), "t.sql:3:5: ") || !strings.Contains(got.Error(), "did you mean STRING") {
		t.Errorf("got %v, want t.sql:3:5: ... did you mean STRING", got)
	}
}

func TestParseDDL(t *testing.T) {
	s, err := ParseDDL(`-- a Flink table
CREATE TABLE IF NOT EXISTS cat.db.products (
  id BIGINT,
  name STRING COMMENT 'the name',
  origin_table STRING METADATA FROM 'table' VIRTUAL,
  PRIMARY KEY (id) NOT ENFORCED
) COMMENT 'products' WITH (
  'connector' = 'filesystem',
  'path' = '/data/in',
  'format' = 'canal-json',
  'canal-json.ignore-parse-errors' = 'true',
  'canal-json.table.include' = 'it''s'
);`)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "cat.db.products" || len(s.Columns) != 3 || s.PrimaryKey[0] != "id" {
		t.Errorf("parsed %+v", s)
	}
	if s.Options["format"] != "canal-json" || s.Options["canal-json.table.include"] != "it's" || s.Options["path"] != "/data/in" {
		t.Errorf("options %v", s.Options)
	}
	if _, err := ParseDDL("CREATE TABLE t (a INT) WITH ('k' 'v')"); err == nil {
		t.Error("missing = accepted")
	}
}

// TestColumnListRoundTrip: ColumnList reads back to the same schema.
func TestColumnListRoundTrip(t *testing.T) {
	for _, text := range []string{
		"id BIGINT, name STRING",
		"`a b` DECIMAL(10, 2) NOT NULL, `t` STRING METADATA FROM 'table' VIRTUAL, m MAP<STRING, ARRAY<TIMESTAMP_LTZ(3)>>, r ROW<`x` INT, `y``z` TIME(0)>, PRIMARY KEY (`a b`) NOT ENFORCED",
		"ts TIMESTAMP(9), l TIMESTAMP(3) WITH LOCAL TIME ZONE, c CHAR(3), b VARBINARY(7), ms MULTISET<STRING>",
	} {
		s, err := ParseColumns(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		back, err := ParseColumns(s.ColumnList())
		if err != nil {
			t.Fatalf("%s: ColumnList %q does not parse: %v", text, s.ColumnList(), err)
		}
		if back.ColumnList() != s.ColumnList() || len(back.Columns) != len(s.Columns) {
			t.Errorf("%s: round trip gave %q, want %q", text, back.ColumnList(), s.ColumnList())
		}
	}
}

// FuzzParseColumns: a column list never panics the parser, and one that
// parses renders (ColumnList) to text that parses back to the same schema.
func FuzzParseColumns(f *testing.F) {
	for _, s := range []string{
		"id BIGINT, name STRING",
		"`a b` DECIMAL(10, 2) NOT NULL, t STRING METADATA FROM 'table' VIRTUAL, PRIMARY KEY (`a b`) NOT ENFORCED",
		"m MAP<STRING, ARRAY<TIMESTAMP_LTZ(3)>>, r ROW<x INT, y ROW<z TIME(0)>>, ms MULTISET<STRING>",
		"ts TIMESTAMP(9) WITH LOCAL TIME ZONE, c CHAR(3), b VARBINARY(7), d DECIMAL",
		"x INT,", "", "`", "a ROW<", "PRIMARY KEY (a)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseColumns(text)
		if err != nil {
			return
		}
		back, err := ParseColumns(s.ColumnList())
		if err != nil {
			t.Fatalf("%q parses, but its ColumnList %q does not: %v", text, s.ColumnList(), err)
		}
		if back.ColumnList() != s.ColumnList() {
			t.Fatalf("%q: round trip %q != %q", text, back.ColumnList(), s.ColumnList())
		}
	})
}

// FuzzParseDDL: a CREATE TABLE statement never panics the parser.
func FuzzParseDDL(f *testing.F) {
	for _, s := range []string{
		"CREATE TABLE t (id BIGINT, name STRING) WITH ('format' = 'canal-json', 'canal-json.ignore-parse-errors' = 'true')",
		"CREATE TEMPORARY TABLE IF NOT EXISTS a.b.c (`x` INT METADATA FROM 'table' VIRTUAL, PRIMARY KEY (x) NOT ENFORCED) WITH ('k' = 'it''s')",
		"CREATE TABLE t (id INT) -- comment\nWITH ()", "CREATE", "CREATE TABLE t (", "ALTER TABLE t",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseDDL(text)
		if err != nil {
			return
		}
		if _, err := ParseColumns(s.ColumnList()); err != nil {
			t.Fatalf("%q parses, but its ColumnList %q does not: %v", text, s.ColumnList(), err)
		}
	})
}
