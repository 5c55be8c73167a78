package check

import (
	"bytes"
	"html/template"
	"io"
	"sync"

	"github.com/stdiff/stdiff/canon/htmlpage"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// writeHTML writes the report as one page: per model its verdict and every finding kept (severity,
// code, byte offset, message, hint).
func writeHTML(w io.Writer, r *Report) error {
	var body bytes.Buffer
	if err := checkTemplate().Execute(&body, r); err != nil {
		return err
	}
	return htmlpage.Write(w, htmlpage.Page{Title: "stdiff check: " + textfmt.Plural(len(r.Files), "model"), Body: template.HTML(body.String())})
}

// checkTemplate is the page's body, parsed at its first use (not at every start of stdiff).
var checkTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("check").Parse(`
{{range .Files}}<section>
<h2 class="mono">{{.Path}}</h2>
<p>{{if .Error}}<strong class="bad">unreadable</strong>: {{.Error}}{{else if .Valid}}<strong class="good">valid</strong>{{else}}<strong class="bad">invalid</strong>{{with .ReferenceError}}: <code>{{.Kind}}</code> {{.Message}}{{end}}{{end}}</p>
{{if .Findings}}<table><thead><tr><th>severity</th><th>code</th><th>byte</th><th>what</th></tr></thead><tbody>
{{range .Findings}}<tr><td class="{{if eq .Severity "error"}}bad{{else if eq .Severity "warning"}}warn{{else}}muted{{end}}">{{.Severity}}</td><td><code>{{.Code}}</code></td><td class="num">{{if ge .Offset 0}}{{.Offset}}{{else}}—{{end}}</td><td>{{.Message}}{{if .Hint}}<br><span class="muted">hint: {{.Hint}}</span>{{end}}</td></tr>
{{end}}</tbody></table>{{end}}
</section>
{{end}}`))
})
