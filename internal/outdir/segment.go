// Table directories: a source table's namespace and name, taken from the data, become path segments that
// read as the source wrote them, never leave the output directory and are
// safe on common file systems.
//
// The escaping is reversible ([Segment], [Unsegment]) and touches only
// what is unsafe:
//
//   - '/', '\\', '%' (the escape itself), control bytes, the characters
//     Windows refuses in names (< > : " | ? *) and bytes that are not
//     UTF-8 are %xx (lower-case hex);
//   - a first '.' or '_' (readers take the directory for a hidden one) and
//     a last '.' or ' ' (Windows drops them) are %xx: "." and ".." can
//     never be a segment;
//   - a Windows device name (CON, nul, COM1, ...) has its last letter as
//     %xx; the empty name is "%".
//
// Letters keep their case ("MyTable", "SCOTT") and non-ASCII names stay
// as they are. Two names that a file system ignoring case (or
// normalizing Unicode) would make one directory are told apart when it
// actually happens, by the pipeline: the second gets "~2".
//
// A segment longer than [MaxSegment] bytes is cut and ends in '~' and a
// hash of the whole name: not reversible by itself (the table's schema file
// keeps the name), but still unique.
//
// Earlier versions wrote upper-case letters as '^' and the letter, and
// more as %xx ([LegacySegment]); their directories are still read.

package outdir

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

// LegacySegment is the escaping of earlier versions, read to find their
// output directories: an upper-case letter was '^' and the letter ("^^"
// first, then lower case, for a name without lower-case letters), and
// every byte but a-z, 0-9, '_', '-', '.' and caseless letters was %xx.
func LegacySegment(name string) string {
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

// LegacyUnsegment reverses LegacySegment.
func LegacyUnsegment(s string) (string, error) {
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

// LegacyDir is a table's directory as earlier versions named it.
func LegacyDir(namespace, table string) string {
	return filepath.Join(LegacySegment(namespace), LegacySegment(table))
}

// Segment escapes a namespace or table name into one path segment.
func Segment(name string) string {
	if name == "" {
		return "%"
	}
	var b strings.Builder
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		switch {
		case r == utf8.RuneError && size <= 1, unsafeRune(r),
			i == 0 && (r == '.' || r == '_'),
			i+size == len(name) && (r == '.' || r == ' '):
			for _, x := range []byte(name[i : i+size]) {
				fmt.Fprintf(&b, "%%%02x", x)
			}
		default:
			b.WriteString(name[i : i+size])
		}
		i += size
	}
	s := b.String()
	if isDevice(strings.ToLower(s)) {
		// Escape the device name's last letter: "CON" is "CO%4e",
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
		for cut > 0 && (s[cut-1] == '%' || cut >= 2 && s[cut-2] == '%' || !utf8.RuneStart(s[cut])) {
			cut-- // never cut an escape or a character in two
		}
		s = s[:cut] + "~" + hex.EncodeToString(sum[:8])
	}
	return s
}

// unsafeRune reports whether r is escaped wherever it is.
func unsafeRune(r rune) bool {
	switch r {
	case '/', '\\', '%', '<', '>', ':', '"', '|', '?', '*', 0x7f:
		return true
	}
	return r < 0x20 || r >= 0x80 && r < 0xa0 // C0 and C1 control characters
}

// Unsegment reverses Segment (cut segments, ending in '~' and a hash, are
// not reversible: an error).
func Unsegment(s string) (string, error) {
	if s == "%" {
		return "", nil
	}
	if len(s) > MaxSegment-17 && cutSegment(s) {
		return "", fmt.Errorf("%q: %w (a long name, cut)", s, ErrSegment)
	}
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b = append(b, c)
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("%q: %w", s, ErrSegment)
		}
		v, err := hex.DecodeString(s[i+1 : i+3])
		if err != nil {
			return "", fmt.Errorf("%q: %w", s, ErrSegment)
		}
		b = append(b, v[0])
		i += 2
	}
	return string(b), nil
}

// cutSegment reports whether s ends as a cut segment does: '~' and 16 hex
// digits.
func cutSegment(s string) bool {
	if len(s) < 17 || s[len(s)-17] != '~' {
		return false
	}
	_, err := hex.DecodeString(s[len(s)-16:])
	return err == nil
}

// TableDir is a table's directory below the output directory:
// "<namespace>/<table>", each escaped.
func TableDir(namespace, table string) string {
	return filepath.Join(Segment(namespace), Segment(table))
}
