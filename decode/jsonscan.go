package decode

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/buger/jsonparser"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/internal/javatext"
	"github.com/cdcetl/cdcetl/internal/simdscan"
)

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return "'" + string(c) + "'"
	}
	return fmt.Sprintf("0x%02x", c)
}

func skipWS(b []byte, i int) int {
	// Compact JSON: one compare, as every byte above ' ' is no white space.
	for i < len(b) && b[i] <= ' ' {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanString validates the string starting at b[i] == '"' and returns the
// index after its closing quote.
func scanString(b []byte, i int) (int, error) {
	end, _, err := scanStringEsc(b, i)
	return end, err
}

// scanStringEsc is scanString that also says whether the string holds an
// escape (so callers need not search for a backslash again).
func scanStringEsc(b []byte, i int) (int, bool, error) {
	start := i
	esc := false
	i++
	k := 0 // words skipped: from the fourth on, the string is a long one
	for i < len(b) {
		// Skip plain ASCII bytes (no quote, backslash or high bit): most
		// of a CDC message is such string content. Four words inline for
		// the short strings (keys, codes, timestamps), then vectors for
		// the long ones: the call costs about what four words do. A long
		// string goes on with vectors after an escape or a non-ASCII
		// character: its next one is usually tens of bytes away.
		for ; i+8 <= len(b); k++ {
			if k >= 4 && len(b)-i >= 64 {
				var done bool
				if i, esc, done = scanBlocks(b, i, esc); done {
					return i, esc, nil
				}
				if i+8 > len(b) {
					break
				}
			}
			w := load64(b, i) // i > start >= 0
			if m := specialBytes(w); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1, esc, nil
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return 0, false, &msgError{off: i, err: errorf(ErrMalformed, "unterminated string")}
			}
			switch e := b[i+1]; {
			case shortEscape[e]:
				i += 2
			case e == 'u':
				if i+6 > len(b) {
					return 0, false, &msgError{off: i, err: errorf(ErrMalformed, "unterminated \\u escape")}
				}
				for k := i + 2; k < i+6; k++ {
					if javatext.HexVal(b[k]) < 0 {
						return 0, false, &msgError{off: k, err: errorf(ErrMalformed, "invalid \\u escape")}
					}
				}
				i += 6
			default:
				return 0, false, &msgError{off: i, err: errorf(ErrMalformed, fmt.Sprintf("unrecognized character escape %s", quoteByte(b[i+1])))}
			}
		case c < 0x80:
			i++ // control characters are allowed unescaped, as Flink configures Jackson
		default:
			n := 0
			switch {
			case c >= 0xC0 && c < 0xE0:
				n = 1
			case c >= 0xE0 && c < 0xF0:
				n = 2
			case c >= 0xF0 && c < 0xF8:
				n = 3
			default:
				return 0, false, &msgError{off: i, err: errorf(ErrMalformed, fmt.Sprintf("invalid UTF-8 start byte 0x%02x", c))}
			}
			for k := 1; k <= n; k++ {
				if i+k >= len(b) || b[i+k]&0xC0 != 0x80 {
					return 0, false, &msgError{off: i + k, err: errorf(ErrMalformed, "invalid UTF-8 middle byte")}
				}
			}
			i += n + 1
		}
	}
	return 0, false, &msgError{off: start, err: errorf(ErrMalformed, "unterminated string")}
}

// scanBlocks walks a long string's content from b[i] a 64-byte block per
// step, handling the special bytes of each block in the step: the closing
// quote (done: i is past it), the two-byte escapes and the two- and
// three-byte UTF-8 sequences of CDC text ("\"Pro\"", "\n", "café").
// It leaves anything else (\u escapes, errors, four-byte sequences) to
// scanStringEsc's byte handler, returning i at that byte, and returns
// when fewer than 64 bytes remain. Stopping at each special byte and
// starting the vector scan again cost escaped text three times what plain
// text costs.
func scanBlocks(b []byte, i int, esc bool) (int, bool, bool) {
	for len(b)-i >= 64 {
		off, m := simdscan.Next(b[i:])
		if i += off; m == 0 {
			break
		}
		adv := 64
		for m != 0 {
			p := bits.TrailingZeros64(m)
			j := i + p
			n := 0
			switch c := b[j]; {
			case c == '"':
				return j + 1, esc, true
			case c == '\\':
				if j+1 >= len(b) || !shortEscape[b[j+1]] {
					return j, esc, false
				}
				esc, n = true, 2
			case c >= 0xC0 && c < 0xE0:
				if j+1 >= len(b) || b[j+1]&0xC0 != 0x80 {
					return j, esc, false
				}
				n = 2
			case c >= 0xE0 && c < 0xF0:
				if j+2 >= len(b) || b[j+1]&0xC0 != 0x80 || b[j+2]&0xC0 != 0x80 {
					return j, esc, false
				}
				n = 3
			default:
				return j, esc, false
			}
			if p+n >= 64 { // the sequence ends past the block: go on after it
				adv = p + n
				break
			}
			m &= ^uint64(0) << (p + n)
		}
		i += adv
	}
	return i, esc, false
}

// shortEscape flags the characters of the two-byte escapes.
var shortEscape = [256]bool{'"': true, '\\': true, '/': true, 'b': true, 'f': true, 'n': true, 'r': true, 't': true}

// scanNumber validates a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(b []byte, i int) (int, error) {
	start := i
	if b[i] == '-' {
		i++
	}
	if i >= len(b) || b[i]-'0' >= 10 {
		return 0, numberError(start, "invalid number: no digit after '-'")
	}
	if b[i] == '0' {
		i++
		if i < len(b) && b[i]-'0' < 10 {
			return 0, numberError(start, "invalid number: leading zeroes not allowed")
		}
	} else {
		i = digitsEnd(b, i+1)
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i]-'0' >= 10 {
			return 0, numberError(start, "invalid number: decimal point not followed by a digit")
		}
		i = digitsEnd(b, i+1)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i]-'0' >= 10 {
			return 0, numberError(start, "invalid number: exponent without digits")
		}
		i = digitsEnd(b, i+1)
	}
	return i, nil
}

func numberError(start int, msg string) error {
	return &msgError{off: start, err: errorf(ErrMalformed, msg)}
}

// digitsEnd returns the index of the first byte at or after i (i >= 0)
// that is no ASCII digit, or len(b): eight bytes a step (epoch times,
// positions and ids run to 10-19 digits).
func digitsEnd(b []byte, i int) int {
	for i+8 <= len(b) {
		w := load64(b, i)
		// A byte is a digit when its high nibble is 3 and adding 6 keeps
		// it so. Only a byte of 0xFA or more carries into the next one,
		// and it is no digit itself: the first non-digit is exact.
		nz := (w&0xF0F0F0F0F0F0F0F0 ^ 0x3030303030303030) | ((w+0x0606060606060606)&0xF0F0F0F0F0F0F0F0 ^ 0x3030303030303030)
		if nz != 0 {
			m := ((nz & 0x7F7F7F7F7F7F7F7F) + 0x7F7F7F7F7F7F7F7F | nz) & 0x8080808080808080
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(b) && b[i]-'0' < 10 {
		i++
	}
	return i
}

// identByte marks the bytes that may continue an identifier for Jackson
// (letters, digits, '_', '$' and every byte from 0x80): one load where a
// literal ends, instead of five range tests.
var identByte = func() (t [256]bool) {
	for c := range t {
		t[c] = c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
	}
	return t
}()

func scanLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, &msgError{off: i, err: errorf(ErrMalformed, "unrecognized token")}
	}
	j := i + len(lit)
	// Jackson rejects a literal that runs on into identifier characters.
	if j < len(b) && identByte[b[j]] {
		return 0, &msgError{off: i, err: errorf(ErrMalformed, "unrecognized token")}
	}
	return j, nil
}

// unescape appends the decoded content of a JSON string (without quotes,
// already validated) to dst. Lone surrogates become U+FFFD.
func unescape(dst, s []byte) []byte {
	k := bytes.IndexByte(s, '\\')
	if k < 0 {
		return append(dst, s...)
	}
	return unescapeAt(dst, s, k)
}

// unescapeAt is unescape of s whose first backslash is s[k].
func unescapeAt(dst, s []byte, k int) []byte {
	dst = append(dst, s[:k]...)
	for i := k; i < len(s); {
		c := s[i]
		if c != '\\' {
			j := len(s)
			if k := bytes.IndexByte(s[i+1:], '\\'); k >= 0 {
				j = i + 1 + k
			}
			dst = append(dst, s[i:j]...)
			i = j
			continue
		}
		switch s[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := rune(hex4(s[i+2:]))
			i += 6
			if utf16.IsSurrogate(r) {
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2 := rune(hex4(s[i+2:]))
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						dst = utf8.AppendRune(dst, d)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default: // '"', '\\', '/'
			dst = append(dst, s[i+1])
		}
		i += 2
	}
	return dst
}

func hex4(b []byte) int {
	return javatext.HexVal(b[0])<<12 | javatext.HexVal(b[1])<<8 | javatext.HexVal(b[2])<<4 | javatext.HexVal(b[3])
}

// hasEscape reports whether a raw JSON string body contains a backslash.
func hasEscape(s []byte) bool { return bytes.IndexByte(s, '\\') >= 0 }

// specialBytes flags the bytes of w that end a plain run of string
// content: '"', '\\' and any byte >= 0x80. Only the lowest flag is exact
// (a borrow from a '"' or '\\' byte can flag bytes above it), which is
// all the scanners use: a byte below the first special one is under 0x80
// and differs from both, so subtracting one from its XOR with either
// neither sets its high bit nor borrows. A byte >= 0x80 is flagged by one
// of the two terms (its XOR with either is >= 0x80 and only 0x80 loses the
// bit; it cannot be 0x80 with both). Two hasZero calls and a test of the
// high bits took twice the operations.
func specialBytes(w uint64) uint64 {
	const ones = 0x0101010101010101
	return (((w ^ 0x2222222222222222) - ones) | ((w ^ 0x5c5c5c5c5c5c5c5c) - ones)) & 0x8080808080808080
}

// hasZero is non-zero when some byte of x is zero (the classic SWAR test).
func hasZero(x uint64) uint64 {
	return (x - 0x0101010101010101) & ^x & 0x8080808080808080
}

// appendQuoted writes s as a JSON string the way Jackson's generator does:
// '"' and '\' escaped, control characters as \b \t \n \f \r or \u00XX,
// everything else (non-ASCII, '/') raw.
func appendQuoted(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i, c := range s {
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			const hexd = "0123456789ABCDEF"
			dst = append(dst, '\\', 'u', '0', '0', hexd[c>>4], hexd[c&15])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendQuoted is appendQuoted for the encoders in other packages.
func AppendQuoted(dst, s []byte) []byte { return appendQuoted(dst, s) }

var decPool = sync.Pool{New: func() any { return new(javatext.DecimalText) }}

// appendNumberText appends the text Jackson's node gives for a number
// literal: integers as their value ("-0" is 0), fractions as Double.toString
// of the parsed double, or, when the schema has a DECIMAL, as the exact
// decimal with trailing zeros stripped in BigDecimal.toString form.
func appendNumberText(dst, n []byte, exact bool) []byte {
	if !javatext.IsFloatLiteral(n) {
		if len(n) == 2 && n[0] == '-' && n[1] == '0' {
			return append(dst, '0')
		}
		return append(dst, n...)
	}
	if exact {
		d := decPool.Get().(*javatext.DecimalText)
		defer decPool.Put(d)
		if !d.Parse(n) {
			return append(dst, n...)
		}
		d.StripTrailingZeros()
		return d.AppendString(dst)
	}
	f, _ := strconv.ParseFloat(string(n), 64) // validated; ±Inf on overflow as in Java
	return arrowconv.AppendJavaDouble(dst, f)
}

// appendCanonical appends the compact JSON text Jackson's JsonNode.toString
// gives for a value: no white space, strings re-escaped, numbers as in
// appendNumberText, duplicate keys collapsed (last value, first position).
func appendCanonical(dst, v []byte, t jsonparser.ValueType, exact bool, scratch *[]byte) []byte {
	switch t {
	case jsonparser.String:
		if hasEscape(v) {
			s := unescape((*scratch)[:0], v)
			dst = appendQuoted(dst, s)
			*scratch = s
			return dst
		}
		return appendQuoted(dst, v)
	case jsonparser.Number:
		return appendNumberText(dst, v, exact)
	case jsonparser.Array:
		dst = append(dst, '[')
		first := true
		jsonparser.ArrayEach(v, func(ev []byte, et jsonparser.ValueType, _ int, _ error) {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendCanonical(dst, ev, et, exact, scratch)
		})
		return append(dst, ']')
	case jsonparser.Object:
		type member struct {
			key []byte
			val []byte
			typ jsonparser.ValueType
		}
		var members []member
		jsonparser.ObjectEach(v, func(k, mv []byte, mt jsonparser.ValueType, _ int) error {
			key := append([]byte(nil), k...) // jsonparser may reuse its unescape buffer
			for i := range members {
				if string(members[i].key) == string(key) {
					members[i].val, members[i].typ = mv, mt
					return nil
				}
			}
			members = append(members, member{key, mv, mt})
			return nil
		})
		dst = append(dst, '{')
		for i, m := range members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendQuoted(dst, m.key)
			dst = append(dst, ':')
			dst = appendCanonical(dst, m.val, m.typ, exact, scratch)
		}
		return append(dst, '}')
	case jsonparser.Boolean, jsonparser.Null:
		return append(dst, v...)
	}
	return dst
}

// nodeText appends Jackson's asText() for a non-null value: string content,
// number text, true/false; containers give "" (callers handle STRING apart).
func nodeText(dst, v []byte, t jsonparser.ValueType, exact bool) []byte {
	switch t {
	case jsonparser.String:
		if hasEscape(v) {
			return unescape(dst, v)
		}
		return append(dst, v...)
	case jsonparser.Number:
		return appendNumberText(dst, v, exact)
	case jsonparser.Boolean:
		return append(dst, v...)
	}
	return dst
}

// offsetIn returns the byte offset of sub within msg when sub points into
// it (jsonparser's results do, though with trimmed capacity), or -1.
func offsetIn(msg, sub []byte) int {
	if len(msg) == 0 || sub == nil {
		return -1
	}
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(sub))) - uintptr(unsafe.Pointer(unsafe.SliceData(msg))))
	if off < 0 || off > len(msg) {
		return -1
	}
	return off
}

// load64 returns the eight bytes of b at i as a little-endian word. The
// caller has checked 0 <= i and i+8 <= len(b): the scanners' inner loops
// then load without the bounds checks and masks b[i:] costs.
func load64(b []byte, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i)), 8))
}
