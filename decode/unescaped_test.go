package decode

import (
	"bytes"
	"testing"
)

// TestUnescaped: a value is taken as free of escapes without looking only
// when it lies in the message before the message's first backslash.
func TestUnescaped(t *testing.T) {
	msg := []byte(`{"a":"plain","b":"x\"y","c":"after"}`)
	at := func(s string) []byte {
		i := bytes.Index(msg, []byte(s))
		return msg[i : i+len(s)]
	}
	var cx convCtx
	cx.setMsg(msg, true)
	for _, c := range []struct {
		v    []byte
		want bool
	}{
		{at(`plain`), true},
		{at(`{"a":"plain","b":"x`), true}, // up to the backslash
		{at(`x\"y`), false},               // holds it
		{at(`after`), false},              // after it: looked at, not known
		{msg[:0], true},
		{[]byte(`plain`), false}, // not in the message
	} {
		if got := cx.unescaped(c.v); got != c.want {
			t.Errorf("unescaped(%q) = %v, want %v", c.v, got, c.want)
		}
	}
	// Without shortcuts nothing is known; a message without backslashes
	// is known whole.
	cx.setMsg(msg, false)
	if cx.unescaped(at(`plain`)) {
		t.Error("unescaped without shortcuts")
	}
	clean := []byte(`{"a":"b"}`)
	cx.setMsg(clean, true)
	if !cx.unescaped(clean[1:]) || cx.unescaped(msg[:1]) {
		t.Error("a message without backslashes")
	}
	// textOf of an escaped value after the backslash still unescapes.
	cx.setMsg(msg, true)
	if got := string(cx.textOf(at(`x\"y`), 1)); got != `x"y` {
		t.Errorf("textOf = %q", got)
	}
}
