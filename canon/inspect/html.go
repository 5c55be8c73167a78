package inspect

import (
	"bytes"
	"html/template"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/stdiff/stdiff/canon/htmlpage"
	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// galleryCard is a Row as the gallery shows it.
type galleryCard struct {
	Row
	Image    template.URL // a path relative to the page, or a checked data: URL
	Base     string       // the base model as people name it: lora.NormalBase of BaseModel, else the family
	What     string       // kind · family · rank
	Verdict  string
	Bad      bool
	CivitAI  template.URL
	SizeText string
}

// writeShortHTML writes `inspect --short` as a gallery (WriteShort), its preview images referenced
// relative to dir.
func writeShortHTML(w io.Writer, r *ShortReport, dir string) error {
	cards := make([]galleryCard, len(r.Files))
	var bases, kinds []string
	for i, f := range r.Files {
		c := galleryCard{Row: f, SizeText: textfmt.Bytes(uint64(f.Size))}
		c.Base = lora.NormalBase(f.BaseModel)
		if c.Base == "" && f.Family != lora.FamilyUnknown {
			c.Base = string(f.Family)
		}
		c.What = string(f.Kind)
		if f.Family != "" && f.Family != lora.FamilyUnknown {
			c.What += " · " + string(f.Family)
		}
		if f.Rank > 0 {
			c.What += " · rank " + strconv.Itoa(f.Rank)
		}
		switch {
		case f.Err != nil || f.Error != "":
			c.Verdict, c.Bad = "unreadable: "+f.Error, true
		case !f.HeaderParsed:
			c.Verdict, c.Bad = "not a model", true
		case !f.Valid:
			c.Verdict, c.Bad = "invalid: strict readers reject it", true
		default:
			c.Verdict = "valid"
		}
		switch {
		case f.Preview != "":
			c.Image = template.URL(relativeURL(dir, f.Preview))
		case f.Cover != "":
			c.Image = template.URL(f.Cover) // checked by coverOf: a base64 PNG, JPEG or WebP
		}
		if u := f.CivitAI.URL(); u != "" {
			c.CivitAI = template.URL(u) // made of ids alone
		}
		if c.Base != "" && !slices.Contains(bases, c.Base) {
			bases = append(bases, c.Base)
		}
		if f.Kind != "" && !slices.Contains(kinds, string(f.Kind)) {
			kinds = append(kinds, string(f.Kind))
		}
		cards[i] = c
	}
	slices.Sort(bases)
	slices.Sort(kinds)
	var body bytes.Buffer
	err := galleryTemplate().Execute(&body, struct {
		Cards        []galleryCard
		Bases, Kinds []string
	}{cards, bases, kinds})
	if err != nil {
		return err
	}
	return htmlpage.Write(w, htmlpage.Page{Title: "stdiff: " + textfmt.Plural(len(cards), "model"), Body: template.HTML(body.String())})
}

// relativeURL is the URL of the file at path for a page in dir: relative to dir, with forward
// slashes and each part escaped.
func relativeURL(dir, path string) string {
	if dir == "" {
		dir = "."
	}
	absDir, err1 := filepath.Abs(dir)
	absPath, err2 := filepath.Abs(path)
	rel, err3 := filepath.Rel(absDir, absPath)
	if err1 != nil || err2 != nil || err3 != nil {
		rel = path
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i, p := range parts {
		parts[i] = (&urlPart{p}).escaped()
	}
	return strings.Join(parts, "/")
}

type urlPart struct{ s string }

// escaped is the part with every byte that is not unreserved in a URL path percent-encoded.
func (u *urlPart) escaped() string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(u.s); i++ {
		c := u.s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// galleryTemplate is the page's body, parsed at its first use (not at every start of stdiff).
var galleryTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("gallery").Parse(`
<div class="toolbar" role="search">
<label>Name <input type="search" data-filter="name" aria-label="filter by name, file or trigger word" placeholder="name, file, word"></label>
<label>Base <select data-filter="base" aria-label="filter by base model"><option value="">all</option>{{range .Bases}}<option>{{.}}</option>{{end}}</select></label>
<label>Kind <select data-filter="kind" aria-label="filter by kind"><option value="">all</option>{{range .Kinds}}<option>{{.}}</option>{{end}}</select></label>
<span>Sort by
<button type="button" data-sort="name" data-list="cards">name</button>
<button type="button" data-sort="base" data-list="cards">base</button>
<button type="button" data-sort="kind" data-list="cards">kind</button>
<button type="button" data-sort="size" data-list="cards">size</button></span>
</div>
<div class="cards" id="cards">
{{range .Cards}}<article class="card" data-name="{{.Name}} {{.Path}} {{range .Triggers}}{{.}} {{end}}" data-base="{{.Base}}" data-kind="{{.Kind}}" data-size="{{.Size}}">
{{if .Image}}<img loading="lazy" decoding="async" src="{{.Image}}" alt="preview of {{.Name}}">{{else}}<div class="noimg"></div>{{end}}
<h2>{{if .Name}}{{.Name}}{{else}}{{.Path}}{{end}}{{with .FromOriginal}}<span class="muted" title="name, base model, CivitAI ids, trigger words and preview of the model it is derived from">{{.}}</span>{{end}}</h2>
<dl>
<dt>is</dt><dd>{{.What}}</dd>
{{if .Base}}<dt>base</dt><dd>{{.Base}}{{if and .BaseModel (ne .BaseModel .Base)}} <span class="muted">({{.BaseModel}})</span>{{end}}</dd>{{end}}
{{if .Triggers}}<dt>triggers</dt><dd><div class="words">{{range .Triggers}}<button type="button" data-copy="{{.}}" title="copy">{{.}}</button>{{end}}</div></dd>{{end}}
{{if .GuessedTriggers}}<dt>guessed</dt><dd><div class="words guessed">{{range .GuessedTriggers}}<button type="button" data-copy="{{.}}" title="copy (guessed from the training data, not declared)">{{.}}</button>{{end}}</div></dd>{{end}}
{{if .CivitAI}}<dt>CivitAI</dt><dd><a href="{{.CivitAI}}" rel="noreferrer noopener">model {{.Row.CivitAI.ModelID}}</a></dd>{{end}}
<dt>size</dt><dd>{{.SizeText}}</dd>
<dt>verdict</dt><dd class="{{if .Bad}}bad{{else}}good{{end}}">{{.Verdict}}</dd>
<dt>file</dt><dd class="mono">{{.Path}}</dd>
</dl>
{{if .Findings}}<details><summary>{{len .Findings}} finding{{if gt (len .Findings) 1}}s{{end}}</summary><ul>{{range .Findings}}<li><span class="{{if eq .Severity "error"}}bad{{else}}warn{{end}}">{{.Severity}}</span> <code>{{.Code}}</code>: {{.Message}}</li>{{end}}</ul></details>{{end}}
</article>
{{end}}</div>
`))
})
