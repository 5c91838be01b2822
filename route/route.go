// Package route names the output directories of source tables: a table's
// namespace and name, taken from the data, become path segments that are
// safe on every file system and can never leave the output directory or
// meet another table's.
//
// The escaping is reversible ([Segment], [Unsegment]):
//
//   - bytes a-z, 0-9, '_' and '-' stay; '.' stays except first in a segment;
//   - a non-ASCII letter or digit without case that normalization leaves
//     alone (Chinese, Japanese kana and kanji, Thai, ...) stays, so such
//     names stay readable; other non-ASCII bytes are %xx;
//   - an upper-case letter is written lower-case after '^' ("MyTable" is
//     "^my^table"), and a name with upper-case letters and no lower-case
//     ones is written lower-case after "^^" ("SCOTT" is "^^scott"), so that
//     two names differing only in case stay different on file systems
//     that ignore case;
//   - every other byte, and a first '_' or '.' (which readers take for a
//     hidden file), and a last '.', is %xx (lower-case hex);
//   - a segment that is a Windows device name (CON, NUL, COM1, ...) has its
//     last letter as %xx; the empty name is "%".
//
// A segment longer than [MaxSegment] bytes is cut and ends in '~' and a
// hash of the whole name: not reversible by itself (the table's schema file
// keeps the name), but still unique.
package route

import (
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zeebo/xxh3"
	"golang.org/x/text/unicode/norm"
)

// MaxSegment is the longest segment written: room below the 255-byte
// limit of common file systems for the "~2" and ".parquet" of file names.
const MaxSegment = 200

// Segment escapes a namespace or table name into one path segment.
func Segment(name string) string {
	if name == "" {
		return "%"
	}
	var b strings.Builder
	upperOnly := strings.ContainsAny(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") && !strings.ContainsAny(name, "abcdefghijklmnopqrstuvwxyz")
	if upperOnly {
		b.WriteString("^^")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-':
			b.WriteByte(c)
		case c == '_' && i > 0:
			b.WriteByte(c)
		case c == '.' && i > 0 && i < len(name)-1:
			b.WriteByte(c)
		case c >= 'A' && c <= 'Z':
			if !upperOnly {
				b.WriteByte('^')
			}
			b.WriteByte(c + 'a' - 'A')
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(name[i:])
			if r != utf8.RuneError && keepRune(r) {
				b.WriteString(name[i : i+size])
			} else {
				for _, x := range []byte(name[i : i+size]) {
					fmt.Fprintf(&b, "%%%02x", x)
				}
			}
			i += size - 1
		default:
			fmt.Fprintf(&b, "%%%02x", c)
		}
	}
	s := b.String()
	if isDevice(s) {
		// Escape the device name's last letter: "con" is "co%6e",
		// "com1.txt" is "com%31.txt".
		end := len(s)
		if i := strings.IndexByte(s, '.'); i >= 0 {
			end = i
		}
		s = s[:end-1] + fmt.Sprintf("%%%02x", s[end-1]) + s[end:]
	}
	if len(s) > MaxSegment {
		sum := xxh3.HashString128(name).Bytes()
		cut := MaxSegment - 17
		for cut > 0 && (s[cut-1] == '%' || s[cut-1] == '^' || cut >= 2 && s[cut-2] == '%' || !utf8.RuneStart(s[cut])) {
			cut-- // never cut an escape in two
		}
		s = s[:cut] + "~" + hex.EncodeToString(sum[:8])
	}
	return s
}

// keepRune reports whether a non-ASCII rune can stay as it is: a letter
// or digit without case (CJK, most scripts without capitals), so file
// systems that ignore case cannot make two names one, and one that
// composition and decomposition leave alone, so file systems that
// normalize names (HFS+ decomposes, some store composed) cannot either.
// Everything else is %xx per byte, as ASCII punctuation is.
func keepRune(r rune) bool {
	if !unicode.IsLetter(r) && !unicode.IsDigit(r) || unicode.SimpleFold(r) != r {
		return false
	}
	s := string(r)
	return norm.NFC.IsNormalString(s) && norm.NFD.IsNormalString(s) && norm.NFKC.IsNormalString(s)
}

// isDevice reports whether s (before its first '.') is a Windows device
// name, which no directory may be called.
func isDevice(s string) bool {
	base := s
	if i := strings.IndexByte(s, '.'); i >= 0 {
		base = s[:i]
	}
	switch base {
	case "con", "prn", "aux", "nul", "conin$", "conout$":
		return true
	}
	if len(base) == 4 && (strings.HasPrefix(base, "com") || strings.HasPrefix(base, "lpt")) && base[3] >= '0' && base[3] <= '9' {
		return true
	}
	return false
}

// ErrSegment is returned by Unsegment for text Segment never writes.
var ErrSegment = errors.New("not an escaped table name")

// Unsegment reverses Segment (cut segments, ending in '~' and a hash, are
// not reversible: an error).
func Unsegment(s string) (string, error) {
	if s == "%" {
		return "", nil
	}
	if strings.Contains(s, "~") {
		return "", fmt.Errorf("%q: %w (a long name, cut)", s, ErrSegment)
	}
	upperOnly := strings.HasPrefix(s, "^^")
	if upperOnly {
		s = s[2:]
	}
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) {
				return "", fmt.Errorf("%q: %w", s, ErrSegment)
			}
			v, err := hex.DecodeString(s[i+1 : i+3])
			if err != nil {
				return "", fmt.Errorf("%q: %w", s, ErrSegment)
			}
			b = append(b, v[0])
			i += 2
		case c == '^' && !upperOnly:
			if i+1 >= len(s) || s[i+1] < 'a' || s[i+1] > 'z' {
				return "", fmt.Errorf("%q: %w", s, ErrSegment)
			}
			b = append(b, s[i+1]-('a'-'A'))
			i++
		case upperOnly && c >= 'a' && c <= 'z':
			b = append(b, c-('a'-'A'))
		default:
			b = append(b, c)
		}
	}
	return string(b), nil
}

// Dir is a table's directory below the output directory:
// "<namespace>/<table>", each escaped.
func Dir(namespace, table string) string {
	return filepath.Join(Segment(namespace), Segment(table))
}
