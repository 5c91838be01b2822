package decode

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"

	"github.com/buger/jsonparser"
)

// scanner validates a message with Jackson's rules (see validate) and, in
// the same pass, captures what the decoders need: envelope fields, and the
// fields of row objects matched to schema columns. Values are left as raw
// slices (strings without their quotes, still escaped), typed with
// jsonparser's ValueType so the converters can take them as they are.
// Nested values are only validated here; their converters walk them later.
type scanner struct {
	msg   []byte
	depth int
	// mark, when set, is called for every object key met at any depth
	// (canal/maxwell "old": Jackson's findValue searches all of it).
	mark func(key []byte)
	// keyBuf holds an unescaped key; it is overwritten by the next key, so
	// member functions must use the key before scanning the value.
	keyBuf []byte
	// expect is the key a member function predicts for the next member of
	// the object it is walking (CDC producers write keys in a fixed order);
	// object compares the raw bytes with it instead of scanning the key,
	// and sets hit for the member when they match. It holds only names
	// that need no escaping (see plainKey), so a match is a valid key.
	expect string
	hit    bool
}

// plainKey returns name when its raw JSON form is the name itself (no
// quote, backslash or control character, valid UTF-8), else "".
func plainKey(name string) string {
	if !utf8.ValidString(name) {
		return ""
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c == '"' || c == '\\' || c < 0x20 {
			return ""
		}
	}
	return name
}

const maxDepth = 1000 // Jackson 2.15's default nesting limit

func (s *scanner) errAt(i int, msg string) error {
	return &msgError{off: i, err: errorf(ErrMalformed, msg)}
}

func (s *scanner) unexpected(i int, want string) error {
	if i >= len(s.msg) {
		return s.errAt(i, "unexpected end of input, expected "+want)
	}
	return s.errAt(i, fmt.Sprintf("unexpected character %s, expected %s", quoteByte(s.msg[i]), want))
}

// value validates the value at i (after white space) and returns it as a
// slot and the index after it.
func (s *scanner) value(i int) (slot, int, error) {
	b := s.msg
	i = skipWS(b, i)
	if i >= len(b) {
		return slot{}, i, s.errAt(i, "unexpected end of input")
	}
	if v, end, scalar, err := scanScalar(b, i); scalar {
		return v, end, err
	}
	switch b[i] {
	case '{':
		end, err := s.object(i, func(_ []byte, vi int) (int, error) { return s.skip(vi) })
		if err != nil {
			return slot{}, 0, err
		}
		return slot{b[i:end], jsonparser.Object}, end, nil
	case '[':
		end, err := s.array(i, s.skip)
		if err != nil {
			return slot{}, 0, err
		}
		return slot{b[i:end], jsonparser.Array}, end, nil
	}
	return slot{}, 0, s.errAt(i, fmt.Sprintf("unexpected character %s", quoteByte(b[i])))
}

// scanScalar validates the string, number or literal at b[i] (i < len(b))
// and returns it as a slot and the index after it; scalar is false when
// b[i] starts no scalar.
func scanScalar(b []byte, i int) (v slot, end int, scalar bool, err error) {
	switch c := b[i]; {
	case c == '"':
		if end, err = scanString(b, i); err != nil {
			return slot{}, 0, true, err
		}
		return slot{b[i+1 : end-1], jsonparser.String}, end, true, nil
	case c == '-' || (c >= '0' && c <= '9'):
		if end, err = scanNumber(b, i); err != nil {
			return slot{}, 0, true, err
		}
		return slot{b[i:end], jsonparser.Number}, end, true, nil
	case c == 't', c == 'f', c == 'n':
		lit, t := "null", jsonparser.Null
		switch c {
		case 't':
			lit, t = "true", jsonparser.Boolean
		case 'f':
			lit, t = "false", jsonparser.Boolean
		}
		if end = literalEnd(b, i); end < 0 {
			if end, err = scanLiteral(b, i, lit); err != nil { // the error
				return slot{}, 0, true, err
			}
		}
		return slot{b[i:end], t}, end, true, nil
	}
	return slot{}, 0, false, nil
}

// literalEnd returns the index after the literal true, false or null at
// b[i], or -1 for anything else (scanLiteral says what is wrong). One
// word compare instead of a string comparison call.
func literalEnd(b []byte, i int) int {
	if i < 0 || len(b)-i < 4 {
		return -1
	}
	end := i + 4
	switch binary.LittleEndian.Uint32(b[i : i+4]) {
	case 'n' | 'u'<<8 | 'l'<<16 | 'l'<<24, 't' | 'r'<<8 | 'u'<<16 | 'e'<<24:
	case 'f' | 'a'<<8 | 'l'<<16 | 's'<<24:
		if end >= len(b) || b[end] != 'e' {
			return -1
		}
		end++
	default:
		return -1
	}
	// Jackson rejects a literal that runs on into identifier characters.
	if end < len(b) {
		if identByte[b[end]] {
			return -1
		}
	}
	return end
}

// skip validates the value at vi and returns the index after it; object
// and array use it for members nobody captures.
func (s *scanner) skip(vi int) (int, error) {
	_, next, err := s.value(vi)
	return next, err
}

// key reads `"name" :` at i; it returns the raw name bounds (escaped), the
// index after the colon and whether the name holds an escape.
func (s *scanner) key(i int) (ks, ke, next int, esc bool, err error) {
	b := s.msg
	if i >= len(b) || b[i] != '"' {
		return 0, 0, 0, false, s.unexpected(i, "a double-quoted field name")
	}
	end, esc, err := scanStringEsc(b, i)
	if err != nil {
		return 0, 0, 0, false, err
	}
	if next, err = s.colon(end); err != nil {
		return 0, 0, 0, false, err
	}
	return i + 1, end - 1, next, esc, nil
}

// colon reads the ':' after a field name that ends at j and returns the
// index after it.
func (s *scanner) colon(j int) (int, error) {
	b := s.msg
	if j < len(b) && b[j] == ':' { // the usual compact form
		return j + 1, nil
	}
	j = skipWS(b, j)
	if j >= len(b) || b[j] != ':' {
		return 0, s.errAt(j, "expected ':' after a field name")
	}
	return j + 1, nil
}

// rawKeyAt reports whether b holds the field name name, quoted, at i. name
// must be a plainKey, so a match is that key exactly.
func rawKeyAt(b []byte, i int, name string) bool {
	n := len(name)
	return n > 0 && i+n+1 < len(b) && b[i] == '"' && b[i+n+1] == '"' && string(b[i+1:i+n+1]) == name
}

// object walks the members of the object at b[i] == '{', calling member
// with each key (unescaped when needed; valid only until member scans the
// value) and the index of its value; member returns the index after the
// value.
func (s *scanner) object(i int, member func(key []byte, vi int) (int, error)) (int, error) {
	if s.depth >= maxDepth {
		return 0, s.errAt(i, "nesting deeper than 1000")
	}
	s.depth++
	defer func() { s.depth-- }()
	b := s.msg
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		exp := s.expect
		s.expect, s.hit = "", false
		var k []byte
		var next int
		if rawKeyAt(b, i, exp) {
			k = b[i+1 : i+len(exp)+1]
			var err error
			if next, err = s.colon(i + len(exp) + 2); err != nil {
				return 0, err
			}
			s.hit = true
		} else {
			ks, ke, n, esc, err := s.key(i)
			if err != nil {
				return 0, err
			}
			k, next = b[ks:ke], n
			if esc {
				s.keyBuf = unescape(s.keyBuf[:0], k)
				k = s.keyBuf
			}
		}
		var err error
		if s.mark != nil {
			s.mark(k)
		}
		if i, err = member(k, next); err != nil {
			return 0, err
		}
		i = skipWS(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
			continue
		}
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		return 0, s.unexpected(i, "',' or '}'")
	}
}

// array walks the elements of the array at b[i] == '['.
func (s *scanner) array(i int, elem func(vi int) (int, error)) (int, error) {
	if s.depth >= maxDepth {
		return 0, s.errAt(i, "nesting deeper than 1000")
	}
	s.depth++
	defer func() { s.depth-- }()
	b := s.msg
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if i, err = elem(i); err != nil {
			return 0, err
		}
		i = skipWS(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
			continue
		}
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		return 0, s.unexpected(i, "',' or ']'")
	}
}

// skipFast validates the value at b[i] (after white space) as value does,
// without capturing anything and without the member callbacks: for the
// envelope parts only validated, or taken whole (canal's mysqlType and
// sqlType, debezium's schema). It returns the index after the value, or ok
// false at any error or at nesting past maxDepth (depth is the nesting
// already entered); the caller then scans the value with the general
// scanner, which produces the exact error.
func skipFast(b []byte, i, depth int) (int, bool) {
	i = skipWS(b, i)
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '{':
		if depth >= maxDepth {
			return 0, false
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, true
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return 0, false
			}
			end, _, err := scanStringEsc(b, i)
			if err != nil {
				return 0, false
			}
			if i = skipWS(b, end); i >= len(b) || b[i] != ':' {
				return 0, false
			}
			var ok bool
			if i, ok = skipFast(b, i+1, depth+1); !ok {
				return 0, false
			}
			i = skipWS(b, i)
			if i < len(b) && b[i] == ',' {
				i = skipWS(b, i+1)
				continue
			}
			if i < len(b) && b[i] == '}' {
				return i + 1, true
			}
			return 0, false
		}
	case '[':
		if depth >= maxDepth {
			return 0, false
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = skipFast(b, i, depth+1); !ok {
				return 0, false
			}
			i = skipWS(b, i)
			if i < len(b) && b[i] == ',' {
				i = skipWS(b, i+1)
				continue
			}
			if i < len(b) && b[i] == ']' {
				return i + 1, true
			}
			return 0, false
		}
	}
	_, end, scalar, err := scanScalar(b, i)
	if !scalar || err != nil {
		return 0, false
	}
	return end, true
}

// slot is one field's raw JSON value found while scanning an object.
type slot struct {
	v []byte
	t jsonparser.ValueType
}
