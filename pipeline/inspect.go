package pipeline

import (
	"context"
	"fmt"
	"sort"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/infer"
	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/reader"
)

// Inspection is what 'cdcetl inspect' tells of an archive: per input and
// table what it holds, and per table the schema a routed conversion
// infers, with its evidence and drift.
type Inspection struct {
	Files  []InspectedFile  `json:"files"`
	Tables []InspectedTable `json:"tables"`
}

// InspectedFile is one input.
type InspectedFile struct {
	Path   string `json:"path"`
	Format string `json:"format"`
	// Detected says why the format is what it is ("line 1 has ...");
	// empty when --format gave it.
	Detected string               `json:"detected,omitempty"`
	Lines    int64                `json:"lines"`
	Tables   []InspectedFileTable `json:"tables"`
}

// InspectedFileTable is what one input holds of one table.
type InspectedFileTable struct {
	Table     string           `json:"table"`
	Namespace string           `json:"namespace"`
	Name      string           `json:"name"`
	Messages  int64            `json:"messages"`
	Rows      RowCounts        `json:"rows"`
	Control   map[string]int64 `json:"control,omitempty"`
	// FirstEvent and LastEvent are the producer's event times (Canal es,
	// Maxwell ts, GoldenGate op_ts, Debezium source.ts_ms), when given.
	FirstEvent    *time.Time `json:"first_event,omitempty"`
	LastEvent     *time.Time `json:"last_event,omitempty"`
	FirstPosition string     `json:"first_position,omitempty"`
	LastPosition  string     `json:"last_position,omitempty"`
}

// InspectedTable is one table's inferred schema.
type InspectedTable struct {
	Table      string            `json:"table"`
	Namespace  string            `json:"namespace"`
	Name       string            `json:"name"`
	Format     string            `json:"format"`
	Version    int               `json:"schema_version"`
	Dir        string            `json:"dir"` // below a routed conversion's output directory
	PrimaryKey []string          `json:"primary_key,omitempty"`
	Columns    []InspectedColumn `json:"columns"`
	Changes    []SchemaChange    `json:"schema_changes,omitempty"`
	// DDL is the CREATE TABLE for --ddl (or a --ddl-dir file): the
	// latest version's columns, their evidence as COMMENTs, the table.
	DDL string `json:"ddl"`
}

// InspectedColumn is one column and where its type came from.
type InspectedColumn struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Evidence string `json:"evidence"`
}

// Inspect reads every input under paths whole (cfg.Workers at once) and
// merges their evidence in input order, as a routed conversion does. Of
// cfg it uses Format and FormatOptions (nil Format: detected per input),
// the table filters, Workers and MaxLine.
func Inspect(ctx context.Context, cfg Config, paths []string) (*Inspection, error) {
	cfg.defaults()
	files, err := outdir.Find(ctx, paths, nil) // files, directories, buckets
	if err != nil {
		return nil, setup(err)
	}
	type result struct {
		file InspectedFile
		ev   *infer.FileEvidence
	}
	results := make([]result, len(files))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(cfg.Workers)
	for i, f := range files {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			ev, fi, err := inspectFile(ctx, &cfg, f, i)
			if err != nil {
				return err
			}
			results[i] = result{file: fi, ev: ev}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	tables := infer.NewTables("")
	tables.Hints = cfg.Hints
	ins := &Inspection{Files: []InspectedFile{}, Tables: []InspectedTable{}}
	for i, r := range results {
		if tables.Format == "" {
			tables.Format = r.ev.Format
		}
		tables.Merge(r.ev, files[i].Path)
		ins.Files = append(ins.Files, r.file)
	}
	for _, t := range tables.All() {
		if len(t.Columns) == 0 {
			continue // heartbeats, transaction markers, DDL only: no columns, nothing to write
		}
		if t.Format == "" {
			t.Format = tables.Format
		}
		it := InspectedTable{Table: t.String(), Namespace: t.Namespace, Name: t.Name, Format: t.Format, Version: t.Version,
			Dir: tableDir(t.Key, t.Version), PrimaryKey: t.PrimaryKey, DDL: t.DDL(nil), Columns: []InspectedColumn{}}
		for _, c := range t.Columns {
			it.Columns = append(it.Columns, InspectedColumn{Name: c.Name, Type: c.Type.String(), Evidence: c.Evidence})
		}
		for _, c := range t.Changes {
			it.Changes = append(it.Changes, SchemaChange{Table: t.String(), File: c.File, Line: c.Line, Change: c.What, Version: c.Version})
		}
		ins.Tables = append(ins.Tables, it)
	}
	return ins, nil
}

// printableMilli reports whether an event time (epoch milliseconds) is one
// JSON and RFC 3339 can say (years 0 to 9999): a producer's odd value
// leaves the time out rather than failing the report.
func printableMilli(m int64) bool {
	return m >= -62167219200000 && m < 253402300800000
}

// inspectFile detects an input's format and reads it whole for its
// evidence, keeping the tables the filters pass.
func inspectFile(ctx context.Context, cfg *Config, f reader.File, idx int) (*infer.FileEvidence, InspectedFile, error) {
	fi := InspectedFile{Path: f.Path, Tables: []InspectedFileTable{}}
	format, schemaInclude := cfg.Format, cfg.OptionsFor(cfg.Format).SchemaInclude
	if format == nil {
		lines, err := firstLines(cfg, f, detectLines)
		if err != nil {
			return nil, fi, err
		}
		if len(lines) == 0 {
			format, _ = decode.Lookup("json") // empty: nothing to tell
		} else if format, schemaInclude, fi.Detected, err = decode.Detect(lines, 1); err != nil {
			return nil, fi, &reader.PathError{Path: f.Path, Err: err}
		}
	}
	fi.Format = format.Name
	var keep func([]byte) bool
	if cfg.IncludeTable != nil || cfg.ExcludeTable != nil || cfg.OnlyTable != nil {
		keep = func(l []byte) bool {
			ns, tbl, ok := decode.Route(format, schemaInclude, l)
			return !ok || tableFilter(cfg, ns, tbl)
		}
	}
	ev, lines, err := gatherEvidence(ctx, cfg, f, idx, format, schemaInclude, keep)
	if err != nil {
		return nil, fi, err
	}
	fi.Lines = lines
	// The evidence counts every message without rows as control; the
	// decoder refuses some of them (a Debezium message without "op", an
	// unknown Canal type). Conversion would stop there: so does inspect.
	// With ignore-parse-errors conversion drops them, counted.
	opts := cfg.OptionsFor(format)
	opts.SchemaInclude, opts.Producer = schemaInclude, true
	for _, s := range ev.ControlSamples() {
		if opts.IgnoreParseErrors {
			break
		}
		if err := decode.CheckControl(format, opts, s.Msg); err != nil {
			return nil, fi, locate(format, opts, err, reader.Pos{File: f.Path, Line: s.Line}, s.Msg)
		}
	}
	for _, k := range ev.Tables() {
		e := ev.Of(k)
		name := k.String()
		if k == infer.Unnamed && e.Messages == 0 {
			name = "(no table)" // heartbeats, transaction markers
		}
		ft := InspectedFileTable{Table: name, Namespace: k.Namespace, Name: k.Name, Messages: e.Messages, Rows: RowCounts(e.Rows)}
		if len(e.Control) > 0 {
			ft.Control = e.Control
		}
		if e.FirstEventMilli > 0 && printableMilli(e.FirstEventMilli) && printableMilli(e.LastEventMilli) {
			a, b := time.UnixMilli(e.FirstEventMilli).UTC(), time.UnixMilli(e.LastEventMilli).UTC()
			ft.FirstEvent, ft.LastEvent = &a, &b
		}
		ft.FirstPosition, ft.LastPosition = e.Positions()
		fi.Tables = append(fi.Tables, ft)
	}
	return ev, fi, nil
}

// DDLFileName is the name of a table's file in a --ddl-out (and
// --ddl-dir) directory: "<namespace>.<table>.sql", each escaped as table
// directories are, and the namespace's dots too, so the first dot parts
// them.
func DDLFileName(namespace, table string) string {
	return escapeDots(outdir.Segment(namespace)) + "." + outdir.Segment(table) + ".sql"
}

func escapeDots(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			out = append(out, "%2e"...)
			continue
		}
		out = append(out, s[i])
	}
	return string(out)
}

// String renders an inspected file's table line for text output.
func (t InspectedFileTable) String() string {
	s := fmt.Sprintf("%s: %d messages; rows +I %d, -U %d, +U %d, -D %d", t.Table, t.Messages, t.Rows[0], t.Rows[1], t.Rows[2], t.Rows[3])
	if len(t.Control) > 0 {
		s += "; control"
		for _, k := range sortedKeys(t.Control) {
			s += fmt.Sprintf(" %s %d", k, t.Control[k])
		}
	}
	if t.FirstEvent != nil {
		s += fmt.Sprintf("; events %s .. %s", t.FirstEvent.Format(time.RFC3339Nano), t.LastEvent.Format(time.RFC3339Nano))
	}
	if t.FirstPosition != "" {
		s += fmt.Sprintf("; positions %s .. %s", t.FirstPosition, t.LastPosition)
	}
	return s
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
