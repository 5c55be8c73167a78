package render

import (
	"bytes"
	"html/template"
	"io"

	"github.com/stdiff/stdiff/canon/htmlpage"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/hash/dupes"
)

// htmlGroup is a group as the page shows it.
type htmlGroup struct {
	Heading string
	Keeper  bool // the first member is the copy to keep
	Members []htmlMember
}

type htmlMember struct {
	Path, Size, What string
}

// writeHTML writes the report as one page (Write); knobs are named as knobs says.
func writeHTML(w io.Writer, r *dupes.Report, knobs Knobs) error {
	groups := make([]htmlGroup, len(r.Groups))
	for i, g := range r.Groups {
		hg := htmlGroup{Heading: heading(g, func(s string) string { return s }, knobs), Keeper: g.Keeper != ""}
		for k, m := range g.Members {
			hg.Members = append(hg.Members, htmlMember{Path: m.Path, Size: textfmt.Bytes(uint64(m.Size)), What: describe(g, k, true, textfmt.Escape, knobs)})
		}
		groups[i] = hg
	}
	var body bytes.Buffer
	err := dupesTemplate.Execute(&body, struct {
		Groups  []htmlGroup
		Skipped []dupes.Skipped
		Summary string
	}{groups, r.Skipped, summary(r)})
	if err != nil {
		return err
	}
	return htmlpage.Write(w, htmlpage.Page{Title: "stdiff dupes: " + textfmt.Plural(len(r.Groups), "group"), Body: template.HTML(body.String())})
}

var dupesTemplate = template.Must(template.New("dupes").Parse(`
<p>{{.Summary}}</p>
{{range .Groups}}<section>
<h2>{{.Heading}}</h2>
<table><tbody>{{$keep := .Keeper}}{{range $i, $m := .Members}}<tr><td class="num">{{if and $keep (eq $i 0)}}<strong class="good">keep</strong>{{end}}</td><td class="mono">{{$m.Path}}</td><td class="num">{{$m.Size}}</td><td>{{$m.What}}</td></tr>
{{end}}</tbody></table>
</section>
{{end}}{{if .Skipped}}<h2>dupes.Skipped</h2><ul>{{range .Skipped}}<li><span class="mono">{{.Path}}</span>: {{.Reason}}</li>{{end}}</ul>{{end}}
`))
