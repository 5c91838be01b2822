package arrowconv

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cdcetl/cdcetl/internal/nearest"
)

// ErrSchema is returned (wrapped in a *SchemaError) for a column list or
// CREATE TABLE statement that cannot be used.
var ErrSchema = errors.New("invalid schema")

// SchemaError reports where a schema text went wrong.
type SchemaError struct {
	Offset int    // byte offset in the text, from 0
	Column string // the column concerned, when known
	Msg    string
	// Line and Col (from 1) are where Offset is in the text, set by the
	// parse functions for a text of several lines (a DDL file): whoever
	// names the file says FILE:LINE:COL.
	Line, Col int
}

func (e *SchemaError) Error() string {
	if e.Column != "" {
		return fmt.Sprintf("schema: column %s: %s", e.Column, e.Msg)
	}
	if e.Line > 0 {
		return "schema: " + e.Msg
	}
	return fmt.Sprintf("schema: at offset %d: %s", e.Offset, e.Msg)
}

// InFile prefixes err with the file it is about: FILE:LINE:COL when the
// parse knows where (editors jump there), else FILE.
func InFile(path string, err error) error {
	var se *SchemaError
	if errors.As(err, &se) && se.Line > 0 {
		return fmt.Errorf("%s:%d:%d: %w", path, se.Line, se.Col, err)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// locate sets e's line and column in text, when text has several lines.
func locate(err error, text string) error {
	var se *SchemaError
	if !errors.As(err, &se) || !strings.Contains(text, "\n") || se.Offset <= 0 || se.Offset > len(text) {
		return err
	}
	before := text[:se.Offset]
	se.Line = strings.Count(before, "\n") + 1
	se.Col = utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:]) + 1
	return err
}

func (e *SchemaError) Unwrap() error { return ErrSchema }

// ParseColumns parses a Flink SQL column list such as
// "id BIGINT, name STRING, `table` STRING METADATA FROM 'table' VIRTUAL,
// PRIMARY KEY (id) NOT ENFORCED".
func ParseColumns(text string) (*Schema, error) {
	s, err := parseColumns(text)
	return s, locate(err, text)
}

func parseColumns(text string) (*Schema, error) {
	p := &parser{toks: nil, src: text}
	if err := p.lex(); err != nil {
		return nil, err
	}
	s := &Schema{}
	if err := p.columns(s, true); err != nil {
		return nil, err
	}
	if !p.at(tEOF) {
		return nil, p.errf("unexpected %q after the column list", p.peek().text)
	}
	return s, s.check()
}

// ParseDDL parses a whole Flink CREATE TABLE statement: its columns, its
// primary key and its WITH options (kept verbatim in Schema.Options).
func ParseDDL(text string) (*Schema, error) {
	s, err := parseDDL(text)
	return s, locate(err, text)
}

func parseDDL(text string) (*Schema, error) {
	p := &parser{src: text}
	if err := p.lex(); err != nil {
		return nil, err
	}
	if !p.keyword("CREATE") {
		return nil, p.errf("expected CREATE TABLE")
	}
	p.keyword("TEMPORARY")
	if !p.keyword("TABLE") {
		return nil, p.errf("expected TABLE after CREATE")
	}
	if p.keyword("IF") {
		if !p.keyword("NOT") || !p.keyword("EXISTS") {
			return nil, p.errf("expected IF NOT EXISTS")
		}
	}
	s := &Schema{Options: map[string]string{}}
	name, err := p.ident()
	if err != nil {
		return nil, err
	}
	for p.punct(".") {
		part, err := p.ident()
		if err != nil {
			return nil, err
		}
		name += "." + part
	}
	s.Name = name
	if !p.punct("(") {
		return nil, p.errf("expected ( after the table name")
	}
	if err := p.columns(s, false); err != nil {
		return nil, err
	}
	if !p.punct(")") {
		return nil, p.errf("expected ) after the columns, found %q", p.peek().text)
	}
	for !p.at(tEOF) && !p.punct(";") {
		switch {
		case p.keyword("COMMENT"):
			if _, err := p.str(); err != nil {
				return nil, err
			}
		case p.keyword("PARTITIONED"):
			if !p.keyword("BY") || !p.punct("(") {
				return nil, p.errf("expected PARTITIONED BY (...)")
			}
			cols, err := p.identList()
			if err != nil {
				return nil, err
			}
			s.PartitionedBy = cols
		case p.keyword("WITH"):
			if !p.punct("(") {
				return nil, p.errf("expected ( after WITH")
			}
			for !p.punct(")") {
				k, err := p.str()
				if err != nil {
					return nil, err
				}
				if !p.punct("=") {
					return nil, p.errf("expected = after option %q", k)
				}
				v, err := p.str()
				if err != nil {
					return nil, err
				}
				s.Options[k] = v
				if !p.punct(",") && !p.at(tPunct, ")") {
					return nil, p.errf("expected , or ) in WITH options")
				}
			}
		default:
			return nil, p.errf("unexpected %q after the column list", p.peek().text)
		}
	}
	return s, s.check()
}

// ParseType parses one Flink SQL type, e.g. "MAP<STRING, ARRAY<INT>>".
func ParseType(text string) (Type, error) {
	p := &parser{src: text}
	if err := p.lex(); err != nil {
		return Type{}, err
	}
	t, err := p.typ()
	if err != nil {
		return Type{}, err
	}
	if !p.at(tEOF) {
		return Type{}, p.errf("unexpected %q after the type", p.peek().text)
	}
	return t, nil
}

func (s *Schema) check() error {
	seen := map[string]bool{}
	for _, c := range s.Columns {
		if seen[c.Name] {
			return &SchemaError{Column: c.Name, Msg: "declared twice"}
		}
		seen[c.Name] = true
	}
	for _, k := range s.PrimaryKey {
		if !seen[k] {
			return &SchemaError{Column: k, Msg: "PRIMARY KEY names a column that does not exist"}
		}
	}
	if len(s.Columns) == 0 {
		return &SchemaError{Msg: "no columns"}
	}
	return nil
}

type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tQuoted // back-quoted identifier
	tString
	tNumber
	tPunct
)

type token struct {
	kind tokKind
	text string
	off  int
}

type parser struct {
	src  string
	toks []token
	i    int
}

func (p *parser) lex() error {
	s := p.src
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '`':
			j := i + 1
			var b strings.Builder
			for {
				if j >= len(s) {
					return &SchemaError{Offset: i, Msg: "unterminated back-quoted name"}
				}
				if s[j] == '`' {
					if j+1 < len(s) && s[j+1] == '`' {
						b.WriteByte('`')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(s[j])
				j++
			}
			p.toks = append(p.toks, token{tQuoted, b.String(), i})
			i = j + 1
		case c == '\'':
			j := i + 1
			var b strings.Builder
			for {
				if j >= len(s) {
					return &SchemaError{Offset: i, Msg: "unterminated string literal"}
				}
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(s[j])
				j++
			}
			p.toks = append(p.toks, token{tString, b.String(), i})
			i = j + 1
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			p.toks = append(p.toks, token{tNumber, s[i:j], i})
			i = j
		case c == '_' || c >= 0x80 || unicode.IsLetter(rune(c)):
			j := i
			for j < len(s) && (s[j] == '_' || s[j] == '$' || s[j] >= 0x80 || unicode.IsLetter(rune(s[j])) || (s[j] >= '0' && s[j] <= '9')) {
				j++
			}
			p.toks = append(p.toks, token{tIdent, s[i:j], i})
			i = j
		case strings.IndexByte("(),<>=;.+-*/%", c) >= 0:
			p.toks = append(p.toks, token{tPunct, string(c), i})
			i++
		default:
			return &SchemaError{Offset: i, Msg: fmt.Sprintf("unexpected character %q", c)}
		}
	}
	p.toks = append(p.toks, token{tEOF, "end of input", len(s)})
	return nil
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) at(k tokKind, text ...string) bool {
	t := p.toks[p.i]
	if t.kind != k {
		return false
	}
	return len(text) == 0 || t.text == text[0]
}

func (p *parser) errf(format string, args ...any) error {
	return &SchemaError{Offset: p.peek().off, Msg: fmt.Sprintf(format, args...)}
}

// keyword consumes an unquoted identifier equal to kw ignoring case.
func (p *parser) keyword(kw string) bool {
	t := p.toks[p.i]
	if t.kind == tIdent && strings.EqualFold(t.text, kw) {
		p.i++
		return true
	}
	return false
}

func (p *parser) punct(c string) bool {
	if p.at(tPunct, c) {
		p.i++
		return true
	}
	return false
}

func (p *parser) ident() (string, error) {
	t := p.toks[p.i]
	if t.kind == tIdent || t.kind == tQuoted {
		p.i++
		return t.text, nil
	}
	return "", p.errf("expected a name, found %q", t.text)
}

func (p *parser) str() (string, error) {
	t := p.toks[p.i]
	if t.kind != tString {
		return "", p.errf("expected a string literal, found %q", t.text)
	}
	p.i++
	return t.text, nil
}

func (p *parser) num() (int, error) {
	t := p.toks[p.i]
	if t.kind != tNumber {
		return 0, p.errf("expected a number, found %q", t.text)
	}
	p.i++
	n, err := strconv.Atoi(t.text)
	if err != nil {
		return 0, p.errf("number %s out of range", t.text)
	}
	return n, nil
}

// identList reads "a, b, c)" (the opening parenthesis already consumed).
func (p *parser) identList() ([]string, error) {
	var out []string
	for {
		n, err := p.ident()
		if err != nil {
			return nil, err
		}
		out = append(out, n)
		if p.punct(")") {
			return out, nil
		}
		if !p.punct(",") {
			return nil, p.errf("expected , or )")
		}
	}
}

// columns reads column definitions and constraints up to a closing
// parenthesis (DDL) or the end of input (column list).
func (p *parser) columns(s *Schema, bare bool) error {
	for first := true; ; first = false {
		if first && (bare && p.at(tEOF) || !bare && p.at(tPunct, ")")) {
			return nil
		}
		if err := p.column(s); err != nil {
			return err
		}
		if !p.punct(",") {
			return nil
		}
	}
}

func (p *parser) column(s *Schema) error {
	if p.keyword("CONSTRAINT") {
		if _, err := p.ident(); err != nil {
			return err
		}
	}
	if p.at(tIdent) && strings.EqualFold(p.peek().text, "PRIMARY") {
		p.i++
		if !p.keyword("KEY") || !p.punct("(") {
			return p.errf("expected PRIMARY KEY (...)")
		}
		cols, err := p.identList()
		if err != nil {
			return err
		}
		if len(s.PrimaryKey) > 0 {
			return p.errf("more than one PRIMARY KEY")
		}
		s.PrimaryKey = cols
		if p.keyword("NOT") {
			if !p.keyword("ENFORCED") {
				return p.errf("expected NOT ENFORCED")
			}
		} else {
			return p.errf("Flink supports only PRIMARY KEY ... NOT ENFORCED")
		}
		return nil
	}
	if p.at(tIdent) && strings.EqualFold(p.peek().text, "WATERMARK") {
		return p.errf("WATERMARK clauses are not supported")
	}
	name, err := p.ident()
	if err != nil {
		return err
	}
	if p.at(tIdent) && strings.EqualFold(p.peek().text, "AS") {
		return &SchemaError{Column: name, Msg: "computed columns are not supported"}
	}
	t, err := p.typ()
	if err != nil {
		if se, ok := err.(*SchemaError); ok && se.Column == "" {
			se.Column = name
		}
		return err
	}
	f := Field{Name: name, Type: t}
	for {
		switch {
		case p.keyword("METADATA"):
			f.MetadataKey = name
			if p.keyword("FROM") {
				k, err := p.str()
				if err != nil {
					return err
				}
				f.MetadataKey = k
			}
			if p.keyword("VIRTUAL") {
				f.Virtual = true
			}
			continue
		case p.keyword("COMMENT"):
			c, err := p.str()
			if err != nil {
				return err
			}
			f.Comment = c
			continue
		case p.at(tIdent) && strings.EqualFold(p.peek().text, "PRIMARY"):
			p.i++
			if !p.keyword("KEY") || !p.keyword("NOT") || !p.keyword("ENFORCED") {
				return p.errf("expected PRIMARY KEY NOT ENFORCED")
			}
			s.PrimaryKey = append(s.PrimaryKey, name)
			continue
		}
		break
	}
	s.Columns = append(s.Columns, f)
	return nil
}

// typ reads a data type with an optional NOT NULL / NULL suffix.
func (p *parser) typ() (Type, error) {
	t, err := p.baseType()
	if err != nil {
		return t, err
	}
	if p.keyword("NOT") {
		if !p.keyword("NULL") {
			return t, p.errf("expected NULL after NOT")
		}
		t.NotNull = true
	} else {
		p.keyword("NULL")
	}
	return t, nil
}

func (p *parser) optLen(def int) (int, error) {
	if !p.punct("(") {
		return def, nil
	}
	n, err := p.num()
	if err != nil {
		return 0, err
	}
	if !p.punct(")") {
		return 0, p.errf("expected )")
	}
	return n, nil
}

func (p *parser) baseType() (Type, error) {
	tok := p.peek()
	if tok.kind != tIdent {
		return Type{}, p.errf("expected a type, found %q", tok.text)
	}
	p.i++
	kw := strings.ToUpper(tok.text)
	switch kw {
	case "BOOLEAN", "BOOL":
		return Type{Kind: Boolean}, nil
	case "TINYINT":
		return Type{Kind: TinyInt}, nil
	case "SMALLINT":
		return Type{Kind: SmallInt}, nil
	case "INT", "INTEGER":
		return Type{Kind: Int}, nil
	case "BIGINT":
		return Type{Kind: BigInt}, nil
	case "FLOAT", "REAL":
		return Type{Kind: Float}, nil
	case "DOUBLE":
		p.keyword("PRECISION")
		return Type{Kind: Double}, nil
	case "DECIMAL", "DEC", "NUMERIC":
		t := Type{Kind: Decimal, Precision: 10}
		if p.punct("(") {
			n, err := p.num()
			if err != nil {
				return t, err
			}
			t.Precision = n
			if p.punct(",") {
				if t.Scale, err = p.num(); err != nil {
					return t, err
				}
			}
			if !p.punct(")") {
				return t, p.errf("expected ) after DECIMAL precision")
			}
		}
		if t.Precision < 1 || t.Precision > 38 {
			return t, &SchemaError{Offset: tok.off, Msg: fmt.Sprintf("Decimal precision must be between 1 and 38 (both inclusive), got %d", t.Precision)}
		}
		if t.Scale < 0 || t.Scale > t.Precision {
			return t, &SchemaError{Offset: tok.off, Msg: fmt.Sprintf("Decimal scale must be between 0 and the precision %d (both inclusive), got %d", t.Precision, t.Scale)}
		}
		return t, nil
	case "CHAR", "CHARACTER":
		if p.keyword("VARYING") {
			n, err := p.optLen(1)
			return Type{Kind: VarChar, Precision: n}, err
		}
		n, err := p.optLen(1)
		return Type{Kind: Char, Precision: n}, err
	case "VARCHAR":
		n, err := p.optLen(1)
		return Type{Kind: VarChar, Precision: n}, err
	case "STRING":
		return Of(String), nil
	case "BINARY":
		n, err := p.optLen(1)
		return Type{Kind: Binary, Precision: n}, err
	case "VARBINARY":
		n, err := p.optLen(1)
		return Type{Kind: VarBinary, Precision: n}, err
	case "BYTES":
		return Of(Bytes), nil
	case "DATE":
		return Type{Kind: Date}, nil
	case "TIME":
		n, err := p.optLen(0)
		if err != nil {
			return Type{}, err
		}
		if p.keyword("WITHOUT") {
			if !p.keyword("TIME") || !p.keyword("ZONE") {
				return Type{}, p.errf("expected WITHOUT TIME ZONE")
			}
		}
		if n < 0 || n > 9 {
			return Type{}, &SchemaError{Offset: tok.off, Msg: fmt.Sprintf("Time precision must be between 0 and 9 (both inclusive), got %d", n)}
		}
		return Type{Kind: Time, Precision: n}, nil
	case "TIMESTAMP", "TIMESTAMP_LTZ":
		n, err := p.optLen(6)
		if err != nil {
			return Type{}, err
		}
		if n < 0 || n > 9 {
			return Type{}, &SchemaError{Offset: tok.off, Msg: fmt.Sprintf("Timestamp precision must be between 0 and 9 (both inclusive), got %d", n)}
		}
		if kw == "TIMESTAMP_LTZ" {
			return Type{Kind: TimestampLTZ, Precision: n}, nil
		}
		switch {
		case p.keyword("WITHOUT"):
			if !p.keyword("TIME") || !p.keyword("ZONE") {
				return Type{}, p.errf("expected WITHOUT TIME ZONE")
			}
		case p.keyword("WITH"):
			if p.keyword("LOCAL") {
				if !p.keyword("TIME") || !p.keyword("ZONE") {
					return Type{}, p.errf("expected WITH LOCAL TIME ZONE")
				}
				return Type{Kind: TimestampLTZ, Precision: n}, nil
			}
			return Type{}, &SchemaError{Offset: tok.off, Msg: "Unsupported type: TIMESTAMP WITH TIME ZONE"}
		}
		return Type{Kind: Timestamp, Precision: n}, nil
	case "ARRAY", "MULTISET":
		if !p.punct("<") {
			return Type{}, p.errf("expected < after %s", kw)
		}
		e, err := p.typ()
		if err != nil {
			return Type{}, err
		}
		if !p.punct(">") {
			return Type{}, p.errf("expected > to close %s", kw)
		}
		if kw == "ARRAY" {
			return Type{Kind: Array, Elem: &e}, nil
		}
		t := Type{Kind: Multiset, Elem: &e}
		if !e.IsString() {
			return t, &SchemaError{Offset: tok.off, Msg: fmt.Sprintf("JSON format doesn't support non-string as key type of map. The type is: %s", t)}
		}
		return t, nil
	case "MAP":
		if !p.punct("<") {
			return Type{}, p.errf("expected < after MAP")
		}
		k, err := p.typ()
		if err != nil {
			return Type{}, err
		}
		if !p.punct(",") {
			return Type{}, p.errf("expected , between MAP key and value types")
		}
		v, err := p.typ()
		if err != nil {
			return Type{}, err
		}
		if !p.punct(">") {
			return Type{}, p.errf("expected > to close MAP")
		}
		t := Type{Kind: Map, Elem: &k, Value: &v}
		if !k.IsString() {
			return t, &SchemaError{Offset: tok.off, Msg: fmt.Sprintf("JSON format doesn't support non-string as key type of map. The type is: %s", t)}
		}
		return t, nil
	case "ROW":
		closer := ">"
		if p.punct("(") {
			closer = ")"
		} else if !p.punct("<") {
			return Type{}, p.errf("expected < or ( after ROW")
		}
		t := Type{Kind: Row}
		seen := map[string]bool{}
		for !p.punct(closer) {
			name, err := p.ident()
			if err != nil {
				return t, err
			}
			ft, err := p.typ()
			if err != nil {
				return t, err
			}
			if p.keyword("COMMENT") {
				if _, err := p.str(); err != nil {
					return t, err
				}
			}
			if seen[name] {
				return t, p.errf("ROW field %s declared twice", name)
			}
			seen[name] = true
			t.Fields = append(t.Fields, Field{Name: name, Type: ft})
			if !p.punct(",") && !p.at(tPunct, closer) {
				return t, p.errf("expected , or %s in ROW", closer)
			}
		}
		if len(t.Fields) == 0 {
			return t, p.errf("ROW needs at least one field")
		}
		return t, nil
	}
	msg := "Unsupported type: " + tok.text
	if near := nearest.Closest(tok.text, typeNames); near != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", near)
	}
	return Type{}, &SchemaError{Offset: tok.off, Msg: msg}
}

// typeNames are the type keywords, for "did you mean".
var typeNames = []string{"BOOLEAN", "TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL", "NUMERIC",
	"CHAR", "VARCHAR", "STRING", "BINARY", "VARBINARY", "BYTES", "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ", "ARRAY", "MULTISET", "MAP", "ROW"}
