package partition

import (
	"strings"
	"testing"
)

func TestParsePartitionBy(t *testing.T) {
	good := map[string]string{
		"day(_event_ts), bucket(16, id)":     "day(_event_ts), bucket(16, id)",
		"region":                             "identity(region)",
		" years( ts ) ,truncate( 4 ,`a b`) ": "year(ts), truncate(4, a b)",
		"HOUR(ts), identity(`x``y`)":         "hour(ts), identity(x`y)",
		"month(创建时间)":                        "month(创建时间)",
	}
	for in, want := range good {
		fs, err := ParsePartitionBy(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		var got []string
		for _, f := range fs {
			got = append(got, f.String())
		}
		if strings.Join(got, ", ") != want {
			t.Errorf("%q: %s, want %s", in, strings.Join(got, ", "), want)
		}
	}
	for _, in := range []string{"", "day()", "bucket(id)", "bucket(0, id)", "bucket(16 id)", "week(ts)", "day(ts", "id, id", "a,,b", "`x", "day(ts) x"} {
		if _, err := ParsePartitionBy(in); err == nil {
			t.Errorf("%q: no error", in)
		} else if !strings.Contains(err.Error(), "partition spec") || !strings.Contains(err.Error(), "fields: COLUMN") {
			t.Errorf("%q: %v does not say what to give", in, err)
		}
	}
}

// FuzzParsePartitionBy: the parser never panics, and what it accepts it
// renders in a form it reads back to the same fields.
func FuzzParsePartitionBy(f *testing.F) {
	for _, s := range []string{"day(_event_ts), bucket(16, id)", "region", "truncate(4, `a b`)", "hour(ts),identity(x)", "bucket(", "`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs, err := ParsePartitionBy(s)
		if err != nil {
			return
		}
		var parts []string
		for _, p := range fs {
			q := "`" + strings.ReplaceAll(p.Column, "`", "``") + "`"
			if p.Width > 0 {
				parts = append(parts, p.Transform+"("+itoa(p.Width)+", "+q+")")
			} else {
				parts = append(parts, p.Transform+"("+q+")")
			}
		}
		again, err := ParsePartitionBy(strings.Join(parts, ", "))
		if err != nil {
			t.Fatalf("%q → %q: %v", s, strings.Join(parts, ", "), err)
		}
		if len(again) != len(fs) {
			t.Fatalf("%q: %d fields, then %d", s, len(fs), len(again))
		}
		for i := range fs {
			if fs[i] != again[i] {
				t.Fatalf("%q: %v, then %v", s, fs[i], again[i])
			}
		}
	})
}

func itoa(n int) string {
	var b []byte
	for n > 0 || len(b) == 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
