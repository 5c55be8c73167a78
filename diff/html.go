package diff

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	"io"
	"math"
	"strings"
	"sync"

	"github.com/stdiff/stdiff/canon/htmlpage"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/diff/linediff"
)

// htmlChange is a changed tensor as the page's table shows it.
type htmlChange struct {
	Change
	What   string  // old → new, for the fields that changed but data
	RelL2  float64 // -1 when not compared by value
	Bar    int     // the bar's width in percent of the largest rel L2
	Stats  string  // the values as the text says them (rounding verdict, NaN, Inf), max |a−b|, cosine, share differing
	Sorted string  // RelL2 as a sortable key; above every rel L2 for a tensor with new NaN or Inf
	// NewNaN says how many NaN and Inf appeared ("5 new NaN"), for a tensor whose old side had
	// none: its row stands out and sorts first, whatever its rel L2 (computed over finite values).
	NewNaN string
	// Rounding is the exact-rounding verdict of a comparison across dtypes ("" when none was checked),
	// and RoundingExact whether it holds.
	Rounding      string
	RoundingExact bool
}

// writeHTML writes the report as one page (Write), its notes' messages filled in (withMessages).
func writeHTML(w io.Writer, r *Report) error {
	changes := make([]htmlChange, len(r.Tensors.Changed))
	top := 0.0
	for i, c := range r.Tensors.Changed {
		h := htmlChange{Change: c, RelL2: -1}
		var parts []string
		for _, f := range c.Fields {
			switch f {
			case "dtype":
				parts = append(parts, c.Old.DType+" → "+c.New.DType)
			case "shape":
				parts = append(parts, shapeString(c.Old.Shape)+" → "+shapeString(c.New.Shape))
			case "bytes":
				parts = append(parts, textfmt.Bytes(c.Old.Bytes)+" → "+textfmt.Bytes(c.New.Bytes))
			case "data":
				parts = append(parts, "values")
			}
		}
		h.What = strings.Join(parts, ", ")
		if v := c.Values; v != nil {
			if !math.IsNaN(v.RelL2) && !math.IsInf(v.RelL2, 0) {
				h.RelL2 = v.RelL2
				top = max(top, v.RelL2)
			}
			h.Stats = fmt.Sprintf("max |a−b| %.3g · cos %.6f · %.1f%% differ", v.MaxAbsDiff, v.Cosine, 100*v.DiffFraction)
			if nf := v.NonFinite(); nf != "" {
				h.Stats = nf + " · " + h.Stats
			}
			h.NewNaN = v.NewNonFinite()
			h.Rounding, h.RoundingExact = roundingText(v), v.ExactRounding != nil && *v.ExactRounding
		}
		changes[i] = h
	}
	for i := range changes {
		changes[i].Sorted = fmt.Sprintf("%.9g", changes[i].RelL2)
		if changes[i].NewNaN != "" {
			changes[i].Sorted = "1e300" // new NaN or Inf first when sorted by rel L2, most changed first
		}
		if top > 0 && changes[i].RelL2 > 0 {
			changes[i].Bar = max(1, int(100*changes[i].RelL2/top))
		}
	}
	verdict := "identical"
	if !r.Identical {
		verdict = "different"
	}
	companions, err := r.Companions.HTML(2)
	if err != nil {
		return err
	}
	var body bytes.Buffer
	err = diffTemplate().Execute(&body, struct {
		*Report
		Says       string
		Changes    []htmlChange
		GGUFSource *htmlSource
		Files      htmltemplate.HTML // the companion files' section (package diff/companion)
	}{r, verdict, changes, newHTMLSource(r), companions})
	if err != nil {
		return err
	}
	return htmlpage.Write(w, htmlpage.Page{Title: "stdiff: " + r.A + " → " + r.B, Body: htmltemplate.HTML(body.String())})
}

func shapeString(s []uint64) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// diffTemplate is the page's body, parsed at its first use (not at every start of stdiff).
var diffTemplate = sync.OnceValue(func() *htmltemplate.Template {
	return htmltemplate.Must(htmltemplate.New("diff").Funcs(htmltemplate.FuncMap{"fold": func(l []linediff.Line) []linediff.Line { return linediff.Fold(l, 2) }}).Parse(`
<p><strong class="{{if .Identical}}good{{else}}bad{{end}}">{{.Says}}</strong>{{range .Categories}} <code>{{.}}</code>{{end}}</p>
<p class="muted">tensors: {{len .Tensors.Changed}} changed, {{len .Tensors.Added}} added, {{len .Tensors.Removed}} removed, {{len .Tensors.Renamed}} renamed, {{.Tensors.Unchanged}} unchanged · metadata: {{len .Metadata.Changed}} changed, {{len .Metadata.Added}} added, {{len .Metadata.Removed}} removed{{if .Verdict.Changed}} · <span class="bad">the reference reader's verdict changed</span>{{end}}</p>
{{if .Changes}}<h2>Changed tensors</h2>
<table><thead><tr><th><button type="button" data-sort="name" data-list="changed">tensor</button></th><th>what changed</th><th><button type="button" data-sort="rel" data-list="changed">rel L2</button></th><th>values</th></tr></thead>
<tbody id="changed">{{range .Changes}}<tr data-name="{{.Name}}" data-rel="{{.Sorted}}"{{if .NewNaN}} class="alarm" data-new-nan="{{.NewNaN}}"{{end}}><td class="mono">{{.Name}}{{if .NameB}} <span class="muted">as {{.NameB}}{{if and .Transform (ne (print .Transform) "none")}}, {{.Transform}} undone{{end}}</span>{{end}}</td><td>{{.What}}</td><td class="num">{{if .NewNaN}}<strong class="bad">{{.NewNaN}}</strong>{{if ge .RelL2 0.0}}<br><span class="muted">finite: {{printf "%.3g" .RelL2}}</span>{{end}}{{else if ge .RelL2 0.0}}{{printf "%.3g" .RelL2}} <span class="barbox" aria-hidden="true"><span class="bar" style="width:{{.Bar}}%"></span></span>{{else}}—{{end}}</td><td>{{if .Rounding}}<span class="{{if .RoundingExact}}good{{else}}bad{{end}}">{{.Rounding}}</span> · {{end}}{{.Stats}}</td></tr>
{{end}}</tbody></table>{{end}}
{{if .Tensors.Added}}<h2>Added</h2><ul>{{range .Tensors.Added}}<li class="mono">{{.Name}} <span class="muted">{{.DType}}</span></li>{{end}}</ul>{{end}}
{{if .Tensors.Removed}}<h2>Removed</h2><ul>{{range .Tensors.Removed}}<li class="mono">{{.Name}} <span class="muted">{{.DType}}</span></li>{{end}}</ul>{{end}}
{{if .Tensors.Renamed}}<h2>Renamed</h2><ul>{{range .Tensors.Renamed}}<li class="mono">{{.From}} → {{.To}}</li>{{end}}</ul>{{end}}
{{with .GGUFSource}}<h2>GGUF source</h2>
<p><span class="mono">{{.Arch}}</span>, paired through {{.NameMap}} · config {{if .Config}}<span class="mono">{{.Config}}</span>{{else}}<span class="bad">no config.json beside the source: head counts from the GGUF, no key compared</span>{{end}}</p>
<p>pairs {{.Counts}}{{if .Undone}} · undone: {{.Undone}}{{end}}</p>
{{if gt (len .Types) 1}}<table><thead><tr>{{range index .Types 0}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range slice .Types 1}}<tr>{{range $i, $c := .}}<td{{if $i}} class="num"{{else}} class="mono"{{end}}>{{$c}}</td>{{end}}</tr>{{end}}</tbody></table>{{end}}
{{if .Changes}}<h3>Pairs that differ</h3>
<table><thead><tr><th>a</th><th>b</th><th>differs</th><th>transform</th><th>values match under</th></tr></thead>
<tbody>{{range .Changes}}<tr><td class="mono">{{index . 0}}</td><td class="mono">{{index . 1}}</td><td>{{index . 2}}</td><td>{{index . 3}}</td><td{{if index . 4}} class="bad"{{end}}>{{index . 4}}</td></tr>
{{end}}</tbody></table>{{end}}
{{if .Mismatches}}<h3>config.json restated otherwise</h3>
<table><thead><tr><th>GGUF key</th><th>config.json key</th><th>GGUF</th><th>config.json</th></tr></thead>
<tbody>{{range .Mismatches}}<tr><td class="mono">{{.Key}}</td><td class="mono">{{.ConfigKey}}</td><td class="bad">{{.GGUF}}</td><td class="good">{{.Config}}</td></tr>{{end}}</tbody></table>{{end}}
{{end}}{{if or .Metadata.Changed .Metadata.Added .Metadata.Removed}}<h2>Metadata</h2>
<table><tbody>{{range .Metadata.Removed}}<tr><td class="mono">{{.Key}}</td><td class="bad">− {{.Value}}</td></tr>{{end}}
{{range .Metadata.Added}}<tr><td class="mono">{{.Key}}</td><td class="good">+ {{.Value}}</td></tr>{{end}}
{{range .Metadata.Changed}}<tr><td class="mono">{{.Key}}</td><td>{{if .Lines}}<pre>{{range .Lines}}<span class="{{if eq .Op "-"}}bad{{else if eq .Op "+"}}good{{else}}muted{{end}}">{{.Op}} {{.Text}}</span>
{{end}}</pre>{{else}}<span class="bad">{{.Old}}</span> → <span class="good">{{.New}}</span>{{end}}{{with .Prompt}}{{if .Lines}}<p class="muted">prompt diff (rendered on a fixed conversation; ⏎ ends a line)</p><pre>{{range fold .Lines}}<span class="{{if eq .Op "-"}}bad{{else if eq .Op "+"}}good{{else}}muted{{end}}">{{.Op}} {{.Text}}</span>
{{end}}</pre>{{else if .Same}}<p class="muted">prompt unchanged (both render the same on a fixed conversation)</p>{{end}}{{end}}</td></tr>{{end}}</tbody></table>{{end}}
{{.Files}}
{{if .Notes}}<h2>Notes</h2><ul>{{range .Notes}}<li><code>{{.Code}}</code> {{.Message}}</li>{{end}}</ul>{{end}}
`))
})
