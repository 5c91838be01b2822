package decode

import "testing"

func TestSniff(t *testing.T) {
	cases := []struct {
		msg, format string
		control     bool
	}{
		{`{"data":[{"id":"1"}],"type":"INSERT","isDdl":false,"database":"d","table":"t"}`, "canal-json", false},
		// Canal rows cut to data and type (Paimon's "incomplete" test data).
		{`{"data":[{"k":"1","v":"Hi"}],"type":"INSERT"}`, "canal-json", false},
		{`{"data":[{"k":"1"}],"old":[{"k":"0"}],"type":"UPDATE"}`, "canal-json", false},
		// A lower-case kind with an array is nobody's envelope.
		{`{"data":[{"k":"1"}],"type":"insert"}`, "", false},
		{`{"data":[{"k":"1"}],"type":"QUERY"}`, "", false},
		{`{"database":"d","table":"t","type":"insert","data":{"id":1}}`, "maxwell-json", false},
		{`{"op_type":"I","table":"S.T","after":{"ID":1}}`, "ogg-json", false},
		{`{"op":"c","after":{"id":1},"source":{}}`, "debezium-json", false},
		{`{"isDdl":true,"sql":"CREATE TABLE t (id int)","type":"CREATE","data":null}`, "canal-json", true},
		{`{"status":"BEGIN","id":"571:53195832","event_count":null}`, "debezium-json", true},
	}
	for _, c := range cases {
		got := Sniff([]byte(c.msg))
		if got.Format != c.format || got.Control != c.control {
			t.Errorf("Sniff(%s) = %q control=%v, want %q control=%v", c.msg, got.Format, got.Control, c.format, c.control)
		}
	}
}
