// Package infer proposes a schema for each source table of a CDC archive
// from the best evidence its messages carry (Canal's and TiCDC's
// mysqlType, Debezium's Connect schema, Maxwell's DDL records, otherwise
// the JSON values), and follows it as the archive drifts: columns are
// added, types widen, and an incompatible change starts a new schema
// version. It knows the formats' envelopes only as far as inference needs
// them; decoding stays with package decode.
package infer

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// Key names a source table: its namespace (database, or schema) and name.
type Key struct {
	Namespace, Name string
}

func (k Key) String() string { return k.Namespace + "." + k.Name }

// Unnamed is the table of the messages that name no table (Canal without
// "database" and "table", Debezium events whose source names none): their
// rows get a table of their own rather than rows of no columns. When only
// heartbeats and transaction markers reach it, it has no columns and no
// rows, and is neither listed nor written.
var Unnamed = Key{Namespace: "default", Name: "unnamed"}

// Pos is where evidence was met: the input's index in the run, and the
// line.
type Pos struct {
	File, Line int
}

func (p Pos) less(o Pos) bool { return p.File < o.File || p.File == o.File && p.Line < o.Line }

// Column is one inferred column.
type Column struct {
	Name string
	Type arrowconv.Type
	// Evidence says where the type came from ("mysqlType bigint(20)
	// unsigned", "Debezium io.debezium.time.MicroTimestamp", "values:
	// integers").
	Evidence string
	typed    bool      // from a producer's type: values are not looked at
	vals     valueType // the values seen, when not typed
	first    Pos       // where the column was first seen
}

// Change is a drift of a table's schema.
type Change struct {
	Pos
	// File is the input's path (Pos.File its index).
	File  string
	Table Key
	// What says what changed: "added column note STRING", "widened qty INT
	// to BIGINT", "price DECIMAL(10, 2) became STRING: incompatible".
	What string
	// Version is the schema version in force after the change.
	Version int
}

// Table is a source table's inferred schema.
type Table struct {
	Key
	Format     string
	Columns    []*Column
	PrimaryKey []string
	// Version counts incompatible changes: outputs of version n > 1 go to
	// "v<n>/" below the table's directory.
	Version int
	// SchemaInclude: Debezium messages with the schema/payload envelope
	// (the DDL says 'debezium-json.schema-include' = 'true').
	SchemaInclude bool
	// NoLineage leaves the lineage columns (_file, _line, _source_pos)
	// out of the decode schema.
	NoLineage bool
	Changes   []Change
	byName    map[string]*Column
}

// NewTable starts an empty table.
func NewTable(k Key, format string) *Table {
	return &Table{Key: k, Format: format, Version: 1, byName: map[string]*Column{}}
}

// column returns the column named name, ignoring case when no column has
// it exactly.
func (t *Table) column(name string) *Column {
	if c, ok := t.byName[name]; ok {
		return c
	}
	for _, c := range t.Columns {
		if strings.EqualFold(c.Name, name) {
			return c
		}
	}
	return nil
}

// Schema is the table's current schema as columns (with their evidence as
// COMMENT) and primary key.
func (t *Table) Schema() *arrowconv.Schema {
	s := &arrowconv.Schema{Name: t.String(), PrimaryKey: append([]string(nil), t.PrimaryKey...)}
	for _, c := range t.Columns {
		s.Columns = append(s.Columns, arrowconv.Field{Name: c.Name, Type: c.Type, Comment: c.Evidence})
	}
	return s
}

// ValueChecks returns, by column, a check that a value leaves the
// column's inferred type and evidence as they are (nil: no column whose
// values could change them). A decoder given an inferred schema converts
// values the evidence would type otherwise (integer text into INT, a third
// decimal place into DECIMAL(38, 2), anything into a column seen only
// NULL); with the checks, its strict attempt stops at them instead.
func (t *Table) ValueChecks() *Checks {
	cs := &Checks{}
	for _, c := range t.Columns {
		if c.typed || c.vals.k == kString {
			continue // a producer's type stands; text takes any value
		}
		vt := c.vals
		typ, ev := vt.typ(), vt.describe()
		accept := func(v []byte, jt jsonparser.ValueType) (valueType, bool) {
			n := vt
			n.join(classifyValue(v, jt))
			if n == vt {
				return n, true
			}
			nt := n.typ()
			return n, nt.Kind == typ.Kind && nt.Precision == typ.Precision && nt.Scale == typ.Scale && n.describe() == ev
		}
		general := func(v []byte, jt jsonparser.ValueType) bool {
			_, ok := accept(v, jt)
			return ok
		}
		check := general
		// The common values of each kind, without classifying them (a
		// strict attempt checks every value it decodes): what they are
		// joins into vt without changing it.
		switch vt.k {
		case kBool:
			check = func(v []byte, jt jsonparser.ValueType) bool {
				return jt == jsonparser.Boolean || general(v, jt)
			}
		case kInt:
			most := 9 // characters: digits of an INT's evidence, sign included
			if vt.bits == 64 {
				most = 18
			}
			// A number literal the column's converter takes is an
			// integer: one short enough has an INT's (or BIGINT's) digits.
			check = func(v []byte, jt jsonparser.ValueType) bool {
				return jt == jsonparser.Number && len(v) <= most || jt == jsonparser.Boolean || general(v, jt)
			}
		case kDecimal:
			// More integer digits than the evidence had leave the type as
			// it is (DECIMAL(38, s) while s fits) but not the room a
			// later scale has: the most taken is kept for Checks.Apply.
			most := new(atomic.Int64)
			if cs.wide == nil {
				cs.wide = map[string]*atomic.Int64{}
			}
			cs.wide[c.Name] = most
			check = func(v []byte, jt jsonparser.ValueType) bool {
				if jt == jsonparser.Number {
					if w, s, ok := decimalDigits(v); ok && w <= vt.wide && s <= vt.scale && s > 0 {
						return true
					}
				}
				if jt == jsonparser.Boolean {
					return true
				}
				n, ok := accept(v, jt)
				for ok {
					cur := most.Load()
					if int64(n.wide) <= cur || most.CompareAndSwap(cur, int64(n.wide)) {
						break
					}
				}
				return ok
			}
		case kDouble:
			check = func(v []byte, jt jsonparser.ValueType) bool {
				return jt == jsonparser.Number || jt == jsonparser.Boolean || general(v, jt)
			}
		case kDate, kTimestamp:
			// The full form of the column's precision: yyyy-MM-dd, then
			// HH:mm:ss and the fraction's digits.
			form := "dddd-dd-dd"
			if vt.k == kTimestamp {
				form += " dd:dd:dd"
				if vt.scale > 0 {
					form += "." + strings.Repeat("d", vt.scale)
				}
			}
			f := newForm(form)
			check = func(v []byte, jt jsonparser.ValueType) bool {
				return jt == jsonparser.String && f.match(v) || general(v, jt)
			}
		}
		if cs.ByColumn == nil {
			cs.ByColumn = map[string]func([]byte, jsonparser.ValueType) bool{}
		}
		cs.ByColumn[c.Name] = check
	}
	return cs
}

// Checks are a table snapshot's value checks (Table.ValueChecks), and
// what the values they took added to its evidence without changing its
// types.
type Checks struct {
	// ByColumn are the checks by column name (nil: none).
	ByColumn map[string]func(v []byte, t jsonparser.ValueType) bool
	wide     map[string]*atomic.Int64 // DECIMAL columns: the most integer digits taken
}

// Apply adds to t what the values the checks took said of its columns
// (the integer digits of DECIMAL columns): a strict attempt that stands
// leaves the table's evidence as the whole input would have.
func (cs *Checks) Apply(t *Table) {
	for name, most := range cs.wide {
		if c := t.column(name); c != nil && !c.typed && c.vals.k == kDecimal {
			c.vals.wide = max(c.vals.wide, int(most.Load()))
		}
	}
}

// Clone copies the table (a snapshot a conversion uses while the table
// goes on changing).
func (t *Table) Clone() *Table {
	n := *t
	n.Columns = make([]*Column, len(t.Columns))
	n.byName = make(map[string]*Column, len(t.Columns))
	for i, c := range t.Columns {
		cc := *c
		n.Columns[i] = &cc
		n.byName[cc.Name] = &cc
	}
	n.PrimaryKey = append([]string(nil), t.PrimaryKey...)
	n.Changes = append([]Change(nil), t.Changes...)
	return &n
}

// Merge takes evidence e (of the input at index file, path path) into the
// table and returns the changes it made. Columns new to the table are
// added (earlier rows have NULL there); a type that widens compatibly
// widens; an incompatible one starts a new version.
func (t *Table) Merge(e *Evidence, path string) []Change {
	var changes []Change
	note := func(p Pos, what string) {
		c := Change{Pos: p, File: path, Table: t.Key, What: what, Version: t.Version}
		changes = append(changes, c)
		t.Changes = append(t.Changes, c)
	}
	if pk := e.primaryKey(); len(t.PrimaryKey) == 0 && len(pk) > 0 {
		t.PrimaryKey = append([]string(nil), pk...)
	}
	hadColumns := len(t.Columns) > 0
	cols := make([]*colEvidence, 0, len(e.cols))
	for _, c := range e.cols {
		cols = append(cols, c)
	}
	sort.Slice(cols, func(i, j int) bool {
		a, b := cols[i], cols[j]
		return a.first.less(b.first) || a.first == b.first && a.seq < b.seq
	})
	for _, ce := range cols {
		for _, d := range ce.drifts {
			note(d.pos, d.what)
		}
	}
	var incompatible []string
	for _, ce := range cols {
		cur := t.column(ce.name)
		if cur == nil {
			c := &Column{Name: ce.name, first: ce.first}
			c.set(ce)
			t.Columns = append(t.Columns, c)
			t.byName[c.Name] = c
			if hadColumns {
				note(ce.first, fmt.Sprintf("added column %s %s", c.Name, c.Type))
			}
			continue
		}
		next := *cur
		next.set(ce)
		if cur.typed && !ce.typed {
			continue // the producer's type stands; values fit it
		}
		if !cur.typed && !ce.typed {
			next.vals = cur.vals
			next.vals.join(ce.vals)
			next.Type, next.Evidence = next.vals.typ(), next.vals.describe()
		}
		switch {
		case typesEqual(cur.Type, next.Type):
			*cur = next // same type, perhaps better evidence
		case widens(cur.Type, next.Type):
			note(ce.first, fmt.Sprintf("widened %s %s to %s", cur.Name, cur.Type, next.Type))
			*cur = next
		case !cur.typed && !ce.typed && widens(next.Type, cur.Type):
			// A narrower value fits the wider type.
		default:
			incompatible = append(incompatible, fmt.Sprintf("%s %s became %s", cur.Name, cur.Type, next.Type))
			*cur = next
		}
	}
	if len(incompatible) > 0 {
		t.Version++
		p := Pos{}
		if len(cols) > 0 {
			p = cols[0].first
		}
		note(p, fmt.Sprintf("%s: incompatible, schema version %d", strings.Join(incompatible, "; "), t.Version))
	}
	return changes
}

// set takes the column's type and evidence from ce.
func (c *Column) set(ce *colEvidence) {
	c.typed = ce.typed
	if ce.typed {
		c.Type, c.Evidence = ce.typ, ce.evidence
		return
	}
	c.vals = ce.vals
	c.Type, c.Evidence = ce.vals.typ(), ce.vals.describe()
}

func typesEqual(a, b arrowconv.Type) bool { return a.String() == b.String() }

// widens reports whether every value of type a is a value of type b, and
// files of both can be read as b: integers upward, FLOAT to DOUBLE,
// DECIMAL to one with as many integer digits and at least the scale, DATE
// to TIMESTAMP, TIME and TIMESTAMP to more digits.
func widens(a, b arrowconv.Type) bool {
	rank := map[arrowconv.Kind]int{arrowconv.TinyInt: 1, arrowconv.SmallInt: 2, arrowconv.Int: 3, arrowconv.BigInt: 4}
	switch {
	case rank[a.Kind] > 0 && rank[b.Kind] > 0:
		return rank[a.Kind] <= rank[b.Kind]
	case rank[a.Kind] > 0 && b.Kind == arrowconv.Decimal:
		digits := map[arrowconv.Kind]int{arrowconv.TinyInt: 3, arrowconv.SmallInt: 5, arrowconv.Int: 10, arrowconv.BigInt: 19}[a.Kind]
		return b.Precision-b.Scale >= digits
	case a.Kind == arrowconv.Float && b.Kind == arrowconv.Double:
		return true
	case a.Kind == arrowconv.Decimal && b.Kind == arrowconv.Decimal:
		return b.Scale >= a.Scale && b.Precision-b.Scale >= a.Precision-a.Scale
	case a.Kind == arrowconv.Date && (b.Kind == arrowconv.Timestamp || b.Kind == arrowconv.TimestampLTZ):
		return true
	case a.Kind == b.Kind && (a.Kind == arrowconv.Time || a.Kind == arrowconv.Timestamp || a.Kind == arrowconv.TimestampLTZ):
		return b.Precision >= a.Precision
	case a.IsString() && b.IsString(), a.IsBinary() && b.IsBinary():
		return true
	}
	return false
}

// Tables holds the tables of one archive, by key.
type Tables struct {
	Format string
	// Hints are what the user said of tables (--primary-key,
	// --column-type): they win over the evidence of every input.
	Hints []Hint
	byKey map[Key]*Table
	order []Key
}

// NewTables starts an empty set of tables for a format.
func NewTables(format string) *Tables { return &Tables{Format: format, byKey: map[Key]*Table{}} }

// Table returns the table k, or nil.
func (ts *Tables) Table(k Key) *Table { return ts.byKey[k] }

// Put adds (or replaces) a table.
func (ts *Tables) Put(t *Table) {
	if _, ok := ts.byKey[t.Key]; !ok {
		ts.order = append(ts.order, t.Key)
	}
	ts.byKey[t.Key] = t
}

// Clone copies the tables, each table whole: a state to go back to.
func (ts *Tables) Clone() *Tables {
	n := &Tables{Format: ts.Format, Hints: ts.Hints, byKey: make(map[Key]*Table, len(ts.byKey)), order: slices.Clone(ts.order)}
	for k, t := range ts.byKey {
		n.byKey[k] = t.Clone()
	}
	return n
}

// All returns the tables in the order first seen.
func (ts *Tables) All() []*Table {
	out := make([]*Table, 0, len(ts.order))
	for _, k := range ts.order {
		out = append(out, ts.byKey[k])
	}
	return out
}

// Merge takes a file's evidence into the tables (tables new to the set
// are added) and returns the changes.
func (ts *Tables) Merge(ev *FileEvidence, path string) []Change {
	var changes []Change
	for _, k := range ev.order {
		e := ev.tables[k]
		t := ts.byKey[k]
		if t == nil {
			t = NewTable(k, ts.Format)
			ts.Put(t)
		}
		if ev.opts.SchemaInclude {
			t.SchemaInclude = true
		}
		hints := ts.hintsFor(k)
		for _, h := range hints {
			e.apply(h)
		}
		changes = append(changes, t.Merge(e, path)...)
		for _, h := range hints {
			if len(h.PrimaryKey) > 0 {
				t.PrimaryKey = slices.Clone(h.PrimaryKey)
			}
		}
	}
	return changes
}

// Hint is what the user says of the tables whose "namespace.table" its
// pattern matches whole: their primary key, and columns' types. Auto
// Loader's schema hints are the model: a hint types a column the evidence
// has, and wins over it.
type Hint struct {
	Pattern    *regexp.Regexp
	PrimaryKey []string
	Types      map[string]arrowconv.Type
}

// String says the hint as its flags do.
func (h Hint) String() string {
	var parts []string
	if len(h.PrimaryKey) > 0 {
		parts = append(parts, "primary key "+strings.Join(h.PrimaryKey, ","))
	}
	names := make([]string, 0, len(h.Types))
	for n := range h.Types {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		parts = append(parts, n+" "+h.Types[n].String())
	}
	return h.Pattern.String() + ": " + strings.Join(parts, "; ")
}

// Matches reports whether the hint is of table k.
func (h Hint) Matches(k Key) bool { return h.Pattern.MatchString(k.String()) }

func (ts *Tables) hintsFor(k Key) []Hint {
	var out []Hint
	for _, h := range ts.Hints {
		if h.Matches(k) {
			out = append(out, h)
		}
	}
	return out
}

// apply makes the evidence say what hint h says.
func (e *Evidence) apply(h Hint) {
	for name, t := range h.Types {
		if c := e.cols[name]; c != nil {
			// The evidence is kept in the table's DDL (a COMMENT): one label
			// whoever reads it, as tables already written have it.
			c.typed, c.typ, c.evidence, c.interval = true, t, "--column-type", false
		}
	}
	if len(h.PrimaryKey) > 0 {
		e.PrimaryKey = h.PrimaryKey
	}
}
