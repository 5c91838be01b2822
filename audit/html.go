package audit

import (
	"bytes"
	"fmt"
	"html/template"
	"net/url"
	"path/filepath"
	"strings"
	"time"
)

// HTML renders the report as one self-contained page: no script, no
// network; inline CSS and SVG. Per table an event-time timeline (events
// per hour, gaps and quiet periods marked), counts by kind, and the
// lists of gaps, duplicates and order with their file:line.
func (r *Report) HTML() ([]byte, error) {
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, r.view()); err != nil {
		return nil, fmt.Errorf("html: %w", err)
	}
	return b.Bytes(), nil
}

type pageView struct {
	*Report
	Verdict string
	OK      bool
	Tables  []tableView
	Created string
	Summary string
}

type tableView struct {
	ID     string
	Stream string
	Table
	Chart template.HTML
	Gaps  int
}

func (r *Report) view() pageView {
	v := pageView{Report: r, OK: r.GapsFound == 0, Verdict: "No gap found", Created: time.Now().UTC().Format(time.RFC3339)}
	if !v.OK {
		v.Verdict = plural(r.GapsFound, "gap", "gaps") + " found"
	}
	v.Summary = plural(int64(len(r.Coverage.Files)), "file", "files") + " · " + plural(int64(len(r.Coverage.Streams)), "stream", "streams")
	tables := 0
	for _, s := range r.Coverage.Streams {
		tables += len(s.Tables)
	}
	v.Summary += " · " + plural(int64(tables), "table", "tables") + " · " + plural(r.Coverage.Messages, "change message", "change messages")
	n := 0
	for _, s := range r.Coverage.Streams {
		for _, t := range s.Tables {
			n++
			marks := r.gapsOf(s.Name, t)
			v.Tables = append(v.Tables, tableView{ID: fmt.Sprintf("t%d", n), Stream: s.Name, Table: t, Gaps: len(marks),
				Chart: timeline(t, marks, r.quietOf(s.Name, t.Table))})
		}
	}
	return v
}

// gapsOf are the gaps to mark on a table's timeline: those naming it, and
// the stream-wide ones found in its files.
func (r *Report) gapsOf(stream string, t Table) []Gap {
	files := map[string]bool{}
	for _, f := range t.Files {
		files[f] = true
	}
	var out []Gap
	for _, g := range r.Gaps {
		switch {
		case g.Table != "":
			if g.Table == t.Table || strings.HasSuffix(g.Table, "."+t.Table) {
				out = append(out, g)
			}
		case g.Before != nil && files[g.Before.File], g.After != nil && files[g.After.File]:
			out = append(out, g)
		}
	}
	return out
}

func (r *Report) quietOf(stream, table string) []Quiet {
	var out []Quiet
	for _, q := range r.Quiet {
		if q.Stream == stream && q.Table == table {
			out = append(out, q)
		}
	}
	return out
}

// timeline draws a table's events per hour as bars, gaps as red bands
// (from the event before to the event after) and quiet periods as amber
// ones.
func timeline(t Table, gaps []Gap, quiet []Quiet) template.HTML {
	if t.HoursStart == nil || len(t.Hours) == 0 {
		return template.HTML(`<p class="muted">No event times: no timeline.</p>`)
	}
	const w, h, left, bottom = 960.0, 140.0, 40.0, 20.0
	hours := len(t.Hours)
	bin := (hours + 479) / 480 // at most 480 bars
	var bins []int64
	for i := 0; i < hours; i += bin {
		var s int64
		for j := i; j < min(i+bin, hours); j++ {
			s += t.Hours[j]
		}
		bins = append(bins, s)
	}
	var peak int64 = 1
	for _, c := range bins {
		peak = max(peak, c)
	}
	start := *t.HoursStart
	span := float64(hours) * float64(time.Hour)
	x := func(tm time.Time) float64 {
		f := float64(tm.Sub(start)) / span
		return left + max(0, min(1, f))*(w-left)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="timeline" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s: events per hour">`, w, h+bottom, template.HTMLEscapeString(t.Table))
	for _, q := range quiet {
		x0, x1 := x(q.From), x(q.To)
		fmt.Fprintf(&b, `<rect class="quiet" x="%.1f" y="0" width="%.1f" height="%.0f"><title>quiet: %d hours from %s</title></rect>`,
			x0, max(1.5, x1-x0), h, q.Hours, q.From.Format(time.RFC3339))
	}
	bw := (w - left) / float64(len(bins))
	for i, c := range bins {
		if c == 0 {
			continue
		}
		bh := float64(c) / float64(peak) * (h - 4)
		from := start.Add(time.Duration(i*bin) * time.Hour)
		fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.2f" height="%.1f"><title>%s: %d events</title></rect>`,
			left+float64(i)*bw, h-bh, max(0.6, bw-0.3), bh, from.Format("2006-01-02 15:04"), c)
	}
	for _, g := range gaps {
		if g.BeforeTime == nil && g.AfterTime == nil {
			continue
		}
		a, z := g.BeforeTime, g.AfterTime
		if a == nil {
			a = z
		}
		if z == nil {
			z = a
		}
		x0, x1 := x(*a), x(*z)
		if x1 < x0 {
			x0, x1 = x1, x0
		}
		fmt.Fprintf(&b, `<rect class="gap" x="%.1f" y="0" width="%.1f" height="%.0f"><title>%s</title></rect>`,
			x0-1, max(2.5, x1-x0+2), h, template.HTMLEscapeString(g.Kind+": "+g.What))
	}
	fmt.Fprintf(&b, `<line class="axis" x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f"/>`, left, h, w, h)
	fmt.Fprintf(&b, `<text x="%.0f" y="12" class="label" text-anchor="end">%d</text>`, left-4, peak)
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" class="label">%s</text>`, left, h+15, start.Format("2006-01-02 15:04"))
	end := start.Add(time.Duration(hours) * time.Hour)
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" class="label" text-anchor="end">%s UTC</text>`, w, h+15, end.Format("2006-01-02 15:04"))
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// fileHref links a local file (file: URL); other places (buckets) are
// shown as text.
func fileHref(l *Loc) template.URL {
	if l == nil || strings.Contains(l.File, "://") {
		return ""
	}
	abs, err := filepath.Abs(l.File)
	if err != nil {
		return ""
	}
	return template.URL((&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String())
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"href": fileHref,
	"time": func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.Format("2006-01-02 15:04:05")
	},
	"rfc": func(t time.Time) string { return t.Format("2006-01-02 15:04") },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>cdcetl audit: {{.Verdict}}</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2430;background:#f6f7f9}
header{padding:20px 32px;color:#fff;background:{{if .OK}}#1f7a4d{{else}}#b3261e{{end}}}
header h1{margin:0;font-size:24px}header p{margin:4px 0 0;opacity:.9}
main{padding:8px 32px 40px;max-width:1100px}
section{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:14px 18px;margin:16px 0}
h2{font-size:17px;margin:0 0 10px}h3{font-size:15px;margin:0 0 6px}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #eceff2;vertical-align:top}
th{color:#56606d;font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums}
.kind{font-family:ui-monospace,monospace;font-size:12px;background:#fde7e6;color:#8c1d18;padding:1px 6px;border-radius:3px}
a{color:#0b57d0;text-decoration:none}a:hover{text-decoration:underline}
code,.loc{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px;word-break:break-all}
.muted{color:#6b7480}.counts span{display:inline-block;margin-right:14px}
svg.timeline{width:100%;height:auto;display:block;margin:6px 0}
.bar{fill:#3b6fb6}.gap{fill:#d93025;opacity:.75}.quiet{fill:#f4b400;opacity:.35}.axis{stroke:#9aa3ad}.label{font-size:11px;fill:#56606d}
.legend span{margin-right:16px;font-size:12px}.sw{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:-1px}
</style></head>
<body>
<header><h1>{{.Verdict}}</h1>
<p>{{.Summary}} · audited {{.Created}}</p></header>
<main>
{{if .Gaps}}<section id="gaps"><h2>Gaps ({{len .Gaps}})</h2>
<table><tr><th>kind</th><th>where</th><th>what is missing</th><th class="n">missing</th><th>before</th><th>after</th></tr>
{{range .Gaps}}<tr><td><span class="kind">{{.Kind}}</span></td><td>{{.Stream}}{{if .Table}}<br>{{.Table}}{{end}}</td><td>{{.What}}</td><td class="n">{{.Missing}}</td>
<td>{{with .Before}}<a class="loc" href="{{href .}}">{{.File}}:{{.Line}}</a>{{end}}<br><span class="muted">{{time .BeforeTime}}</span></td>
<td>{{with .After}}<a class="loc" href="{{href .}}">{{.File}}:{{.Line}}</a>{{end}}<br><span class="muted">{{time .AfterTime}}</span></td></tr>
{{end}}</table></section>{{end}}
<section id="tables"><h2>Tables</h2>
<p class="legend"><span><i class="sw" style="background:#3b6fb6"></i>events per hour</span><span><i class="sw" style="background:#d93025"></i>gap</span><span><i class="sw" style="background:#f4b400;opacity:.6"></i>quiet period (heuristic)</span></p>
{{range .Tables}}<div id="{{.ID}}" style="margin:18px 0 8px"><h3>{{.Table.Table}} <span class="muted">· {{.Stream}}{{if .Gaps}} · {{.Gaps}} gaps{{end}}</span></h3>
<div class="counts"><span>{{.Messages}} messages</span><span>+I {{index .Rows 0}}</span><span>-U {{index .Rows 1}}</span><span>+U {{index .Rows 2}}</span><span>-D {{index .Rows 3}}</span><span class="muted">{{len .Files}} files</span></div>
{{.Chart}}
<div class="muted">events {{time .FirstEvent}} .. {{time .LastEvent}}{{if .FirstPosition}} · positions <code>{{.FirstPosition}}</code> .. <code>{{.LastPosition}}</code>{{end}}</div></div>
{{end}}</section>
{{if .Duplicates.Messages}}<section id="duplicates"><h2>Duplicates: {{.Duplicates.Messages}} messages ({{.Duplicates.Rows}} rows)</h2>
{{if .Duplicates.Files}}<table><tr><th>file</th><th class="n">messages seen before</th><th>first seen in</th></tr>
{{range .Duplicates.Files}}<tr><td class="loc">{{.File}}</td><td class="n">{{.Messages}}{{if .Whole}} (all){{end}}</td><td class="loc">{{.Of}}</td></tr>{{end}}</table>{{end}}
{{if .Duplicates.Samples}}<h3 style="margin-top:12px">Examples</h3><table><tr><th>table</th><th>kind</th><th>position</th><th>copy</th><th>first</th></tr>
{{range .Duplicates.Samples}}<tr><td>{{.Table}}</td><td>{{.Kind}}</td><td><code>{{.Position}}</code></td><td class="loc">{{.Copy.File}}:{{.Copy.Line}}</td><td class="loc">{{.First.File}}:{{.First.Line}}</td></tr>{{end}}</table>{{end}}
</section>{{end}}
{{if .Order}}<section id="order"><h2>Order: source positions going backwards</h2>
<table><tr><th>table</th><th class="n">times</th><th>first places</th></tr>
{{range .Order}}<tr><td>{{.Table}}<br><span class="muted">{{.Stream}}</span></td><td class="n">{{.Count}}</td><td>{{range .Samples}}<div class="loc">{{.At.File}}:{{.At.Line}} <code>{{.Position}}</code> after {{.Previous.File}}:{{.Previous.Line}} <code>{{.PreviousPosition}}</code></div>{{end}}</td></tr>{{end}}</table></section>{{end}}
{{if .Quiet}}<section id="quiet"><h2>Quiet periods <span class="muted">(heuristic)</span></h2>
<table><tr><th>table</th><th>from</th><th class="n">hours</th><th class="n">events before / after</th></tr>
{{range .Quiet}}<tr><td>{{.Table}}</td><td>{{rfc .From}} UTC</td><td class="n">{{.Hours}}</td><td class="n">{{.Before}} / {{.After}}</td></tr>{{end}}</table></section>{{end}}
{{if .Notes}}<section id="notes"><h2>Notes</h2><ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul></section>{{end}}
<section id="files"><h2>Files ({{len .Coverage.Files}})</h2>
<table><tr><th>file</th><th>format</th><th class="n">lines</th><th class="n">messages</th><th class="n">duplicates</th><th class="n">unreadable</th></tr>
{{range .Coverage.Files}}<tr><td class="loc">{{.Path}}</td><td>{{.Format}}</td><td class="n">{{.Lines}}</td><td class="n">{{.Messages}}</td><td class="n">{{.Duplicates}}</td><td class="n">{{.Unreadable}}</td></tr>{{end}}</table></section>
</main></body></html>
`))
