package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/cdcetl/cdcetl/decode"
)

// cliReference is the command-line reference in Markdown (docs/cli.md),
// made from the commands' usage texts and flag definitions, the format
// options and the metadata keys: 'cdcetl help flags --markdown'. A test
// fails when docs/cli.md is not what this makes.
func cliReference() string {
	var b strings.Builder
	b.WriteString("# cdcetl command-line reference\n\n")
	b.WriteString("Made by `cdcetl help flags --markdown` from the flag definitions; do not edit by hand\n")
	b.WriteString("(`go test ./cmd/cdcetl -run CLIReference -update` writes it again).\n\n")
	b.WriteString("Commands: [convert](#cdcetl-convert), [watch](#cdcetl-watch), [inspect](#cdcetl-inspect), [audit](#cdcetl-audit), [show](#cdcetl-show), [maintain](#cdcetl-maintain); [format options](#format-options), [metadata columns](#metadata-columns).\n")
	for _, c := range []struct{ name, usage string }{
		{"convert", convertUsage}, {"watch", watchUsage}, {"inspect", inspectUsage}, {"audit", auditUsage}, {"show", showUsage}, {"maintain", maintainUsage},
	} {
		fmt.Fprintf(&b, "\n## cdcetl %s\n\n```text\n%s```\n", c.name, strings.TrimLeft(c.usage, "\n"))
		if c.name == "convert" {
			var o convertOpts
			b.WriteString("\n### Flags of convert and watch\n\n| flag | what it does | default |\n| --- | --- | --- |\n")
			watchFlags(&o).VisitAll(func(f *flag.Flag) {
				name, usage := flag.UnquoteUsage(f)
				flagName := "--" + f.Name
				if len(f.Name) == 1 {
					flagName = "-" + f.Name
				}
				if name != "" {
					flagName += " " + name
				}
				def := f.DefValue
				switch {
				case f.Name == "workers":
					def = "the number of cores" // runtime.NumCPU(): not this machine's
				case def == "" || def == "false" || def == "0" || def == "[]":
					def = ""
				default:
					def = "`" + def + "`"
				}
				fmt.Fprintf(&b, "| `%s` | %s | %s |\n", flagName, cell(usage), def)
			})
		}
	}
	b.WriteString("\n## Format options\n\nWritten with the format's prefix, as in Flink DDL (`--option canal-json.ignore-parse-errors=true`).\n\n| option | default | formats | what it does |\n| --- | --- | --- | --- |\n")
	for _, o := range formatOptions() {
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", o.key, o.def, o.formats, cell(o.doc))
	}
	b.WriteString("\n## Metadata columns\n\n`name TYPE METADATA FROM 'key' VIRTUAL`, the type as listed (timestamps may be declared at any precision).\n")
	for _, f := range decode.Formats() {
		if len(f.Metadata) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n### %s\n\n| key | type | what it holds |\n| --- | --- | --- |\n", f.Name)
		for _, m := range f.Metadata {
			fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", m.Key, m.Type, cell(m.Doc))
		}
	}
	b.WriteString("\n### every format (Flink's filesystem connector keys)\n\n| key | type | what it holds |\n| --- | --- | --- |\n")
	for _, m := range decode.FileMetadata {
		fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", m.Key, m.Type, cell(m.Doc))
	}
	return b.String()
}

// cell makes text fit in a Markdown table cell.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}
