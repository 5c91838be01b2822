package nearest

import "testing"

func TestClosest(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"STRNG", "STRING"}, {"integr", "INTEGER"}, {"bigint", "BIGINT"}, {"xyzzy", ""}, {"", ""},
	} {
		if got := Closest(tc.name, []string{"STRING", "INTEGER", "BIGINT", "INT"}); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}
