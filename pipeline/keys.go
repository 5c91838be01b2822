package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/infer"
	"github.com/cdcetl/cdcetl/internal/setting"
	"github.com/cdcetl/cdcetl/reader"
)

// decideKeys reads the inputs of an upsert load without a schema, before
// anything is committed, for the primary keys of their tables: a table
// whose first input shows no key takes the one a later input shows, and a
// table that none shows stops the load now, rather than after the inputs
// before it were committed. Only the messages of tables whose key is not
// known yet are observed (Canal, Maxwell and GoldenGate name the key in
// every message; Debezium shows it in key-only before images).
func (s *lakeSink) decideKeys(ctx context.Context, files []reader.File) error {
	r := s.r
	cfg := r.cfg
	keys := map[infer.Key][]string{}
	known := func(k infer.Key) bool {
		if len(keys[k]) > 0 {
			return true
		}
		pk, err := r.router.storedKey(cfg, k)
		if err == nil && len(pk) > 0 {
			keys[k] = pk
			return true
		}
		return false
	}
	var withRows []infer.Key
	for i, f := range files {
		chunks, err := reader.OpenFileChunks(f, f.Path, cfg.ChunkSize, cfg.MaxLine)
		if err != nil {
			return err
		}
		chunks.SetContext(ctx)
		var format *decode.Format
		var schemaInclude bool
		var ev *infer.FileEvidence
		checked := map[infer.Key]bool{}
		for {
			ch, ok := chunks.Next()
			if !ok {
				break
			}
			if ev == nil {
				if format, schemaInclude, err = detect(cfg, f, ch); err != nil {
					chunks.Close()
					return err
				}
				ev = infer.NewFileEvidence(format.Name, i, infer.Options{SchemaInclude: schemaInclude})
			}
			ch.Lines(func(l []byte, pos reader.Pos) bool {
				ns, tbl, esc, named := decode.RouteRaw(format, schemaInclude, l)
				k := infer.Unnamed
				if named {
					k = routeKey(ns, tbl, esc)
				}
				if !tableFilter(cfg, k.Namespace, k.Name) {
					return true
				}
				if !checked[k] {
					checked[k] = true
					known(k)
				}
				if len(keys[k]) == 0 {
					ev.Observe(l, pos.Line)
					if e := ev.Of(k); e != nil && len(e.PrimaryKey) > 0 {
						keys[k] = slices.Clone(e.PrimaryKey) // named by the message: no need to read on
					}
				}
				return true
			})
			chunks.Recycle(ch.Data)
		}
		err = chunks.Err()
		chunks.Close()
		if err != nil {
			return err
		}
		if ev == nil {
			continue
		}
		for _, k := range ev.Tables() {
			e := ev.Of(k)
			if e.Messages > 0 && !slices.Contains(withRows, k) {
				withRows = append(withRows, k)
			}
			if pk := e.InferredKey(); len(keys[k]) == 0 && len(pk) > 0 {
				keys[k] = slices.Clone(pk)
			}
		}
	}
	var missing []string
	for _, k := range withRows {
		if len(keys[k]) == 0 && !known(k) {
			missing = append(missing, k.String())
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%[3]s upsert needs a primary key, and no input of the run shows one for %[1]s (nothing was committed): name it with %[4]s %[2]s=COL[,COL], pin the table with a %[5]s DDL that declares PRIMARY KEY (...) NOT ENFORCED, or use %[3]s changelog",
			strings.Join(missing, ", "), missing[0], setting.TableMode, setting.PrimaryKey, setting.DDLDir)
	}
	r.router.mu.Lock()
	r.router.keys = keys
	r.router.mu.Unlock()
	return nil
}

// storedKey is the primary key the user or an earlier run gave table k:
// a pinned DDL's, a --primary-key hint's, or its stored schema's.
func (rt *router) storedKey(cfg *Config, k infer.Key) ([]string, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if tr := rt.pinned[k]; tr != nil {
		return tr.schema.PrimaryKey, nil
	}
	for _, h := range rt.tables.Hints {
		if h.Matches(k) && len(h.PrimaryKey) > 0 {
			return h.PrimaryKey, nil
		}
	}
	if err := rt.load(cfg, k); err != nil {
		return nil, err
	}
	if t := rt.tables.Table(k); t != nil {
		return t.PrimaryKey, nil
	}
	return nil, nil
}
