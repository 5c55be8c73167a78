// Package scan analyses a parsed chat template (package canon/template) without running it: every
// access that leaves the template's data and every construction that would exhaust the renderer.
package scan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/template"
)

// Codes of the issues Analyze reports: part of stdiff's contract with scripts; add, never rename.
const (
	// CodePrivateAttribute: the template reads an attribute whose name starts with an underscore
	// (x.__class__, x['__globals__'], x|attr('__init__'), '{0.__class__}'.format(x)), written out or
	// built from literals as Python would compute it (~, +, *, % and |format, str.format, |join,
	// string filters and methods, slices, dict and namespace items, macro arguments, escapes): a way
	// out of the template's data into the renderer's objects, the start of every published
	// chat-template payload.
	CodePrivateAttribute = "chat-template-private-attribute"
	// CodeComputedAttribute: an attribute whose name is known only when the template runs (|attr of a
	// variable, str.format on a computed string): it may be built into a private one. Also an
	// attribute or item whose name may start with an underscore made by %c of a variable.
	CodeComputedAttribute = "chat-template-computed-attribute"
	// CodeGlobalInternals: the template uses a Jinja or Flask global that chat templates have no use
	// for (cycler, joiner, lipsum, self, config, request, session, url_for); reading an attribute of one
	// is an error, naming one a warning.
	CodeGlobalInternals = "chat-template-global-internals"
	// CodeExhaustion: nested loops, repetition or a size (range, lipsum, padding and wrapping
	// widths, format widths) past a bound (MaxIterations): rendering would exhaust the machine (an
	// error). A warning at offset 0 when the template takes more work to analyse than foldBudget.
	CodeExhaustion = "chat-template-exhaustion"
	// CodeUnparsed: the template is not Jinja this package can parse, so nothing can be said of it.
	CodeUnparsed = "chat-template-unparsed"
)

// MaxIterations is the most loop iterations, or the longest repetition, a template may ask for
// with constants alone (nested range() bounds multiplied, a string repeated by a number) before
// Analyze reports CodeExhaustion. Jinja's sandbox refuses a single range past 100,000 items but not
// two nested ones.
const MaxIterations = 1_000_000

// Issue is one thing Analyze found in a template.
type Issue struct {
	Code string
	// Error is true when the template reaches past its data (an error), false for a warning.
	Error bool
	// Pos is the byte offset in the template source.
	Pos     int
	Message string
}

// internals are the globals of Jinja (and Flask) that reach into the renderer.
var internals = map[string]bool{"cycler": true, "joiner": true, "lipsum": true, "self": true, "config": true,
	"request": true, "session": true, "url_for": true, "get_flashed_messages": true}

// attrFilters take an attribute name (a dotted path) as first argument or as attribute=.
var attrFilters = map[string]bool{"map": true, "selectattr": true, "rejectattr": true, "sort": true,
	"groupby": true, "sum": true, "unique": true, "min": true, "max": true}

// Analyze parses src and reports every access that leaves the template's data and every
// construction that would exhaust the renderer. A template that cannot be parsed gives one issue,
// CodeUnparsed. It never runs the template.
func Analyze(src string) []Issue {
	t, err := template.Parse(src)
	if err != nil {
		pos := 0
		if se, ok := err.(*template.SyntaxError); ok {
			pos = se.Offset
		}
		return []Issue{{Code: CodeUnparsed, Pos: pos, Message: "the template cannot be parsed as Jinja: " + err.Error()}}
	}
	return Tree(t)
}

// Tree reports what Analyze does, for a parsed template.
func Tree(t *template.Template) []Issue {
	a := &analyzer{sets: map[string][]template.Expr{}, loops: map[string][]template.Expr{}, opaque: map[string]bool{},
		bound: map[string]bool{}, seen: map[string]bool{}, macros: map[string]*template.Macro{}, folds: 10000, bytes: 1 << 20}
	a.collect(t.Nodes)
	a.macroArgs(t.Nodes)
	a.nodes(t.Nodes, 1)
	return a.issues
}

type analyzer struct {
	issues []Issue
	// sets holds every value a name is set to (a macro's parameter: every argument passed to it;
	// a namespace attribute "ns.x": every value set to it)
	sets   map[string][]template.Expr
	loops  map[string][]template.Expr // what a loop variable iterates over
	opaque map[string]bool            // names also bound to values not followed (unpacked, a call block's)
	bound  map[string]bool            // names the template binds (set, for, macro, parameters)
	macros map[string]*template.Macro
	seen   map[string]bool // issue keys already reported
	folds  int             // fold steps left for one expression (bounds the work)
	bytes  int             // bytes of folded strings left for one expression
	// spent counts the fold steps and bytes of the whole template: past foldBudget, nothing more
	// is folded (names are then computed, sizes unknown)
	spent int
	// inexact is set while folding when a value was left out (it depends on data, or there were
	// too many) or holds a wild marker
	inexact bool
}

func (a *analyzer) add(code string, isErr bool, pos int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	key := code + "\x00" + strconv.Itoa(pos) + msg
	if a.seen[key] {
		return
	}
	a.seen[key] = true
	a.issues = append(a.issues, Issue{Code: code, Error: isErr, Pos: pos, Message: msg})
}

// collect records the names the template binds and the values it sets them to.
func (a *analyzer) collect(nodes []template.Node) {
	for _, n := range nodes {
		switch n := n.(type) {
		case *template.If:
			for _, b := range n.Bodies {
				a.collect(b)
			}
			a.collect(n.Else)
		case *template.For:
			for _, v := range n.Vars {
				a.bound[v] = true
				if len(n.Vars) == 1 {
					a.loops[v] = append(a.loops[v], n.Iter)
				} else {
					a.opaque[v] = true
				}
			}
			a.collect(n.Body)
			a.collect(n.Else)
		case *template.Set:
			l, isTuple := n.X.(*template.List)
			for i, v := range n.Vars {
				a.bound[v] = true
				switch {
				case n.Attr != "":
					a.sets[v+"."+n.Attr] = append(a.sets[v+"."+n.Attr], n.X)
				case len(n.Vars) == 1:
					a.sets[v] = append(a.sets[v], n.X)
				case isTuple && len(l.Items) == len(n.Vars):
					a.sets[v] = append(a.sets[v], l.Items[i])
				default:
					a.opaque[v] = true
				}
			}
		case *template.SetBlock:
			a.bound[n.Var] = true
			if x, ok := blockValue(n); ok {
				a.sets[n.Var] = append(a.sets[n.Var], x)
			} else {
				a.opaque[n.Var] = true
			}
			a.collect(n.Body)
		case *template.Macro:
			a.bound[n.Name] = true
			a.macros[n.Name] = n
			for i, p := range n.Params {
				a.bound[p] = true
				if i < len(n.Defaults) && n.Defaults[i] != nil {
					a.sets[p] = append(a.sets[p], n.Defaults[i])
				}
			}
			a.collect(n.Body)
		case *template.CallBlock:
			for _, p := range n.Params {
				a.bound[p] = true
				a.opaque[p] = true
			}
			a.collect(n.Body)
		case *template.FilterBlock:
			a.collect(n.Body)
		case *template.Block:
			a.collect(n.Body)
		}
	}
}

// blockValue is the expression a {% set x %}…{% endset %} block amounts to, when its body is text
// and outputs only.
func blockValue(n *template.SetBlock) (template.Expr, bool) {
	var x template.Expr = &template.Const{Off: n.Off, V: ""}
	for _, b := range n.Body {
		switch b := b.(type) {
		case *template.Text:
			x = &template.Binary{Off: b.Off, Op: "~", L: x, R: &template.Const{Off: b.Off, V: b.S}}
		case *template.Output:
			x = &template.Binary{Off: b.Off, Op: "~", L: x, R: b.X}
		default:
			return nil, false
		}
	}
	for _, f := range n.Filters {
		x = &template.Filter{Off: f.Off, X: x, Name: f.Name, Args: f.Args, Kw: f.Kw}
	}
	return x, true
}

// macroArgs records the arguments every call of a macro passes as values of its parameters.
func (a *analyzer) macroArgs(nodes []template.Node) {
	if len(a.macros) == 0 {
		return
	}
	eachExpr(nodes, func(x template.Expr) {
		c, ok := x.(*template.Call)
		if !ok {
			return
		}
		n, ok := c.Fn.(*template.Name)
		if !ok || a.macros[n.Name] == nil {
			return
		}
		m := a.macros[n.Name]
		for i, arg := range c.Args {
			if i < len(m.Params) {
				a.sets[m.Params[i]] = append(a.sets[m.Params[i]], arg)
			}
		}
		for _, k := range c.Kw {
			a.sets[k.Name] = append(a.sets[k.Name], k.X)
		}
	})
}

// eachExpr calls f on every expression of the template, sub-expressions included.
func eachExpr(nodes []template.Node, f func(template.Expr)) {
	var walk func(x template.Expr)
	walk = func(x template.Expr) {
		switch x := x.(type) {
		case nil:
			return
		case *template.Attr:
			walk(x.X)
		case *template.Index:
			walk(x.X)
			walk(x.Key)
		case *template.Slice:
			walk(x.X)
			walk(x.Lo)
			walk(x.Hi)
			walk(x.Step)
		case *template.Call:
			walk(x.Fn)
			for _, e := range x.Args {
				walk(e)
			}
			for _, k := range x.Kw {
				walk(k.X)
			}
		case *template.Filter:
			walk(x.X)
			for _, e := range x.Args {
				walk(e)
			}
			for _, k := range x.Kw {
				walk(k.X)
			}
		case *template.Test:
			walk(x.X)
			for _, e := range x.Args {
				walk(e)
			}
		case *template.Binary:
			walk(x.L)
			walk(x.R)
		case *template.Unary:
			walk(x.X)
		case *template.Cond:
			walk(x.Then)
			walk(x.Test)
			walk(x.Else)
		case *template.List:
			for _, e := range x.Items {
				walk(e)
			}
		case *template.Dict:
			for i := range x.Keys {
				walk(x.Keys[i])
				walk(x.Vals[i])
			}
		}
		f(x)
	}
	var visit func(nodes []template.Node)
	visit = func(nodes []template.Node) {
		for _, n := range nodes {
			switch n := n.(type) {
			case *template.Output:
				walk(n.X)
			case *template.If:
				for i, c := range n.Conds {
					walk(c)
					visit(n.Bodies[i])
				}
				visit(n.Else)
			case *template.For:
				walk(n.Iter)
				walk(n.Cond)
				visit(n.Body)
				visit(n.Else)
			case *template.Set:
				walk(n.X)
			case *template.SetBlock:
				for _, f := range n.Filters {
					walk(f)
				}
				visit(n.Body)
			case *template.Macro:
				for _, d := range n.Defaults {
					walk(d)
				}
				visit(n.Body)
			case *template.CallBlock:
				walk(n.Call)
				visit(n.Body)
			case *template.FilterBlock:
				for _, f := range n.Filters {
					walk(f)
				}
				visit(n.Body)
			case *template.Block:
				visit(n.Body)
			case *template.Do:
				walk(n.X)
			}
		}
	}
	visit(nodes)
}

// nodes checks statements; mult is how many times they run at least, as far as constants say.
func (a *analyzer) nodes(nodes []template.Node, mult float64) {
	for _, n := range nodes {
		switch n := n.(type) {
		case *template.Output:
			a.expr(n.X)
		case *template.If:
			for i, c := range n.Conds {
				a.expr(c)
				a.nodes(n.Bodies[i], mult)
			}
			a.nodes(n.Else, mult)
		case *template.For:
			a.expr(n.Iter)
			if n.Cond != nil {
				a.expr(n.Cond)
			}
			m := mult
			a.reset()
			if c, ok := a.count(n.Iter); ok {
				m *= c
				if m > MaxIterations && mult <= MaxIterations && c <= MaxIterations {
					a.add(CodeExhaustion, true, n.Off, "nested loops run %.3g times (more than %d)", m, MaxIterations)
				}
			}
			a.nodes(n.Body, m)
			a.nodes(n.Else, mult)
		case *template.Set:
			a.expr(n.X)
		case *template.SetBlock:
			for _, f := range n.Filters {
				a.expr(f)
			}
			a.nodes(n.Body, mult)
		case *template.Macro:
			for _, d := range n.Defaults {
				if d != nil {
					a.expr(d)
				}
			}
			a.nodes(n.Body, mult)
		case *template.CallBlock:
			a.expr(n.Call)
			a.nodes(n.Body, mult)
		case *template.FilterBlock:
			for _, f := range n.Filters {
				a.expr(f)
			}
			a.nodes(n.Body, mult)
		case *template.Block:
			a.nodes(n.Body, mult)
		case *template.Do:
			a.expr(n.X)
		}
	}
}

// private reports whether an attribute name, or a dotted path of them, has a part starting with an
// underscore (definitely), or with a character computed when the template runs (maybe).
func private(name string) (definitely, maybe bool) {
	for _, p := range strings.Split(name, ".") {
		switch {
		case strings.HasPrefix(p, "_"):
			return true, false
		case strings.HasPrefix(p, string(wildChar)):
			maybe = true
		}
	}
	return false, maybe
}

// dunderKey reports whether an item key starts with two underscores (definitely), or may (maybe:
// one of them is a character computed when the template runs).
func dunderKey(k string) (definitely, maybe bool) {
	r := []rune(k)
	if len(r) < 2 || !(r[0] == '_' || r[0] == wildChar) || !(r[1] == '_' || r[1] == wildChar) {
		return false, false
	}
	return r[0] == '_' && r[1] == '_', true
}

// shown is a folded value as a message shows it: ? for a character, … for a string computed when
// the template runs.
func shown(v string) string {
	return strconv.Quote(strings.NewReplacer(string(wildChar), "?", string(wildStr), "…").Replace(v))
}

// foldBudget bounds the work of folding one template: fold steps plus bytes of folded strings.
const foldBudget = 4_000_000

// spentFolds are the fold steps each expression is left once foldBudget is spent.
const spentFolds = 64

// reset starts the fold budget of one expression. Past foldBudget for the template, it says so
// once (a warning: what the template builds is no longer followed), and each expression is left a
// few steps (spentFolds, maxFolded bytes: the work stays linear in the template's size), enough to
// fold the literals it writes: a template that spends the budget first cannot make its literal
// private names ('__class__', '__glo' ~ 'bals__') computed ones, warnings instead of errors.
func (a *analyzer) reset() {
	a.spent += 10000 - max(a.folds, 0) + 1<<20 - max(a.bytes, 0)
	a.folds, a.bytes = 10000, 1<<20
	if a.spent > foldBudget {
		a.folds, a.bytes = spentFolds, maxFolded
		a.add(CodeExhaustion, false, 0, "the template takes more than %d steps to analyse: the names it builds are not all followed", foldBudget)
	}
}

// fold starts folding one expression.
func (a *analyzer) fold(x template.Expr) ([]string, bool) {
	a.reset()
	a.inexact = false
	return a.str(x)
}

// attrName checks an attribute name given as an expression (|attr, map(attribute=…), …).
func (a *analyzer) attrName(x template.Expr, how string) {
	vals, ok := a.fold(x)
	if !ok {
		a.add(CodeComputedAttribute, false, template.Offset(x), "%s reads an attribute whose name is computed when the template runs", how)
		return
	}
	for _, v := range vals {
		switch definitely, maybe := private(v); {
		case definitely:
			a.add(CodePrivateAttribute, true, template.Offset(x), "%s reads the private attribute %s", how, shown(v))
			return
		case maybe:
			a.add(CodeComputedAttribute, false, template.Offset(x), "%s may read a private attribute: %s starts with a character %%c makes when the template runs", how, shown(v))
			return
		}
	}
	if a.inexact {
		a.add(CodeComputedAttribute, false, template.Offset(x), "%s reads an attribute whose name is computed when the template runs", how)
	}
}

// fieldRef finds a replacement field of str.format that reads a private attribute or item:
// "{0.__class__}", "{x[__globals__]}".
func fieldRef(f string) (string, bool) {
	for i := 0; i < len(f); i++ {
		if f[i] != '{' {
			continue
		}
		if i+1 < len(f) && f[i+1] == '{' {
			i++
			continue
		}
		end := strings.IndexAny(f[i:], "}!:")
		if end < 0 {
			return "", false
		}
		field := f[i+1 : i+end]
		for _, p := range strings.FieldsFunc(field, func(r rune) bool { return r == '.' || r == '[' || r == ']' }) {
			if strings.HasPrefix(p, "_") {
				return field, true
			}
		}
		i += end
	}
	return "", false
}

func (a *analyzer) expr(x template.Expr) {
	switch x := x.(type) {
	case nil, *template.Const:
	case *template.Name:
		if internals[x.Name] && !a.bound[x.Name] {
			a.add(CodeGlobalInternals, false, x.Off, "the template names the global %s, which chat templates have no use for", x.Name)
		}
	case *template.Attr:
		if n, ok := x.X.(*template.Name); ok && internals[n.Name] && !a.bound[n.Name] {
			a.add(CodeGlobalInternals, true, x.Off, "the template reads %s.%s, inside the renderer", n.Name, x.Name)
		} else {
			a.expr(x.X)
		}
		if p, _ := private(x.Name); p {
			a.add(CodePrivateAttribute, true, x.Off, "the template reads the private attribute %s", x.Name)
		}
	case *template.Index:
		if vals, ok := a.fold(x.Key); ok {
			for _, v := range vals {
				if definitely, maybe := dunderKey(v); definitely {
					a.add(CodePrivateAttribute, true, x.Off, "the template reads the private item %s", shown(v))
					break
				} else if maybe {
					a.add(CodeComputedAttribute, false, x.Off, "the template may read a private item: %s starts with a character %%c makes when the template runs", shown(v))
					break
				}
			}
		}
		if n, ok := x.X.(*template.Name); ok && internals[n.Name] && !a.bound[n.Name] {
			a.add(CodeGlobalInternals, true, x.Off, "the template reads an item of %s, inside the renderer", n.Name)
		} else {
			a.expr(x.X)
		}
		a.expr(x.Key)
	case *template.Slice:
		a.expr(x.X)
		a.expr(x.Lo)
		a.expr(x.Hi)
		a.expr(x.Step)
	case *template.Call:
		if at, ok := x.Fn.(*template.Attr); ok && (at.Name == "format" || at.Name == "format_map") {
			vals, ok := a.fold(at.X)
			bad := false
			for _, v := range vals {
				if field, b := fieldRef(v); b {
					a.add(CodePrivateAttribute, true, x.Off, "str.format reads the private attribute in {%s}", field)
					bad = true
					break
				}
			}
			if !bad && (!ok || a.inexact) {
				a.add(CodeComputedAttribute, false, x.Off, "str.format on a string computed when the template runs may read any attribute")
			}
			a.fold(x) // widths past the bound
		}
		a.sizes(x)
		a.expr(x.Fn)
		for _, e := range x.Args {
			a.expr(e)
		}
		for _, k := range x.Kw {
			a.expr(k.X)
		}
	case *template.Filter:
		a.sizes(x)
		switch {
		case x.Name == "attr":
			if len(x.Args) > 0 {
				a.attrName(x.Args[0], "|attr")
			}
		case attrFilters[x.Name]:
			for _, k := range x.Kw {
				if k.Name == "attribute" {
					a.attrName(k.X, "|"+x.Name+"(attribute=…)")
				}
			}
			switch x.Name {
			case "selectattr", "rejectattr", "groupby":
				if len(x.Args) > 0 {
					a.attrName(x.Args[0], "|"+x.Name)
				}
			case "map":
				a.reset()
				if len(x.Args) > 1 {
					if v, ok := a.str(x.Args[0]); ok && len(v) == 1 && v[0] == "attr" {
						a.attrName(x.Args[1], "|map('attr')")
					}
				}
			}
		}
		a.expr(x.X)
		for _, e := range x.Args {
			a.expr(e)
		}
		for _, k := range x.Kw {
			a.expr(k.X)
		}
	case *template.Test:
		a.expr(x.X)
		for _, e := range x.Args {
			a.expr(e)
		}
	case *template.Binary:
		if x.Op == "%" {
			a.fold(x) // widths past the bound
		}
		if x.Op == "*" || x.Op == "**" {
			a.reset()
			l, okl := a.num(x.L)
			r, okr := a.num(x.R)
			var sl, sr []string
			if !okl {
				sl, _ = a.str(x.L)
			}
			if !okr {
				sr, _ = a.str(x.R)
			}
			switch {
			case x.Op == "**" && okl && okr && (r > 10000 || l*r > MaxIterations && r > 64):
				a.add(CodeExhaustion, true, x.Off, "the template raises a number to the power %.3g", r)
			case x.Op == "*" && okr && len(sl) > 0 && r*float64(max(len(sl[0]), 1)) > MaxIterations,
				x.Op == "*" && okl && len(sr) > 0 && l*float64(max(len(sr[0]), 1)) > MaxIterations:
				a.add(CodeExhaustion, true, x.Off, "the template repeats a string past %d characters", MaxIterations)
			case x.Op == "*" && (okr && r > MaxIterations || okl && l > MaxIterations) && !(okl && okr):
				a.add(CodeExhaustion, true, x.Off, "the template repeats a value more than %d times", MaxIterations)
			}
		}
		a.expr(x.L)
		a.expr(x.R)
	case *template.Unary:
		a.expr(x.X)
	case *template.Cond:
		a.expr(x.Then)
		a.expr(x.Test)
		a.expr(x.Else)
	case *template.List:
		for _, e := range x.Items {
			a.expr(e)
		}
	case *template.Dict:
		for i := range x.Keys {
			a.expr(x.Keys[i])
			a.expr(x.Vals[i])
		}
	}
}

// sizes reports a call or filter asked for a size past MaxIterations: range(), lipsum(), padding
// and wrapping widths, batches.
func (a *analyzer) sizes(x template.Expr) {
	a.reset()
	switch x := x.(type) {
	case *template.Call:
		switch fn := x.Fn.(type) {
		case *template.Name:
			switch {
			case fn.Name == "range" && !a.bound["range"]:
				if c, ok := a.count(x); ok && c > MaxIterations {
					a.add(CodeExhaustion, true, x.Off, "range() of %.3g items (more than %d)", c, MaxIterations)
				}
			case fn.Name == "lipsum" && !a.bound["lipsum"]:
				n, words := 5.0, 100.0
				if e := arg(x.Args, x.Kw, 0, "n"); e != nil {
					if v, ok := a.num(e); ok {
						n = v
					}
				}
				for i, name := range []string{"min", "max"} {
					if e := arg(x.Args, x.Kw, 2+i, name); e != nil {
						if v, ok := a.num(e); ok {
							words = max(words, v)
						}
					}
				}
				if n*words > MaxIterations {
					a.add(CodeExhaustion, true, x.Off, "lipsum() of %.3g words (more than %d)", n*words, MaxIterations)
				}
			}
		case *template.Attr:
			switch fn.Name {
			case "center", "ljust", "rjust", "zfill":
				a.size(arg(x.Args, nil, 0, ""), "str."+fn.Name+" to a width")
			case "expandtabs":
				a.size(arg(x.Args, x.Kw, 0, "tabsize"), "str.expandtabs to a tab size")
			}
		}
	case *template.Filter:
		switch x.Name {
		case "center", "wordwrap":
			a.size(arg(x.Args, x.Kw, 0, "width"), "|"+x.Name+" to a width")
		case "indent":
			if e := arg(x.Args, x.Kw, 0, "width"); e != nil {
				if _, ok := a.num(e); ok {
					a.size(e, "|indent by a width")
				}
			}
		case "batch":
			a.size(arg(x.Args, x.Kw, 0, "linecount"), "|batch into rows")
		case "slice":
			a.size(arg(x.Args, x.Kw, 0, "slices"), "|slice into columns")
		case "format":
			a.fold(x) // widths past the bound
		}
	}
}
