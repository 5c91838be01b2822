package pipeline

import (
	"errors"
	"testing"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/decode"
	"github.com/cdcetl/cdcetl/partition"
)

// TestValidate: each rule between Config fields names the field that
// breaks it, and Run refuses such a Config before reading any input.
func TestValidate(t *testing.T) {
	f, _ := decode.Lookup("canal-json")
	withKey, _ := arrowconv.ParseColumns("id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED")
	noKey, _ := arrowconv.ParseColumns("id BIGINT, name STRING")
	tk := &TableKey{Namespace: "a", Name: "b"}
	for _, c := range []struct {
		cfg   Config
		field string // "" means valid
	}{
		{Config{}, ""},
		{Config{OutDir: "o"}, ""},
		{Config{To: ToPrint, OutDir: "o"}, "OutDir"},
		{Config{To: ToParquet}, "OutDir"},
		{Config{To: ToIceberg}, "OutDir"},
		{Config{To: "avro"}, "To"},
		{Config{Schema: withKey}, "Format"},
		{Config{OutDir: "o", TableMode: "upsert"}, "TableMode"},
		{Config{To: ToIceberg, OutDir: "o", TableMode: "merge"}, "TableMode"},
		{Config{To: ToIceberg, OutDir: "o", TableMode: "upsert", KeepGoing: true}, "KeepGoing"},
		{Config{To: ToIceberg, OutDir: "o", Table: tk}, "Table"},
		{Config{To: ToIceberg, OutDir: "o", Format: f, Schema: withKey}, "Table"},
		{Config{To: ToIceberg, OutDir: "o", Format: f, Schema: withKey, OnlyTable: tk}, ""},
		{Config{OutDir: "o", Format: f, Schema: noKey, Table: tk, Materialize: true}, "Materialize"},
		{Config{To: ToIceberg, OutDir: "o", Materialize: true}, "Materialize"},
		{Config{OutDir: "o", Dedup: true}, "Dedup"},
		{Config{OutDir: "o", Format: f, Schema: withKey, PartitionBy: []partition.Field{{Transform: "identity", Column: "ts"}}}, "PartitionBy"},
		{Config{To: ToIceberg, OutDir: "o", Format: f, Schema: withKey, Table: tk, TableMode: "upsert", PartitionBy: []partition.Field{{Transform: "identity", Column: "name"}}}, "PartitionBy"},
		{Config{To: ToIceberg, OutDir: "o", Format: f, Schema: withKey, Table: tk, TableMode: "upsert", PartitionBy: []partition.Field{{Transform: "bucket", Width: 4, Column: "id"}}}, ""},
		{Config{PartitionBy: []partition.Field{{Transform: "identity", Column: "id"}}}, "PartitionBy"},
		{Config{OutDir: "o", Format: f, Schema: withKey, NoLineage: true}, "NoLineage"},
		{Config{OutDir: "o", Format: f, Schema: withKey, DDLDir: "ddl"}, "DDLDir"},
		{Config{OnSuccess: "delete"}, "OnSuccess"},
		{Config{OutDir: "o", OnSuccess: "move="}, "OnSuccess"},
		{Config{OutDir: "o", OnSuccess: "move=done"}, ""},
		{Config{DedupInputs: true}, "DedupInputs"},
		{Config{Encode: decode.EncodeOptions{Envelope: true}}, "Encode"},
		{Config{Target: f, Encode: decode.EncodeOptions{Envelope: true}}, ""},
	} {
		err := c.cfg.Validate()
		var ce *ConfigError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%+v: %v", c.cfg, err)
		case c.field != "" && (!errors.As(err, &ce) || ce.Field != c.field):
			t.Errorf("%+v: error %v, want one about %s", c.cfg, err, c.field)
		}
	}
	_, err := Run(t.Context(), Config{To: ToIceberg}, []string{"no such input"})
	var se *SetupError
	var ce *ConfigError
	if !errors.As(err, &se) || !errors.As(err, &ce) || ce.Field != "OutDir" {
		t.Fatalf("Run: %v, want a setup error about OutDir before the inputs are looked at", err)
	}
}
