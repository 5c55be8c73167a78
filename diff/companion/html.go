package companion

import (
	"bytes"
	htmltemplate "html/template"
	"sync"

	"github.com/stdiff/stdiff/diff/linediff"
)

// htmlKey is a key change as the page shows it.
type htmlKey struct {
	KeyChange
	Shown []linediff.Line // Lines folded
}

// htmlChange is a changed file as the page shows it.
type htmlChange struct {
	Change
	HTMLKeys     []htmlKey
	Settings     []htmlKey
	Shown        []linediff.Line // Lines folded
	TokenizerSay []string        // tokenizerText's lines
}

// HTML renders the changes for the HTML diff page: a section with a list of the files (removed,
// added, changed) and under each changed file its keys (path, old → new, or a line diff), its line
// diff with unchanged runs folded to context lines, or what changed in its tokenizer. Every name and
// value is escaped by html/template. A report without changes gives "".
func (r *Report) HTML(context int) (htmltemplate.HTML, error) {
	if !r.Differs() {
		return "", nil
	}
	keys := func(ks []KeyChange) []htmlKey {
		out := make([]htmlKey, 0, min(len(ks), maxKeys))
		for i, k := range ks {
			if i == maxKeys {
				break
			}
			h := htmlKey{KeyChange: k}
			if k.Lines != nil {
				h.Shown = linediff.Fold(k.Lines, context)
			}
			out = append(out, h)
		}
		return out
	}
	changes := make([]htmlChange, len(r.Changed))
	for i, c := range r.Changed {
		h := htmlChange{Change: c, HTMLKeys: keys(c.Keys)}
		if c.Lines != nil {
			h.Shown = linediff.Fold(c.Lines, context)
		}
		if c.Tokenizer != nil {
			h.TokenizerSay = tokenizerText(c.Tokenizer)
			h.Settings = keys(c.Tokenizer.Settings)
		}
		changes[i] = h
	}
	var b bytes.Buffer
	err := htmlTemplate().Execute(&b, struct {
		*Report
		Heading string
		Changes []htmlChange
		MaxKeys int
	}{r, Heading, changes, maxKeys})
	return htmltemplate.HTML(b.String()), err
}

// htmlTemplate is the section's template, parsed at its first use.
var htmlTemplate = sync.OnceValue(func() *htmltemplate.Template {
	return htmltemplate.Must(htmltemplate.New("companions").Parse(`<h2>Files beside the tensors</h2>
<table><thead><tr><th></th><th>file</th><th>change</th></tr></thead><tbody>
{{range .Removed}}<tr><td class="bad">−</td><td class="mono">{{.Path}}</td><td class="bad">removed</td></tr>
{{end}}{{range .Added}}<tr><td class="good">+</td><td class="mono">{{.Path}}</td><td class="good">added</td></tr>
{{end}}{{range .Changes}}<tr><td>~</td><td class="mono">{{.Path}}</td><td>{{if .Keys}}{{len .Keys}} keys changed{{else}}changed{{end}}</td></tr>
{{end}}</tbody></table>
{{range .Changes}}<h3 class="mono">{{.Path}}</h3>
{{if .Tokenizer}}<ul>{{range .TokenizerSay}}<li class="mono">{{.}}</li>{{end}}</ul>{{if .Settings}}<p>settings:</p>{{template "keys" .Settings}}{{end}}
{{else if .Keys}}{{template "keys" .HTMLKeys}}{{if gt (len .Keys) $.MaxKeys}}<p class="muted">… and {{len .Keys}} keys in all (the JSON report lists every one)</p>{{end}}
{{else if .Lines}}{{template "lines" .Shown}}
{{else if and (eq (print .Kind) "json") (not .Detail)}}<p class="muted">the same JSON value, formatted otherwise</p>
{{else}}<p class="muted">{{.Detail}}</p>
{{end}}{{end}}
{{define "keys"}}<table><tbody>{{range .}}<tr><td class="mono">{{if .Path}}{{.Path}}{{else}}(the whole file){{end}}</td><td>{{if eq .Change "added"}}<span class="good">+ {{.New}}</span>{{else if eq .Change "removed"}}<span class="bad">− {{.Old}}</span>{{else if .Lines}}{{template "lines" .Shown}}{{else}}<span class="bad">{{.Old}}</span> → <span class="good">{{.New}}</span>{{end}}</td></tr>
{{end}}</tbody></table>{{end}}
{{define "lines"}}<pre>{{range .}}<span class="{{if eq .Op "-"}}bad{{else if eq .Op "+"}}good{{else}}muted{{end}}">{{.Op}} {{.Text}}</span>
{{end}}</pre>{{end}}`))
})
