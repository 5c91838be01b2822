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
		{Config{OutputOptions: OutputOptions{OutDir: "o"}}, ""},
		{Config{OutputOptions: OutputOptions{To: ToPrint, OutDir: "o"}}, "OutDir"},
		{Config{OutputOptions: OutputOptions{To: ToParquet}}, "OutDir"},
		{Config{OutputOptions: OutputOptions{To: ToIceberg}}, "OutDir"},
		{Config{OutputOptions: OutputOptions{To: "avro"}}, "To"},
		{Config{DecodingOptions: DecodingOptions{Schema: withKey}}, "Format"},
		{Config{OutputOptions: OutputOptions{OutDir: "o"}, LakeOptions: LakeOptions{TableMode: "upsert"}}, "TableMode"},
		{Config{OutputOptions: OutputOptions{To: ToIceberg, OutDir: "o"}, LakeOptions: LakeOptions{TableMode: "merge"}}, "TableMode"},
		{Config{InputOptions: InputOptions{KeepGoing: true}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: "o"}, LakeOptions: LakeOptions{TableMode: "upsert"}}, "KeepGoing"},
		{Config{OutputOptions: OutputOptions{To: ToIceberg, OutDir: "o"}, LakeOptions: LakeOptions{Table: tk}}, "Table"},
		{Config{DecodingOptions: DecodingOptions{Format: f, Schema: withKey}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: "o"}}, "Table"},
		{Config{InputOptions: InputOptions{OnlyTable: tk}, DecodingOptions: DecodingOptions{Format: f, Schema: withKey}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: "o"}}, ""},
		{Config{DecodingOptions: DecodingOptions{Format: f, Schema: noKey}, OutputOptions: OutputOptions{OutDir: "o", Materialize: true}, LakeOptions: LakeOptions{Table: tk}}, "Materialize"},
		{Config{OutputOptions: OutputOptions{To: ToIceberg, OutDir: "o", Materialize: true}}, "Materialize"},
		{Config{OutputOptions: OutputOptions{OutDir: "o", Dedup: true}}, "Dedup"},
		{Config{DecodingOptions: DecodingOptions{Format: f, Schema: withKey}, OutputOptions: OutputOptions{OutDir: "o", PartitionBy: []partition.Field{{Transform: "identity", Column: "ts"}}}}, "PartitionBy"},
		{Config{DecodingOptions: DecodingOptions{Format: f, Schema: withKey}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: "o", PartitionBy: []partition.Field{{Transform: "identity", Column: "name"}}}, LakeOptions: LakeOptions{Table: tk, TableMode: "upsert"}}, "PartitionBy"},
		{Config{DecodingOptions: DecodingOptions{Format: f, Schema: withKey}, OutputOptions: OutputOptions{To: ToIceberg, OutDir: "o", PartitionBy: []partition.Field{{Transform: "bucket", Width: 4, Column: "id"}}}, LakeOptions: LakeOptions{Table: tk, TableMode: "upsert"}}, ""},
		{Config{OutputOptions: OutputOptions{PartitionBy: []partition.Field{{Transform: "identity", Column: "id"}}}}, "PartitionBy"},
		{Config{DecodingOptions: DecodingOptions{Format: f, Schema: withKey, NoLineage: true}, OutputOptions: OutputOptions{OutDir: "o"}}, "NoLineage"},
		{Config{DecodingOptions: DecodingOptions{Format: f, Schema: withKey, DDLDir: "ddl"}, OutputOptions: OutputOptions{OutDir: "o"}}, "DDLDir"},
		{Config{InputOptions: InputOptions{OnSuccess: "delete"}}, "OnSuccess"},
		{Config{InputOptions: InputOptions{OnSuccess: "move="}, OutputOptions: OutputOptions{OutDir: "o"}}, "OnSuccess"},
		{Config{InputOptions: InputOptions{OnSuccess: "move=done"}, OutputOptions: OutputOptions{OutDir: "o"}}, ""},
		{Config{InputOptions: InputOptions{DedupInputs: true}}, "DedupInputs"},
		{Config{OutputOptions: OutputOptions{Encode: decode.EncodeOptions{Envelope: true}}}, "Encode"},
		{Config{OutputOptions: OutputOptions{Target: f, Encode: decode.EncodeOptions{Envelope: true}}}, ""},
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
	_, err := Run(t.Context(), Config{OutputOptions: OutputOptions{To: ToIceberg}}, []string{"no such input"})
	var se *SetupError
	var ce *ConfigError
	if !errors.As(err, &se) || !errors.As(err, &ce) || ce.Field != "OutDir" {
		t.Fatalf("Run: %v, want a setup error about OutDir before the inputs are looked at", err)
	}
}
