package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdcetl/cdcetl/decode"
)

// TestInspectRefusesWhatConvertRefuses: messages the evidence reads as
// carrying no rows but the decoder refuses (a Kafka record key between
// Debezium values, an unknown Canal type) stop inspect where they stop
// convert, with the same file:line; with ignore-parse-errors both go on.
func TestInspectRefusesWhatConvertRefuses(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"keys.json": `{"id":1}
{"before":null,"after":{"id":1,"a":"x"},"source":{"db":"d","table":"t","ts_ms":1700000000000},"op":"c","ts_ms":1700000000001}
`,
		"canal.json": `{"data":[{"id":"1"}],"database":"d","table":"t","isDdl":false,"pkNames":["id"],"type":"INSERT","es":1,"ts":2}
{"data":[{"id":"2"}],"database":"d","table":"t","isDdl":false,"pkNames":["id"],"type":"UPSERT","es":3,"ts":4}
`,
		// A transaction marker without the schema/payload envelope in a
		// file of envelopes.
		"envelope.json": `{"schema":{"type":"struct","fields":[]},"payload":{"before":null,"after":{"id":1},"source":{"db":"d","table":"t"},"op":"c"}}
{"status":"BEGIN","id":"5.6.641","ts_ms":1486500577125,"event_count":null,"data_collections":null}
`,
		// Control messages conversion knows: no error.
		"control.json": `{"status":"BEGIN","id":"571:53195832","event_count":null,"data_collections":null,"ts_ms":1}
{"before":null,"after":{"id":1},"source":{"db":"d","table":"t"},"op":"c"}
{"before":null,"after":null,"source":{"db":"d","table":"t"},"op":"t"}
`,
	}
	want := map[string]string{"keys.json": ":1: op:", "canal.json": ":2:", "control.json": "", "envelope.json": ":2: payload:"}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, ierr := Inspect(context.Background(), Config{RunOptions: RunOptions{Workers: 1}}, []string{p})
		_, cerr := Run(context.Background(), Config{OutputOptions: OutputOptions{OutDir: filepath.Join(dir, "out-"+name), To: ToParquet}, RunOptions: RunOptions{Workers: 1}}, []string{p})
		if want[name] == "" {
			if ierr != nil || cerr != nil {
				t.Errorf("%s: inspect %v, convert %v; want both to pass", name, ierr, cerr)
			}
			continue
		}
		if ierr == nil || cerr == nil {
			t.Errorf("%s: inspect %v, convert %v; want both to fail", name, ierr, cerr)
			continue
		}
		if !strings.Contains(ierr.Error(), name+want[name]) || !strings.Contains(cerr.Error(), name+want[name]) {
			t.Errorf("%s: inspect %q, convert %q; want both to name %s%s", name, ierr, cerr, name, want[name])
		}
	}
	// Asked to skip what cannot be decoded, inspect counts it and goes on.
	p := filepath.Join(dir, "keys.json")
	ins, err := Inspect(context.Background(), Config{DecodingOptions: DecodingOptions{Options: decode.Options{IgnoreParseErrors: true}}, RunOptions: RunOptions{Workers: 1}}, []string{p})
	if err != nil {
		t.Fatalf("inspect with ignore-parse-errors: %v", err)
	}
	if len(ins.Tables) != 1 || ins.Tables[0].Table != "d.t" {
		t.Errorf("inspect with ignore-parse-errors: tables %+v", ins.Tables)
	}
}
