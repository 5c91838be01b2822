package route

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// TestSegmentHostileNames: names from the data never leave the output
// directory, never hide (leading '.' or '_'), never name a device, and
// come back unchanged.
func TestSegmentHostileNames(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"products", "products"},
		{"MyTable", "^my^table"},
		{"SCOTT", "^^scott"},
		{"EMP_2020", "^^emp_2020"},
		{"Scott", "^scott"},
		{"..", "%2e%2e"},
		{".", "%2e"},
		{"a/b", "a%2fb"},
		{`a\b`, "a%5cb"},
		{"nul", "nu%6c"},
		{"CON", "^^con"},
		{"com1.txt", "com%31.txt"},
		{"_audit", "%5faudit"},
		{"trailing.", "trailing%2e"},
		{"", "%"},
		{"a\x00b", "a%00b"},
		{"tab\tle", "tab%09le"},
		{"naïve", "na%c3%afve"},
		{"100%", "100%25"},
		{"a^b", "a%5eb"},
		{"a~b", "a%7eb"},
		{"商店", "商店"},
		{"客户_2", "客户_2"},
		{"ÜBER", "^^%c3%9cber"},
		{"한국", "%ed%95%9c%ea%b5%ad"}, // Hangul decomposes under NFD (HFS+)
		{"\uf900", "%ef%a4%80"},      // a CJK compatibility ideograph: NFC changes it
		{"\xff\xfe", "%ff%fe"},
	} {
		got := Segment(tt.name)
		if got != tt.want {
			t.Errorf("Segment(%q) = %q, want %q", tt.name, got, tt.want)
		}
		back, err := Unsegment(got)
		if err != nil || back != tt.name {
			t.Errorf("Unsegment(%q) = %q, %v; want %q", got, back, err, tt.name)
		}
	}
	long := strings.Repeat("x", 300)
	if s := Segment(long); len(s) > MaxSegment || s == Segment(long+"y") {
		t.Errorf("long names: %d bytes, distinct: %v", len(s), s != Segment(long+"y"))
	}
}

// FuzzSegment: for any two names, their segments are single, safe path
// elements below the output directory, differ (ignoring case, as some
// file systems do) when the names differ, and decode back.
func FuzzSegment(f *testing.F) {
	for _, s := range []string{"products", "Products", "..", "a/b", "CON", "_x", "", "%", "^^a", strings.Repeat("é", 150), "商店", strings.Repeat("客", 100), "한국"} {
		f.Add(s, strings.ToUpper(s))
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		sa, sb := Segment(a), Segment(b)
		for _, s := range []string{sa, sb} {
			if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\\\x00") || strings.HasPrefix(s, ".") || strings.HasPrefix(s, "_") || len(s) > MaxSegment {
				t.Fatalf("unsafe segment %q", s)
			}
			if filepath.Join("out", s, "x") != "out/"+s+"/x" {
				t.Fatalf("%q does not stay one element below out/", s)
			}
			if isDevice(s) {
				t.Fatalf("%q names a device", s)
			}
		}
		if a != b && strings.EqualFold(sa, sb) {
			t.Fatalf("%q and %q share the segment %q (ignoring case)", a, b, sa)
		}
		if a != b && (norm.NFD.String(sa) == norm.NFD.String(sb) || norm.NFC.String(sa) == norm.NFC.String(sb)) {
			t.Fatalf("%q and %q have segments %q and %q that normalize alike", a, b, sa, sb)
		}
		for _, s := range []string{sa, sb} {
			if !utf8.ValidString(s) {
				t.Fatalf("segment %q is not UTF-8", s)
			}
		}
		for _, x := range []struct{ name, seg string }{{a, sa}, {b, sb}} {
			if strings.Contains(x.seg, "~") {
				continue // cut: not reversible, hashed
			}
			if back, err := Unsegment(x.seg); err != nil || back != x.name {
				t.Fatalf("Unsegment(%q) = %q, %v; want %q", x.seg, back, err, x.name)
			}
		}
	})
}
