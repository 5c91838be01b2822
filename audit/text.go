package audit

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// WriteText writes the report for a person: the verdict first, then the
// gaps, duplicates, order and quiet periods with their places, then the
// coverage per stream and table.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	files, tables := len(r.Coverage.Files), 0
	for _, s := range r.Coverage.Streams {
		tables += len(s.Tables)
	}
	verdict := "no gap found"
	if r.GapsFound > 0 {
		verdict = plural(r.GapsFound, "GAP", "GAPS") + " found"
	}
	fmt.Fprintf(&b, "audit: %s, %s, %s, %s: %s\n", plural(int64(files), "file", "files"), plural(int64(len(r.Coverage.Streams)), "stream", "streams"),
		plural(int64(tables), "table", "tables"), plural(r.Coverage.Messages, "change message", "change messages"), verdict)

	if len(r.Gaps) > 0 {
		fmt.Fprintf(&b, "\ngaps (%d):\n", r.GapsFound)
		for _, g := range r.Gaps {
			where := g.Stream
			if g.Table != "" {
				where += ", " + g.Table
			}
			fmt.Fprintf(&b, "  %-14s %s: %s\n", g.Kind, where, g.What)
			if g.Before != nil && g.After != nil && *g.Before == *g.After {
				fmt.Fprintf(&b, "  %-14s at %s\n", "", g.Before)
			} else {
				fmt.Fprintf(&b, "  %-14s between %s and %s\n", "", g.Before, g.After)
			}
		}
	}
	d := r.Duplicates
	if d.Messages > 0 {
		fmt.Fprintf(&b, "\nduplicates: %s (%s) seen before in the archive\n", plural(d.Messages, "message", "messages"), plural(d.Rows, "row", "rows"))
		for _, f := range d.Files {
			if f.Whole {
				fmt.Fprintf(&b, "  %s: every message (%d) repeats %s\n", f.File, f.Messages, f.Of)
			} else {
				fmt.Fprintf(&b, "  %s: %d messages, most first seen in %s\n", f.File, f.Messages, f.Of)
			}
		}
		whole := map[string]bool{}
		for _, f := range d.Files {
			whole[f.File] = f.Whole
		}
		shown := 0
		for _, s := range d.Samples {
			if whole[s.Copy.File] {
				continue // said of the whole file above
			}
			if shown++; shown > 5 {
				fmt.Fprintf(&b, "  ... (--json lists up to %d)\n", len(d.Samples))
				break
			}
			fmt.Fprintf(&b, "  %s %s %s at %s, first at %s\n", s.Table, s.Kind, s.Position, s.Copy.String(), s.First.String())
		}
	}
	if d.Unchecked > 0 {
		fmt.Fprintf(&b, "\n%s without a source position: not checked for duplicates\n", plural(d.Unchecked, "change message", "change messages"))
	}
	if len(r.Order) > 0 {
		fmt.Fprintf(&b, "\norder: source positions going backwards\n")
		for _, o := range r.Order {
			fmt.Fprintf(&b, "  %s, %s: %s\n", o.Stream, o.Table, plural(o.Count, "time", "times"))
			for _, s := range o.Samples {
				fmt.Fprintf(&b, "    %s at %s after %s at %s\n", s.Position, s.At.String(), s.PreviousPosition, s.Previous.String())
			}
		}
	}
	if len(r.Quiet) > 0 {
		fmt.Fprintf(&b, "\nquiet periods (a heuristic: hours without events between busy hours):\n")
		for _, q := range r.Quiet {
			fmt.Fprintf(&b, "  %s, %s: %s from %s (%d events the hour before, %d after)\n", q.Stream, q.Table,
				plural(int64(q.Hours), "hour", "hours"), q.From.Format(time.RFC3339), q.Before, q.After)
		}
	}
	if len(r.Notes) > 0 {
		fmt.Fprintf(&b, "\nnotes:\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "  %s\n", n)
		}
	}
	fmt.Fprintf(&b, "\ncoverage:\n")
	if r.Coverage.AfterCut > 0 {
		fmt.Fprintf(&b, "  %s after --as-of left out\n", plural(r.Coverage.AfterCut, "message", "messages"))
	}
	for _, s := range r.Coverage.Streams {
		fmt.Fprintf(&b, "  stream %s: %s\n", s.Name, spanText(s.Span))
		for _, t := range s.Tables {
			fmt.Fprintf(&b, "    %s: %s; %s", t.Table, spanText(t.Span), plural(int64(len(t.Files)), "file", "files"))
			if n := len(t.Files); n > 0 {
				fmt.Fprintf(&b, " (%s", t.Files[0])
				if n > 1 {
					fmt.Fprintf(&b, " .. %s", t.Files[n-1])
				}
				b.WriteString(")")
			}
			b.WriteString("\n")
		}
	}
	for _, f := range r.Coverage.Files {
		if f.Unreadable > 0 {
			fmt.Fprintf(&b, "  %s: %s, %d lines, %d unreadable\n", f.Path, f.Format, f.Lines, f.Unreadable)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func spanText(s Span) string {
	out := fmt.Sprintf("%d messages; rows +I %d, -U %d, +U %d, -D %d", s.Messages, s.Rows[0], s.Rows[1], s.Rows[2], s.Rows[3])
	if len(s.Control) > 0 {
		keys := make([]string, 0, len(s.Control))
		for k := range s.Control {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out += "; control"
		for _, k := range keys {
			out += fmt.Sprintf(" %s %d", k, s.Control[k])
		}
	}
	if s.FirstEvent != nil {
		out += fmt.Sprintf("; events %s .. %s", s.FirstEvent.Format(time.RFC3339Nano), s.LastEvent.Format(time.RFC3339Nano))
	}
	if s.FirstPosition != "" {
		out += fmt.Sprintf("; positions %s .. %s", s.FirstPosition, s.LastPosition)
	}
	return out
}
