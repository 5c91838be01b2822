package decode

import (
	"fmt"
	"regexp"

	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// canal decodes canal-json (spec §4): "data" and "old" are arrays of rows;
// INSERT, UPDATE and DELETE emit one row (UPDATE a -U/+U pair) per element,
// CREATE is skipped, every other type is an error.
type canal struct {
	*base
	data, old []slot // scratch: the elements of "data" and "old"
}

func newCanal(b *base) opDecoder { return &canal{base: b} }

func (c *canal) envelope() []string {
	return []string{"data", "old", "type", "database", "table", "sqlType", "pkNames", "ts", "es"}
}

func (c *canal) decode(root []byte) (Outcome, error) {
	c.scanEnvelope(root, c.envIdx, c.env)
	// The filters run on the parsed tree before any conversion.
	if ok, err := c.filter("database", c.opts.dbRe); err != nil || !ok {
		return Filtered, err
	}
	if ok, err := c.filter("table", c.opts.tableRe); err != nil || !ok {
		return Filtered, err
	}
	op, opSlot, err := c.opText("type")
	if err != nil {
		return 0, err
	}
	switch string(op) {
	case "INSERT", "DELETE":
		if err := c.validateRows("old", c.envSlot("old")); err != nil {
			return 0, err
		}
		kind := arrowconv.Insert
		if op[0] == 'D' {
			kind = arrowconv.Delete
		}
		rows, err := c.elements("data", &c.data)
		if err != nil {
			return 0, err
		}
		for i, r := range rows {
			if err := c.emitObject(kind, fmt.Sprintf("data[%d]", i), r); err != nil {
				return 0, err
			}
		}
		return Emitted, nil
	case "UPDATE":
		rows, err := c.elements("data", &c.data)
		if err != nil {
			return 0, err
		}
		if len(rows) == 0 {
			return Emitted, c.validateRows("old", c.envSlot("old"))
		}
		olds, err := c.elements("old", &c.old)
		if err != nil {
			return 0, err
		}
		oldAll := c.envSlot("old")
		c.markPresent(oldAll.v, oldAll.t)
		for i, after := range rows {
			if i >= len(olds) {
				return 0, withPath(errorf(ErrMissingField, fmt.Sprintf("\"old\" has %d elements, fewer than \"data\" (%d)", len(olds), len(rows))), fmt.Sprintf("old[%d]", i))
			}
			before := olds[i]
			if before.t != jsonparser.Object {
				return 0, c.notRow(fmt.Sprintf("old[%d]", i), before)
			}
			if after.t != jsonparser.Object {
				return 0, c.notRow(fmt.Sprintf("data[%d]", i), after)
			}
			if err := c.emitMergedBefore(before.v, after.v); err != nil {
				return 0, withPath(err, fmt.Sprintf("old[%d]", i))
			}
			if err := c.emitObject(arrowconv.UpdateAfter, fmt.Sprintf("data[%d]", i), after); err != nil {
				return 0, err
			}
		}
		for i := len(rows); i < len(olds); i++ {
			if err := c.validateRow(fmt.Sprintf("old[%d]", i), olds[i]); err != nil {
				return 0, err
			}
		}
		return Emitted, nil
	case "CREATE":
		// DDL "create table": skipped, after the envelope converted.
		if err := c.validateRows("data", c.envSlot("data")); err != nil {
			return 0, err
		}
		if err := c.validateRows("old", c.envSlot("old")); err != nil {
			return 0, err
		}
		return SkippedDDL, nil
	}
	if err := c.validateRows("data", c.envSlot("data")); err != nil {
		return 0, err
	}
	if err := c.validateRows("old", c.envSlot("old")); err != nil {
		return 0, err
	}
	return 0, c.opError("type", opSlot)
}

// filter applies database.include / table.include to the raw top-level
// value's text (JSON null reads as "null"); a missing key is an error.
func (c *canal) filter(field string, re *regexp.Regexp) (bool, error) {
	if re == nil {
		return true, nil
	}
	s := c.envSlot(field)
	switch s.t {
	case jsonparser.NotExist:
		return false, withPath(errorf(ErrMissingField, fmt.Sprintf("the %q field is missing but %s.include is set", field, field)), field)
	case jsonparser.Null:
		return re.MatchString("null"), nil
	case jsonparser.Object, jsonparser.Array:
		return re.MatchString(""), nil
	}
	return re.Match(c.cx.textOf(s.v, s.t)), nil
}

// elements splits an array-of-rows field. A missing or null field, or one
// that is not an array, fails the message.
func (c *canal) elements(field string, dst *[]slot) ([]slot, error) {
	s := c.envSlot(field)
	if s.t != jsonparser.Array {
		return nil, c.notRow(field, s)
	}
	out := (*dst)[:0]
	jsonparser.ArrayEach(s.v, func(v []byte, t jsonparser.ValueType, _ int, _ error) {
		out = append(out, slot{v, t})
	})
	*dst = out
	return out, nil
}

// notRow is the error for a row or array-of-rows field that is missing,
// null or of the wrong JSON type.
func (c *canal) notRow(field string, s slot) error {
	if s.t == jsonparser.NotExist || s.t == jsonparser.Null {
		return withPath(errorf(ErrMissingField, fmt.Sprintf("the %q field is missing or null", field)), field)
	}
	return withPath(c.cx.fail(s.v, "ROW", "wrong JSON type"), field)
}
