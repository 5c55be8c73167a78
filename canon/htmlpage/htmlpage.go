// Package htmlpage writes stdiff's reports as one self-contained HTML page: inline CSS, one small inline
// script (sorting, filtering, copying; the page reads whole without it), and a Content-Security-Policy
// that forbids every request but images from the page's own folder and data: URLs. Every value from a
// model file goes through html/template, so a hostile name or metadata value stays text.
package htmlpage

import (
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"io"
	"sync"
)

// Page is what a report puts in the shell: a title and its body (made with html/template).
type Page struct {
	Title string
	Body  template.HTML
}

// Write writes the page.
func Write(w io.Writer, p Page) error {
	return shell().Execute(w, struct {
		Page
		CSP    string
		Script template.JS
		Style  template.CSS
	}{p, csp(), template.JS(script), template.CSS(style)})
}

// csp allows images from the page's folder and data: URLs, the inline style, and the inline script by
// its hash; nothing else (no fetch, no fonts, no frames, no forms). It is made at its first use.
var csp = sync.OnceValue(func() string {
	return "default-src 'none'; img-src 'self' data: file:; style-src 'unsafe-inline'; script-src 'sha256-" + scriptHash() + "'; base-uri 'none'; form-action 'none'"
})

func scriptHash() string {
	h := sha256.Sum256([]byte(script))
	return base64.StdEncoding.EncodeToString(h[:])
}

// shell is the page around a body, parsed at its first use (not at every start of stdiff).
var shell = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{.Title}}</title>
<style>{{.Style}}</style>
</head>
<body>
<header><h1>{{.Title}}</h1></header>
<main>
{{.Body}}
</main>
<footer>made by stdiff</footer>
<script>{{.Script}}</script>
</body>
</html>
`))
})

// style is the page's CSS: readable in light and dark, no horizontal overflow at any width.
const style = `
:root { color-scheme: light dark; --fg: #1b1b1b; --bg: #fff; --muted: #595959; --line: #d0d0d0; --card: #f6f6f6; --accent: #0b57a4; --bad: #a40e0e; --good: #16652a; --warn: #7a4b00; }
@media (prefers-color-scheme: dark) { :root { --fg: #ececec; --bg: #161616; --muted: #b0b0b0; --line: #3a3a3a; --card: #202020; --accent: #8ab8ff; --bad: #ff8a8a; --good: #7fd99a; --warn: #f0c36b; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); overflow-wrap: anywhere; }
header, main, footer { padding: 0 1rem; max-width: 100%; }
h1 { font-size: 1.3rem; margin: 1rem 0 .5rem; }
h2 { font-size: 1.1rem; margin: 1.2rem 0 .4rem; }
footer { color: var(--muted); font-size: .85rem; margin: 2rem 0 1rem; }
a { color: var(--accent); }
code, .mono { font-family: ui-monospace, monospace; font-size: .9em; }
.muted { color: var(--muted); }
.bad { color: var(--bad); } .good { color: var(--good); } .warn { color: var(--warn); }
.toolbar { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .5rem 0 1rem; }
.toolbar label { display: flex; gap: .3rem; align-items: center; }
select { max-width: 14rem; }
input, select, button { font: inherit; color: inherit; background: var(--bg); border: 1px solid var(--line); border-radius: 4px; padding: .2rem .45rem; }
button { cursor: pointer; }
button:focus-visible, input:focus-visible, select:focus-visible, a:focus-visible { outline: 3px solid var(--accent); outline-offset: 1px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(15rem, 1fr)); gap: .8rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .6rem; min-width: 0; }
.card img { width: 100%; height: 12rem; object-fit: cover; border-radius: 4px; background: var(--line); }
.card .noimg { height: 3rem; }
.card h2 { margin: .3rem 0; font-size: 1rem; }
.card dl { display: grid; grid-template-columns: auto 1fr; gap: .1rem .5rem; margin: .3rem 0; font-size: .9rem; }
.card dt { color: var(--muted); }
.card dd { margin: 0; min-width: 0; }
.words { display: flex; flex-wrap: wrap; gap: .25rem; }
.words button { font-size: .85rem; padding: .05rem .35rem; }
.words.guessed button { border-style: dashed; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; display: block; overflow-x: auto; }
th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th button { border: 0; padding: 0; font-weight: bold; background: none; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.barbox { display: inline-block; width: 6rem; vertical-align: middle; }
.bar { display: block; height: .7rem; background: var(--accent); min-width: 1px; }
tr.alarm td { background: color-mix(in srgb, var(--bad) 14%, transparent); }
tr.alarm td:first-child { border-left: 4px solid var(--bad); }
[hidden] { display: none !important; }
`

// script sorts tables and card lists (data-sort on a button names the key: data-KEY on each row or
// card), filters cards (inputs with data-filter name the key), copies words (buttons with data-copy),
// and, for checks in a browser, marks images that loaded (data-loaded) or failed (data-broken) and the
// body with data-overflow when the page is wider than the window.
const script = `
(function () {
  function key(el, k) { var v = el.getAttribute('data-' + k) || ''; var n = parseFloat(v); return isNaN(n) || v === '' ? v.toLowerCase() : n; }
  document.querySelectorAll('[data-sort]').forEach(function (b) {
    b.addEventListener('click', function () {
      var list = document.getElementById(b.getAttribute('data-list'));
      var k = b.getAttribute('data-sort'), desc = b.getAttribute('aria-sort') !== 'descending';
      var items = Array.prototype.slice.call(list.children);
      items.sort(function (x, y) { var a = key(x, k), c = key(y, k); return (a < c ? -1 : a > c ? 1 : 0) * (desc ? -1 : 1); });
      items.forEach(function (el) { list.appendChild(el); });
      document.querySelectorAll('[data-list="' + list.id + '"]').forEach(function (o) { o.removeAttribute('aria-sort'); });
      b.setAttribute('aria-sort', desc ? 'descending' : 'ascending');
    });
  });
  var filters = document.querySelectorAll('[data-filter]');
  function filter() {
    document.querySelectorAll('.card').forEach(function (c) {
      var show = true;
      filters.forEach(function (f) {
        var v = f.value.toLowerCase(), k = f.getAttribute('data-filter');
        if (v && (f.tagName === 'SELECT' ? (c.getAttribute('data-' + k) || '').toLowerCase() !== v : (c.getAttribute('data-' + k) || '').toLowerCase().indexOf(v) < 0)) show = false;
      });
      c.hidden = !show;
    });
  }
  filters.forEach(function (f) { f.addEventListener('input', filter); });
  document.querySelectorAll('[data-copy]').forEach(function (b) {
    b.addEventListener('click', function () {
      var t = b.getAttribute('data-copy');
      if (navigator.clipboard) navigator.clipboard.writeText(t).catch(function () {});
      b.setAttribute('aria-label', 'copied: ' + t);
    });
  });
  document.querySelectorAll('img').forEach(function (i) {
    i.addEventListener('error', function () { i.setAttribute('data-broken', ''); });
    i.addEventListener('load', function () { i.setAttribute('data-loaded', ''); });
  });
  function overflow() { document.body.setAttribute('data-overflow', document.documentElement.scrollWidth > window.innerWidth ? 'yes' : 'no'); }
  window.addEventListener('load', overflow);
  window.addEventListener('resize', overflow);
})();
`
