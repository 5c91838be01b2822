package outdir

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLegacySegment: the earlier escaping, still read, as it was.
func TestLegacySegment(t *testing.T) {
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
		got := LegacySegment(tt.name)
		if got != tt.want {
			t.Errorf("LegacySegment(%q) = %q, want %q", tt.name, got, tt.want)
		}
		back, err := LegacyUnsegment(got)
		if err != nil || back != tt.name {
			t.Errorf("LegacyUnsegment(%q) = %q, %v; want %q", got, back, err, tt.name)
		}
	}
}

// TestSegmentHostileNames: names read as the source wrote them; what is
// unsafe (leaving the output directory, hiding, a device, control bytes,
// what Windows refuses) is escaped, and every name comes back unchanged.
func TestSegmentHostileNames(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"products", "products"},
		{"MyTable", "MyTable"},
		{"SCOTT", "SCOTT"},
		{"EMP_2020", "EMP_2020"},
		{"order items", "order items"},
		{"..", "%2e%2e"},
		{".", "%2e"},
		{"a/b", "a%2fb"},
		{`a\b`, "a%5cb"},
		{"nul", "nu%6c"},
		{"CON", "CO%4e"},
		{"com1.txt", "com%31.txt"},
		{"Com1", "Com%31"},
		{"_audit", "%5faudit"},
		{"trailing.", "trailing%2e"},
		{"space ", "space%20"},
		{"", "%"},
		{"a\x00b", "a%00b"},
		{"tab\tle", "tab%09le"},
		{"naïve", "naïve"},
		{"100%", "100%25"},
		{"a:b*c?", "a%3ab%2ac%3f"},
		{"a^b~c", "a^b~c"},
		{"商店", "商店"},
		{"ÜBER", "ÜBER"},
		{"한국", "한국"},
		{"\xff\xfe", "%ff%fe"},
		{"a\u0085b", "a%c2%85b"},
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
	if _, err := Unsegment(Segment(long)); err == nil {
		t.Error("a cut segment decoded")
	}
}

// FuzzSegment: for any two names, their segments are single, safe path
// elements below the output directory (never hidden, never a device, no
// Windows-refused characters), differ when the names differ, and decode
// back. (Names differing only in case keep their case: the pipeline tells
// them apart where a file system would not.)
func FuzzSegment(f *testing.F) {
	for _, s := range []string{"products", "Products", "..", "a/b", "CON", "_x", "", "%", "^^a", strings.Repeat("é", 150), "商店", strings.Repeat("客", 100), "한국", "a:b", "x~0123456789abcdef"} {
		f.Add(s, strings.ToUpper(s))
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		sa, sb := Segment(a), Segment(b)
		for _, s := range []string{sa, sb} {
			if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\\\x00<>:\"|?*") || strings.HasPrefix(s, ".") || strings.HasPrefix(s, "_") ||
				strings.HasSuffix(s, ".") || strings.HasSuffix(s, " ") || len(s) > MaxSegment {
				t.Fatalf("unsafe segment %q", s)
			}
			if filepath.Join("out", s, "x") != "out/"+s+"/x" {
				t.Fatalf("%q does not stay one element below out/", s)
			}
			if isDevice(strings.ToLower(s)) {
				t.Fatalf("%q names a device", s)
			}
			if !utf8.ValidString(s) {
				t.Fatalf("segment %q is not UTF-8", s)
			}
			for _, r := range s {
				if r < 0x20 || r == 0x7f {
					t.Fatalf("segment %q has a control character", s)
				}
			}
		}
		if a != b && sa == sb {
			t.Fatalf("%q and %q share the segment %q", a, b, sa)
		}
		for _, x := range []struct{ name, seg string }{{a, sa}, {b, sb}} {
			if len(x.seg) > MaxSegment-17 && cutSegment(x.seg) {
				continue // cut: not reversible, hashed
			}
			if back, err := Unsegment(x.seg); err != nil || back != x.name {
				t.Fatalf("Unsegment(%q) = %q, %v; want %q", x.seg, back, err, x.name)
			}
		}
	})
}
