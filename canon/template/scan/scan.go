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
	// built from literals (by ~, +, |join, |format, escapes): a way out of the template's data into
	// the renderer's objects, the start of every published chat-template payload.
	CodePrivateAttribute = "chat-template-private-attribute"
	// CodeComputedAttribute: an attribute whose name is known only when the template runs (|attr of a
	// variable, str.format on a computed string): it may be built into a private one.
	CodeComputedAttribute = "chat-template-computed-attribute"
	// CodeGlobalInternals: the template uses a Jinja or Flask global that chat templates have no use
	// for (cycler, joiner, lipsum, self, config, request, session, url_for); reading an attribute of one
	// is an error, naming one a warning.
	CodeGlobalInternals = "chat-template-global-internals"
	// CodeExhaustion: nested loops or repetition past a bound (MaxIterations): rendering would
	// exhaust the machine.
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
	a := &analyzer{sets: map[string][]template.Expr{}, bound: map[string]bool{}, seen: map[string]bool{}, macros: map[string]*template.Macro{}}
	a.collect(t.Nodes)
	a.macroArgs(t.Nodes)
	a.nodes(t.Nodes, 1)
	return a.issues
}

type analyzer struct {
	issues []Issue
	sets   map[string][]template.Expr // every value a name is set to
	bound  map[string]bool            // names the template binds (set, for, macro, parameters)
	seen   map[string]bool            // issue keys already reported
	folds  int                        // fold steps left for one expression (bounds the work)
	macros map[string]*template.Macro // the macros the template defines, by name
	iter   template.Expr              // the iterable of the loop being checked (its range is counted there)
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
			}
			a.collect(n.Body)
			a.collect(n.Else)
		case *template.Set:
			for _, v := range n.Vars {
				a.bound[v] = true
				switch {
				case n.Attr == "" && len(n.Vars) == 1:
					a.sets[v] = append(a.sets[v], n.X)
				case len(n.Vars) == 1: // {% set ns.x = … %}
					a.sets[v+"."+n.Attr] = append(a.sets[v+"."+n.Attr], n.X)
				}
			}
		case *template.SetBlock:
			a.bound[n.Var] = true
			a.collect(n.Body)
		case *template.Macro:
			a.bound[n.Name] = true
			for _, p := range n.Params {
				a.bound[p] = true
			}
			a.macros[n.Name] = n
			for i, d := range n.Defaults {
				if d != nil && i < len(n.Params) {
					a.sets[n.Params[i]] = append(a.sets[n.Params[i]], d)
				}
			}
			a.collect(n.Body)
		case *template.CallBlock:
			for _, p := range n.Params {
				a.bound[p] = true
			}
			a.collect(n.Body)
		case *template.FilterBlock:
			a.collect(n.Body)
		case *template.Block:
			a.collect(n.Body)
		}
	}
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
			a.iter = n.Iter
			a.expr(n.Iter)
			if n.Cond != nil {
				a.expr(n.Cond)
			}
			m := mult
			if c, ok := a.count(n.Iter); ok {
				m *= c
				if m > MaxIterations && mult <= MaxIterations {
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

// count is how many items iterating x gives, when constants say: range() of constants, a constant
// list or string.
func (a *analyzer) count(x template.Expr) (float64, bool) {
	switch x := x.(type) {
	case *template.Call:
		if n, ok := x.Fn.(*template.Name); ok && n.Name == "range" && !a.bound["range"] {
			a.folds = 10000
			var v [3]float64
			for i, arg := range x.Args {
				if i > 2 {
					return 0, false
				}
				f, ok := a.num(arg)
				if !ok {
					return 0, false
				}
				v[i] = f
			}
			switch len(x.Args) {
			case 1:
				return max(v[0], 0), true
			case 2:
				return max(v[1]-v[0], 0), true
			case 3:
				if v[2] == 0 {
					return 0, true
				}
				return max((v[1]-v[0])/v[2], 0), true
			}
		}
	case *template.List:
		return float64(len(x.Items)), true
	case *template.Filter:
		if x.Name == "list" || x.Name == "batch" {
			return a.count(x.X)
		}
	}
	return 0, false
}

// num folds a numeric constant expression.
func (a *analyzer) num(x template.Expr) (float64, bool) {
	a.folds--
	if a.folds < 0 {
		return 0, false
	}
	switch x := x.(type) {
	case *template.Const:
		switch v := x.V.(type) {
		case int64:
			return float64(v), true
		case float64:
			return v, true
		case bool:
			if v {
				return 1, true
			}
			return 0, true
		}
	case *template.Unary:
		if v, ok := a.num(x.X); ok {
			if x.Op == "-" {
				return -v, true
			}
			if x.Op == "+" {
				return v, true
			}
		}
	case *template.Binary:
		l, ok1 := a.num(x.L)
		r, ok2 := a.num(x.R)
		if !ok1 || !ok2 {
			return 0, false
		}
		switch x.Op {
		case "+":
			return l + r, true
		case "-":
			return l - r, true
		case "*":
			return l * r, true
		case "**":
			if r > 64 {
				return 1e300, true
			}
			p := 1.0
			for i := 0; i < int(r); i++ {
				p *= l
			}
			return p, true
		case "//", "/":
			if r != 0 {
				return l / r, true
			}
		}
	case *template.Name:
		if vals := a.sets[x.Name]; len(vals) == 1 {
			return a.num(vals[0])
		}
	case *template.Filter:
		if x.Name == "int" || x.Name == "float" || x.Name == "abs" {
			return a.num(x.X)
		}
		if x.Name == "length" || x.Name == "count" {
			if s, ok := a.str(x.X); ok && len(s) == 1 {
				return float64(len(s[0])), true
			}
			return a.count(x.X)
		}
	}
	return 0, false
}

// maxVariants bounds how many values str follows for one expression.
const maxVariants = 16

// str folds a string expression built from constants: the values it may take.
func (a *analyzer) str(x template.Expr) ([]string, bool) {
	a.folds--
	if a.folds < 0 {
		return nil, false
	}
	switch x := x.(type) {
	case *template.Const:
		switch v := x.V.(type) {
		case string:
			return []string{v}, true
		case int64:
			return []string{strconv.FormatInt(v, 10)}, true
		}
	case *template.Name:
		return a.strAll(a.sets[x.Name])
	case *template.Binary:
		switch x.Op {
		case "*":
			return a.repeated(x)
		case "%":
			return a.percent(x)
		case "~", "+":
		default:
			return nil, false
		}
		l, ok1 := a.str(x.L)
		r, ok2 := a.str(x.R)
		if !ok1 || !ok2 {
			return nil, false
		}
		var out []string
		for _, p := range l {
			for _, q := range r {
				out = append(out, p+q)
			}
		}
		return cap16(out), true
	case *template.Cond:
		t, ok1 := a.str(x.Then)
		var e []string
		ok2 := true
		if x.Else != nil {
			e, ok2 = a.str(x.Else)
		}
		if !ok1 || !ok2 {
			return nil, false
		}
		return cap16(append(t, e...)), true
	case *template.List:
		if len(x.Items) == 1 {
			return a.str(x.Items[0])
		}
	case *template.Index:
		if v, ok := a.item(x.X, x.Key); ok {
			return a.str(v)
		}
		s, ok := a.str(x.X)
		n, ok2 := a.num(x.Key)
		if ok && ok2 && len(s) == 1 && n >= 0 && int(n) < len(s[0]) {
			return []string{s[0][int(n) : int(n)+1]}, true
		}
	case *template.Slice:
		return a.sliced(x)
	case *template.Attr:
		return a.member(x)
	case *template.Filter:
		switch x.Name {
		case "join":
			items, ok := a.items(x.X)
			if !ok {
				return nil, false
			}
			sep := []string{""}
			if len(x.Args) > 0 {
				if sep, ok = a.str(x.Args[0]); !ok {
					return nil, false
				}
			}
			return a.joined(items, sep[0])
		case "format":
			f, ok := a.str(x.X)
			if !ok || len(f) != 1 {
				return nil, false
			}
			args := make([][]string, len(x.Args))
			for i, arg := range x.Args {
				if args[i], ok = a.str(arg); !ok || len(args[i]) != 1 {
					return nil, false
				}
			}
			return percentFormat(f[0], args)
		case "lower", "upper", "string", "trim", "e", "escape", "safe", "reverse", "replace", "title", "capitalize", "first", "last":
			s, ok := a.str(x.X)
			if !ok {
				return nil, false
			}
			out := make([]string, len(s))
			for i, v := range s {
				switch x.Name {
				case "lower":
					v = strings.ToLower(v)
				case "upper":
					v = strings.ToUpper(v)
				case "trim":
					v = strings.TrimSpace(v)
				case "title", "capitalize":
					v = caseOf(x.Name, v)
				case "reverse":
					r := []rune(v)
					for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
						r[i], r[j] = r[j], r[i]
					}
					v = string(r)
				case "replace":
					if len(x.Args) < 2 {
						return nil, false
					}
					o, ok1 := a.str(x.Args[0])
					n, ok2 := a.str(x.Args[1])
					if !ok1 || !ok2 {
						return nil, false
					}
					v = strings.ReplaceAll(v, o[0], n[0])
				case "first", "last":
					if v == "" {
						return nil, false
					}
					if x.Name == "first" {
						v = v[:1]
					} else {
						v = v[len(v)-1:]
					}
				}
				out[i] = v
			}
			return out, true
		}
	case *template.Call:
		at, ok := x.Fn.(*template.Attr)
		if !ok {
			return nil, false
		}
		switch at.Name {
		case "join":
			sep, ok := a.str(at.X)
			if !ok || len(x.Args) != 1 {
				return nil, false
			}
			items, ok := a.items(x.Args[0])
			if !ok {
				return nil, false
			}
			return a.joined(items, sep[0])
		case "format":
			return a.strFormat(at.X, x)
		case "get":
			if len(x.Args) > 0 {
				if v, ok := a.item(at.X, x.Args[0]); ok {
					return a.str(v)
				}
			}
			return nil, false
		case "lower", "upper", "strip", "replace":
			s, ok := a.str(at.X)
			if !ok {
				return nil, false
			}
			if at.Name == "replace" {
				return nil, false
			}
			for i := range s {
				switch at.Name {
				case "lower":
					s[i] = strings.ToLower(s[i])
				case "upper":
					s[i] = strings.ToUpper(s[i])
				case "strip":
					s[i] = strings.TrimSpace(s[i])
				}
			}
			return s, true
		}
	}
	return nil, false
}

// items folds a constant list (or a string, a list of its characters).
func (a *analyzer) items(x template.Expr) ([][]string, bool) {
	if l, ok := x.(*template.List); ok {
		out := make([][]string, len(l.Items))
		for i, it := range l.Items {
			s, ok := a.str(it)
			if !ok {
				return nil, false
			}
			out[i] = s
		}
		return out, true
	}
	if n, ok := x.(*template.Name); ok && len(a.sets[n.Name]) == 1 {
		return a.items(a.sets[n.Name][0])
	}
	s, ok := a.str(x)
	if !ok || len(s) != 1 {
		return nil, false
	}
	var out [][]string
	for _, r := range s[0] {
		out = append(out, []string{string(r)})
	}
	return out, true
}

func (a *analyzer) joined(items [][]string, sep string) ([]string, bool) {
	out := []string{""}
	for i, it := range items {
		var next []string
		for _, p := range out {
			for _, q := range it {
				if i > 0 {
					q = sep + q
				}
				next = append(next, p+q)
			}
		}
		out = cap16(next)
	}
	return out, true
}

func cap16(s []string) []string {
	if len(s) > maxVariants {
		return s[:maxVariants]
	}
	return s
}

// private reports whether an attribute name, or a dotted path of them, has a part starting with an
// underscore.
func private(name string) bool {
	for _, p := range strings.Split(name, ".") {
		if strings.HasPrefix(p, "_") {
			return true
		}
	}
	return false
}

// attrName checks an attribute name given as an expression (|attr, map(attribute=…), …).
func (a *analyzer) attrName(x template.Expr, how string) {
	a.folds = 10000
	vals, ok := a.str(x)
	if !ok {
		a.add(CodeComputedAttribute, false, template.Offset(x), "%s reads an attribute whose name is computed when the template runs", how)
		return
	}
	for _, v := range vals {
		if private(v) {
			a.add(CodePrivateAttribute, true, template.Offset(x), "%s reads the private attribute %s", how, strconv.Quote(v))
			return
		}
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
		if private(x.Name) {
			a.add(CodePrivateAttribute, true, x.Off, "the template reads the private attribute %s", x.Name)
		}
	case *template.Index:
		a.folds = 10000
		if vals, ok := a.str(x.Key); ok {
			for _, v := range vals {
				if strings.HasPrefix(v, "__") {
					a.add(CodePrivateAttribute, true, x.Off, "the template reads the private item %s", strconv.Quote(v))
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
		if fn, ok := x.Fn.(*template.Name); ok && !a.bound[fn.Name] {
			a.exhausts(fn.Name, x.Off, x.Args, x.Kw)
			if c, ok := a.count(x); ok && c > MaxIterations && fn.Name == "range" && x != a.iter {
				a.add(CodeExhaustion, true, x.Off, "range() of %.3g items (more than %d)", c, MaxIterations)
			}
		}
		if at, ok := x.Fn.(*template.Attr); ok && (at.Name == "format" || at.Name == "format_map") {
			a.folds = 10000
			if vals, ok := a.str(at.X); ok {
				for _, v := range vals {
					if field, bad := fieldRef(v); bad {
						a.add(CodePrivateAttribute, true, x.Off, "str.format reads the private attribute in {%s}", field)
						break
					}
				}
			} else {
				a.add(CodeComputedAttribute, false, x.Off, "str.format on a string computed when the template runs may read any attribute")
			}
		}
		a.expr(x.Fn)
		for _, e := range x.Args {
			a.expr(e)
		}
		for _, k := range x.Kw {
			a.expr(k.X)
		}
	case *template.Filter:
		a.exhausts(x.Name, x.Off, x.Args, x.Kw)
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
				a.folds = 10000
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
		if x.Op == "*" || x.Op == "**" {
			a.folds = 10000
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
