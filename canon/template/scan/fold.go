package scan

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stdiff/stdiff/canon/template"
)

// Folding: the values a string expression may take, worked out from the template's constants the
// way Python and Jinja compute them. A value may hold two markers for what is known only when the
// template runs: wildChar, one character (%c or {:c} of a variable), and wildStr, any string (%s of
// a variable, a variable joined by ~).
const (
	wildChar = '\uFFFF'
	wildStr  = '\uFFFE'
)

// maxVariants bounds how many values str follows for one expression.
const maxVariants = 16

// maxFolded bounds the length of a folded string (longer ones are not followed).
const maxFolded = 4096

// cap keeps at most maxVariants values, noting when some were dropped.
func (a *analyzer) cap(s []string) []string {
	if len(s) > maxVariants {
		a.inexact = true
		return s[:maxVariants]
	}
	return s
}

// product is every p+q.
func (a *analyzer) product(l, r []string) ([]string, bool) {
	var out []string
	for _, p := range l {
		for _, q := range r {
			a.bytes -= len(p) + len(q)
			if len(p)+len(q) > maxFolded || a.bytes < 0 {
				a.inexact = true
				return nil, false
			}
			if len(out) == maxVariants {
				a.inexact = true
				return out, true
			}
			out = append(out, p+q)
		}
	}
	return out, true
}

// orWild is str's values of x, or wildStr (noting it) when x cannot be folded.
func (a *analyzer) orWild(x template.Expr) []string {
	if s, ok := a.str(x); ok {
		return s
	}
	a.inexact = true
	return []string{string(wildStr)}
}

// str folds a string expression: the values it may take. ok is false when nothing is known of it;
// a.inexact is set when a value was left out or holds a wild marker.
func (a *analyzer) str(x template.Expr) ([]string, bool) {
	a.folds--
	if a.folds < 0 {
		a.inexact = true
		return nil, false
	}
	switch x := x.(type) {
	case *template.Const:
		switch v := x.V.(type) {
		case string:
			if x.Unknown {
				return nil, false
			}
			return []string{v}, true
		case int64:
			return []string{strconv.FormatInt(v, 10)}, true
		case float64:
			return []string{pyFloat(v)}, true
		case bool:
			if v {
				return []string{"True"}, true
			}
			return []string{"False"}, true
		}
	case *template.Name:
		return a.nameVals(x.Name)
	case *template.Attr:
		if exprs, ok := a.member(x.X, x.Name); ok {
			return a.values(exprs)
		}
	case *template.Binary:
		return a.binary(x)
	case *template.Cond:
		save := a.inexact
		t, ok1 := a.str(x.Then)
		e, ok2 := []string{""}, true // no else: undefined, which prints as ""
		if x.Else != nil {
			e, ok2 = a.str(x.Else)
		}
		switch {
		case ok1 && ok2:
			return a.cap(append(t, e...)), true
		case ok1:
			a.inexact = true
			return t, true
		case ok2:
			a.inexact = true
			return e, true
		}
		a.inexact = save
	case *template.List:
		if len(x.Items) == 1 {
			return a.str(x.Items[0])
		}
	case *template.Index:
		return a.index(x)
	case *template.Slice:
		s, ok := a.str(x.X)
		if !ok {
			return nil, false
		}
		out := make([]string, 0, len(s))
		for _, v := range s {
			r, ok := a.slice([]rune(v), x)
			if !ok {
				return nil, false
			}
			out = append(out, string(r))
		}
		return out, true
	case *template.Filter:
		return a.filter(x)
	case *template.Call:
		return a.call(x)
	}
	return nil, false
}

// values folds each expression, keeping those that fold.
func (a *analyzer) values(exprs []template.Expr) ([]string, bool) {
	var out []string
	for _, e := range exprs {
		s, ok := a.str(e)
		if !ok {
			a.inexact = true
			continue
		}
		out = append(out, s...)
	}
	if len(out) == 0 {
		return nil, false
	}
	return a.cap(out), true
}

// nameVals folds a variable: every value the template sets it to, passes it (a macro's parameter)
// or iterates it over (a loop over constants).
func (a *analyzer) nameVals(name string) ([]string, bool) {
	if a.opaque[name] {
		a.inexact = true
	}
	var out []string
	if len(a.sets[name]) > 0 {
		if s, ok := a.values(a.sets[name]); ok {
			out = append(out, s...)
		}
	}
	for _, it := range a.loops[name] {
		items, ok := a.items(it)
		if !ok {
			a.inexact = true
			if l := a.literal(it); l != nil { // the items it can fold, whatever the others
				v, _ := a.someItems(l)
				out = append(out, v...)
			}
			continue
		}
		for _, v := range items {
			out = append(out, v...)
		}
	}
	if len(out) == 0 {
		return nil, false
	}
	return a.cap(out), true
}

// member is what x.key (or x['key'], x.get('key')) may be when x is a dict literal, a namespace
// or a variable set to one: the expressions, and whether any was found.
func (a *analyzer) member(x template.Expr, key string) ([]template.Expr, bool) {
	a.folds--
	if a.folds < 0 {
		return nil, false
	}
	var out []template.Expr
	switch x := x.(type) {
	case *template.Dict:
		for i, k := range x.Keys {
			if ks, ok := a.str(k); ok && len(ks) == 1 && ks[0] == key {
				out = append(out, x.Vals[i])
			}
		}
	case *template.Call:
		if n, ok := x.Fn.(*template.Name); ok && (n.Name == "namespace" || n.Name == "dict") {
			for _, k := range x.Kw {
				if k.Name == key {
					out = append(out, k.X)
				}
			}
		}
	case *template.Name:
		if a.opaque[x.Name] {
			a.inexact = true
		}
		out = append(out, a.sets[x.Name+"."+key]...)
		for _, e := range a.sets[x.Name] {
			if m, ok := a.member(e, key); ok {
				out = append(out, m...)
			}
		}
	}
	return out, len(out) > 0
}

func (a *analyzer) binary(x *template.Binary) ([]string, bool) {
	switch x.Op {
	case "or", "and": // one operand or the other, as Python's: the values of those it can fold
		l, ok1 := a.str(x.L)
		r, ok2 := a.str(x.R)
		if !ok1 || !ok2 {
			a.inexact = true
		}
		out := append(append([]string{}, l...), r...)
		return a.cap(out), len(out) > 0
	case "~", "+":
		if x.Op == "+" {
			if n, ok := a.num(x); ok {
				return []string{pyNum(n)}, true
			}
			_, nl := a.num(x.L)
			_, nr := a.num(x.R)
			if nl || nr {
				return nil, false // a number and a string: TypeError
			}
		}
		save := a.inexact
		l, ok1 := a.str(x.L)
		r, ok2 := a.str(x.R)
		if !ok1 && !ok2 {
			a.inexact = save
			return nil, false
		}
		if x.Op == "+" && (!ok1 || !ok2) {
			return nil, false // + of a number or a list: not a string
		}
		if !ok1 {
			l, a.inexact = []string{string(wildStr)}, true
		}
		if !ok2 {
			r, a.inexact = []string{string(wildStr)}, true
		}
		return a.product(l, r)
	case "*":
		s, n := x.L, x.R
		if _, ok := a.num(x.L); ok {
			s, n = x.R, x.L
		}
		c, ok := a.num(n)
		if !ok || c != math.Trunc(c) {
			return nil, false
		}
		vals, ok := a.str(s)
		if !ok {
			return nil, false
		}
		out := make([]string, len(vals))
		for i, v := range vals {
			if c > 0 && float64(len(v))*c > maxFolded {
				return nil, false
			}
			out[i] = strings.Repeat(v, int(max(c, 0)))
			if a.bytes -= len(out[i]); a.bytes < 0 {
				return nil, false
			}
		}
		return out, true
	case "%":
		f, ok := a.str(x.L)
		if !ok {
			return nil, false
		}
		var args []template.Expr
		kw := map[string]template.Expr{}
		switch r := x.R.(type) {
		case *template.List:
			if !r.Tuple {
				args = []template.Expr{r}
			} else {
				args = r.Items
			}
		case *template.Dict:
			for i, k := range r.Keys {
				if ks, ok := a.str(k); ok && len(ks) == 1 {
					kw[ks[0]] = r.Vals[i]
				}
			}
			args = []template.Expr{r}
		default:
			args = []template.Expr{r}
		}
		return a.percent(x.Off, f, args, kw)
	}
	return nil, false
}

// literal is the list or tuple literal x is, or that the name x is set to (once, never a loop's or
// an unpacked one): its length is known whatever its items are. nil for anything else.
func (a *analyzer) literal(x template.Expr) *template.List {
	switch x := x.(type) {
	case *template.List:
		return x
	case *template.Name:
		if len(a.sets[x.Name]) == 1 && len(a.loops[x.Name]) == 0 && !a.opaque[x.Name] {
			if l, ok := a.sets[x.Name][0].(*template.List); ok {
				return l
			}
		}
	}
	return nil
}

// someItems folds the items of a list or tuple literal one by one: the values of those it can, with
// a.inexact set when it cannot fold one (a loop over ['__class__', x] takes '__class__' whatever x is).
func (a *analyzer) someItems(l *template.List) ([]string, bool) {
	var out []string
	for _, it := range l.Items {
		if v, ok := a.str(it); ok {
			out = append(out, v...)
		} else {
			a.inexact = true
		}
	}
	return a.cap(out), len(out) > 0
}

// index folds x[key]: a character of a string, an item of a list, a value of a dict.
func (a *analyzer) index(x *template.Index) ([]string, bool) {
	save := a.inexact
	if n, ok := a.num(x.Key); ok && n == math.Trunc(n) {
		if l := a.literal(x.X); l != nil && math.Abs(n) <= float64(len(l.Items)) {
			// a literal's item by a constant: that item alone, whatever the others (('__class__', x)[0]
			// was computed, a warning, because x is)
			i := int(n)
			if i < 0 {
				i += len(l.Items)
			}
			if i >= 0 && i < len(l.Items) {
				return a.str(l.Items[i])
			}
		}
		items, ok := a.items(x.X)
		if ok {
			i := int(n)
			if i < 0 {
				i += len(items)
			}
			if i >= 0 && i < len(items) {
				return items[i], true
			}
		}
		a.inexact = save
		return nil, false
	}
	a.inexact = save
	keys, ok := a.str(x.Key)
	if !ok {
		return nil, false
	}
	var exprs []template.Expr
	for _, k := range keys {
		if m, ok := a.member(x.X, k); ok {
			exprs = append(exprs, m...)
		}
	}
	if len(exprs) == 0 {
		return nil, false
	}
	return a.values(exprs)
}

// slice applies a Python slice to s.
func (a *analyzer) slice(s []rune, x *template.Slice) ([]rune, bool) {
	n := len(s)
	bound := func(e template.Expr, def int) (int, bool) {
		if e == nil {
			return def, true
		}
		f, ok := a.num(e)
		if !ok || f != math.Trunc(f) || math.Abs(f) > 1e9 {
			return 0, false
		}
		return int(f), true
	}
	step, ok := bound(x.Step, 1)
	if !ok || step == 0 {
		return nil, false
	}
	lo, hi := 0, n
	if step < 0 {
		lo, hi = n-1, -n-1
	}
	lo, ok1 := bound(x.Lo, lo)
	hi, ok2 := bound(x.Hi, hi)
	if !ok1 || !ok2 {
		return nil, false
	}
	clamp := func(i, lowest, highest int) int {
		if i < 0 {
			i += n
		}
		return min(max(i, lowest), highest)
	}
	var out []rune
	if step > 0 {
		lo, hi = clamp(lo, 0, n), clamp(hi, 0, n)
		for i := lo; i < hi; i += step {
			out = append(out, s[i])
		}
	} else {
		if x.Lo != nil {
			lo = clamp(lo, -1, n-1)
		}
		if x.Hi != nil {
			hi = clamp(hi, -1, n-1)
		} else {
			hi = -1
		}
		for i := lo; i > hi; i += step {
			out = append(out, s[i])
		}
	}
	return out, true
}

// unknownItem is the values of a list's item that does not fold (data): any string.
var unknownItem = []string{string(wildStr)}

// wild reports whether an item's values hold a wild marker (not known exactly).
func wild(item []string) bool {
	for _, v := range item {
		if strings.ContainsRune(v, wildStr) || strings.ContainsRune(v, wildChar) {
			return true
		}
	}
	return false
}

// items folds a constant list (or a string, a list of its characters): the values of each item. A
// list literal some of whose items do not fold (data) keeps the items it knows, each unknown one
// being any string (unknownItem, a.inexact set), so that the filters passing items on still build
// names from the known ones (('__class__', x)|join starts with __class__ whatever x is); it is
// nothing known when none of its items folds. Callers read an item's values as what it may be: the
// unknown one as any string (a join puts wildStr in its place), never as a value it surely is.
func (a *analyzer) items(x template.Expr) ([][]string, bool) {
	a.folds--
	if a.folds < 0 {
		return nil, false
	}
	switch x := x.(type) {
	case *template.List:
		out := make([][]string, len(x.Items))
		known := false
		for i, it := range x.Items {
			s, ok := a.str(it)
			if !ok {
				out[i], a.inexact = unknownItem, true
				continue
			}
			out[i], known = s, true
		}
		return out, known || len(x.Items) == 0
	case *template.Name:
		if len(a.sets[x.Name]) == 1 && len(a.loops[x.Name]) == 0 && !a.opaque[x.Name] {
			if it, ok := a.items(a.sets[x.Name][0]); ok {
				return it, true
			}
		}
	case *template.Filter:
		switch x.Name {
		case "list", "reverse", "sort", "unique":
			it, ok := a.items(x.X)
			if !ok {
				return nil, false
			}
			switch x.Name {
			case "reverse":
				for i, j := 0, len(it)-1; i < j; i, j = i+1, j-1 {
					it[i], it[j] = it[j], it[i]
				}
			case "sort", "unique":
				if len(x.Args) > 0 || len(x.Kw) > 0 {
					return nil, false
				}
				// The unknown items (data) go last: one order they may take (each sorting after the
				// known ones, none equal to one), which gives the known items their first places:
				// ['ss__', '__cla', x]|sort|join may be __class__ followed by x.
				var known, unknown [][]string
				for _, v := range it {
					switch {
					case wild(v):
						unknown = append(unknown, v)
					case len(v) != 1: // an item of many values: its place is not known
						return nil, false
					default:
						known = append(known, v)
					}
				}
				it = known
				sort.SliceStable(it, func(i, j int) bool { return strings.ToLower(it[i][0]) < strings.ToLower(it[j][0]) })
				if x.Name == "unique" {
					var u [][]string
					for i, v := range it {
						if i == 0 || !strings.EqualFold(v[0], it[i-1][0]) {
							u = append(u, v)
						}
					}
					it = u
				}
				it = append(it, unknown...)
			}
			return it, true
		case "map": // map('lower'), map('replace', 'a', 'b'): the filter applied to each item
			if len(x.Args) == 0 || len(x.Kw) > 0 {
				return nil, false
			}
			f, ok := a.one(x.Args[0])
			if !ok || f == "map" || f == "attr" {
				return nil, false
			}
			it, ok := a.items(x.X)
			if !ok {
				return nil, false
			}
			out := make([][]string, len(it))
			for i, v := range it {
				if wild(v) {
					out[i], a.inexact = unknownItem, true
					continue
				}
				var exprs []template.Expr
				for _, s := range v {
					exprs = append(exprs, &template.Filter{Off: x.Off, X: &template.Const{Off: x.Off, V: s}, Name: f, Args: x.Args[1:]})
				}
				vals, ok := a.values(exprs)
				if !ok {
					out[i], a.inexact = unknownItem, true
					continue
				}
				out[i] = vals
			}
			return out, true
		case "select", "reject": // without a test: the items true (false) as Python reads them
			if len(x.Args) > 0 || len(x.Kw) > 0 {
				return nil, false
			}
			it, ok := a.items(x.X)
			if !ok {
				return nil, false
			}
			var out [][]string
			for _, v := range it {
				switch truth(v) {
				case 1:
					if x.Name == "select" {
						out = append(out, v)
					}
				case 0:
					if x.Name == "reject" {
						out = append(out, v)
					}
				default: // kept or not, as the template runs: any string, in its place
					out, a.inexact = append(out, unknownItem), true
				}
			}
			return out, true
		}
	case *template.Binary:
		if x.Op == "+" {
			l, ok1 := a.items(x.L)
			r, ok2 := a.items(x.R)
			if ok1 && ok2 {
				if _, isStr := a.str(x.L); !isStr {
					return append(l, r...), true
				}
			}
		}
	case *template.Slice:
		if _, isStr := x.X.(*template.List); isStr {
			it, ok := a.items(x.X)
			if !ok {
				return nil, false
			}
			idx := make([]rune, len(it))
			for i := range idx {
				idx[i] = rune(i)
			}
			sel, ok := a.slice(idx, x)
			if !ok {
				return nil, false
			}
			out := make([][]string, len(sel))
			for i, k := range sel {
				out[i] = it[k]
			}
			return out, true
		}
	case *template.Call:
		if at, ok := x.Fn.(*template.Attr); ok && (at.Name == "split" || at.Name == "rsplit") && len(x.Args) >= 1 && len(x.Kw) == 0 {
			s, ok1 := a.str(at.X)
			sep, ok2 := a.str(x.Args[0])
			if ok1 && ok2 && len(s) == 1 && len(sep) == 1 && sep[0] != "" && len(x.Args) == 1 {
				var out [][]string
				for _, p := range strings.Split(s[0], sep[0]) {
					out = append(out, []string{p})
				}
				return out, true
			}
		}
	}
	s, ok := a.str(x)
	if !ok || len(s) != 1 || len(s[0]) > maxFolded {
		return nil, false
	}
	var out [][]string
	for _, r := range s[0] {
		out = append(out, []string{string(r)})
	}
	return out, true
}

// truth is whether an item of these values is true as Python reads it: 1, 0 (the empty string), or
// -1 when not known (a wild value; or a value a number or False folds to as well: 0 prints "0").
func truth(item []string) int {
	t := -1
	for _, v := range item {
		k := 1
		switch v {
		case "":
			k = 0
		case "0", "0.0", "-0.0", "False", "None":
			return -1
		}
		if strings.ContainsRune(v, wildStr) || strings.ContainsRune(v, wildChar) || t >= 0 && k != t {
			return -1
		}
		t = k
	}
	return t
}

func (a *analyzer) joined(items [][]string, sep string) ([]string, bool) {
	out := []string{""}
	for i, it := range items {
		next := it
		if i > 0 {
			next = make([]string, len(it))
			for j, q := range it {
				next[j] = sep + q
			}
		}
		var ok bool
		if out, ok = a.product(out, next); !ok {
			return nil, false
		}
	}
	return out, true
}

// mapStr applies f to every value of x.
func (a *analyzer) mapStr(x template.Expr, f func(string) (string, bool)) ([]string, bool) {
	s, ok := a.str(x)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(s))
	for _, v := range s {
		r, ok := f(v)
		if a.bytes -= len(r); !ok || a.bytes < 0 || len(r) > maxFolded*4 {
			return nil, false
		}
		out = append(out, r)
	}
	return out, true
}

// arg is the expression of a filter's or method's argument given by position i or by name.
func arg(args []template.Expr, kw []template.Kwarg, i int, name string) template.Expr {
	for _, k := range kw {
		if k.Name == name {
			return k.X
		}
	}
	if i >= 0 && i < len(args) {
		return args[i]
	}
	return nil
}

// one folds x to a single value.
func (a *analyzer) one(x template.Expr) (string, bool) {
	if x == nil {
		return "", false
	}
	s, ok := a.str(x)
	if !ok || len(s) != 1 {
		return "", false
	}
	return s[0], true
}

// size checks a width or count argument against MaxIterations, and folds it.
func (a *analyzer) size(x template.Expr, what string) (int, bool) {
	if x == nil {
		return 0, false
	}
	n, ok := a.num(x)
	if !ok {
		return 0, false
	}
	if n > MaxIterations {
		a.add(CodeExhaustion, true, template.Offset(x), "%s of %.3g (more than %d)", what, n, MaxIterations)
		return 0, false
	}
	return int(n), n == math.Trunc(n)
}

// pad is Python's str.center, ljust and rjust.
func pad(s string, width int, fill, align string) string {
	n := width - utf8.RuneCountInString(s)
	if n <= 0 {
		return s
	}
	switch align {
	case "<":
		return s + strings.Repeat(fill, n)
	case ">":
		return strings.Repeat(fill, n) + s
	}
	left := n / 2
	if n%2 == 1 && width%2 == 1 {
		left++
	}
	return strings.Repeat(fill, left) + s + strings.Repeat(fill, n-left)
}

func (a *analyzer) filter(x *template.Filter) ([]string, bool) {
	switch x.Name {
	case "join":
		items, ok := a.items(x.X)
		if !ok {
			return nil, false
		}
		sep := ""
		if d := arg(x.Args, x.Kw, 0, "d"); d != nil {
			if sep, ok = a.one(d); !ok {
				return nil, false
			}
		}
		if arg(x.Args, x.Kw, 1, "attribute") != nil {
			return nil, false
		}
		return a.joined(items, sep)
	case "format":
		f, ok := a.str(x.X)
		if !ok {
			return nil, false
		}
		kw := map[string]template.Expr{}
		for _, k := range x.Kw {
			kw[k.Name] = k.X
		}
		return a.percent(x.Off, f, x.Args, kw)
	case "default", "d":
		save := a.inexact
		s, ok1 := a.str(x.X)
		d, ok2 := a.str(arg(x.Args, x.Kw, 0, "default_value"))
		if arg(x.Args, x.Kw, 0, "default_value") == nil {
			d, ok2 = []string{""}, true
		}
		switch {
		case ok1 && ok2:
			return a.cap(append(s, d...)), true
		case ok2:
			a.inexact = true
			return d, true
		}
		a.inexact = save
		return nil, false
	case "first", "last", "random", "min", "max":
		if l := a.literal(x.X); l != nil && len(l.Items) > 0 && len(x.Args) == 0 && len(x.Kw) == 0 {
			switch x.Name { // that item alone, whatever the others
			case "first":
				return a.str(l.Items[0])
			case "last":
				return a.str(l.Items[len(l.Items)-1])
			case "random":
				return a.someItems(l)
			}
		}
		items, ok := a.items(x.X)
		if !ok || len(items) == 0 || len(x.Args) > 0 || len(x.Kw) > 0 {
			return nil, false
		}
		switch x.Name {
		case "first":
			return items[0], true
		case "last":
			return items[len(items)-1], true
		}
		var out []string
		for _, it := range items {
			out = append(out, it...)
		}
		return a.cap(out), true
	case "center":
		w := 80
		if e := arg(x.Args, x.Kw, 0, "width"); e != nil {
			var ok bool
			if w, ok = a.size(e, "|center to a width"); !ok {
				return nil, false
			}
		}
		return a.mapStr(x.X, func(s string) (string, bool) { return pad(s, w, " ", "^"), w <= maxFolded })
	case "indent":
		width := "    "
		if e := arg(x.Args, x.Kw, 0, "width"); e != nil {
			if c, ok := e.(*template.Const); ok {
				if s, ok := c.V.(string); ok {
					if c.Unknown {
						return nil, false
					}
					width = s
				}
			}
			if _, isStr := e.(*template.Const); !isStr || width == "    " {
				n, ok := a.size(e, "|indent by a width")
				if !ok {
					return nil, false
				}
				width = strings.Repeat(" ", min(max(n, 0), maxFolded))
			}
		}
		first := false
		if e := arg(x.Args, x.Kw, 1, "first"); e != nil {
			n, ok := a.num(e)
			if !ok {
				return nil, false
			}
			first = n != 0
		}
		if arg(x.Args, x.Kw, 2, "blank") != nil {
			return nil, false
		}
		return a.mapStr(x.X, func(s string) (string, bool) {
			lines := strings.Split(s, "\n")
			for i := range lines {
				if (i > 0 || first) && lines[i] != "" {
					lines[i] = width + lines[i]
				}
			}
			return strings.Join(lines, "\n"), true
		})
	case "truncate":
		length, leeway := 255, 5
		end := "..."
		killwords := false
		var ok bool
		if e := arg(x.Args, x.Kw, 0, "length"); e != nil {
			if length, ok = a.size(e, "|truncate to a length"); !ok {
				return nil, false
			}
		}
		if e := arg(x.Args, x.Kw, 1, "killwords"); e != nil {
			n, ok := a.num(e)
			if !ok {
				return nil, false
			}
			killwords = n != 0
		}
		if e := arg(x.Args, x.Kw, 2, "end"); e != nil {
			if end, ok = a.one(e); !ok {
				return nil, false
			}
		}
		if e := arg(x.Args, x.Kw, 3, "leeway"); e != nil {
			if leeway, ok = a.size(e, "|truncate leeway"); !ok {
				return nil, false
			}
		}
		return a.mapStr(x.X, func(s string) (string, bool) {
			r := []rune(s)
			if len(r) <= length+leeway {
				return s, true
			}
			cut := length - utf8.RuneCountInString(end)
			if cut < 0 {
				return "", false
			}
			if killwords {
				return string(r[:cut]) + end, true
			}
			head := string(r[:cut])
			if i := strings.LastIndexByte(head, ' '); i >= 0 {
				head = head[:i]
			}
			return head + end, true
		})
	case "replace":
		return a.replace(x.X, x.Args)
	case "trim":
		chars := ""
		hasChars := false
		if e := arg(x.Args, x.Kw, 0, "chars"); e != nil {
			var ok bool
			if chars, ok = a.one(e); !ok {
				return nil, false
			}
			hasChars = true
		}
		return a.mapStr(x.X, func(s string) (string, bool) {
			if hasChars {
				return strings.Trim(s, chars), true
			}
			return strings.TrimSpace(s), true
		})
	case "lower", "upper", "title", "capitalize", "string", "e", "escape", "forceescape", "safe", "reverse", "striptags", "urlencode":
		if x.Name == "reverse" {
			if _, isList := x.X.(*template.List); isList {
				return nil, false
			}
		}
		return a.mapStr(x.X, func(s string) (string, bool) { return strFunc(x.Name, s) })
	}
	return nil, false
}

// strFunc is a filter or method of one string argument.
func strFunc(name, s string) (string, bool) {
	switch name {
	case "lower", "casefold":
		return strings.ToLower(s), true
	case "upper":
		return strings.ToUpper(s), true
	case "swapcase":
		return strings.Map(func(r rune) rune {
			if unicode.IsUpper(r) {
				return unicode.ToLower(r)
			}
			return unicode.ToUpper(r)
		}, s), true
	case "title": // Jinja's: each word (split at -, spaces and opening brackets) capitalised
		var b strings.Builder
		start := true
		for _, r := range s {
			if strings.ContainsRune("-({[<", r) || unicode.IsSpace(r) {
				start = true
				b.WriteRune(r)
				continue
			}
			if start {
				r = unicode.ToUpper(r)
			} else {
				r = unicode.ToLower(r)
			}
			start = false
			b.WriteRune(r)
		}
		return b.String(), true
	case "pytitle": // Python's str.title
		var b strings.Builder
		prev := false
		for _, r := range s {
			if unicode.IsLetter(r) {
				if prev {
					r = unicode.ToLower(r)
				} else {
					r = unicode.ToUpper(r)
				}
				prev = true
			} else {
				prev = false
			}
			b.WriteRune(r)
		}
		return b.String(), true
	case "capitalize":
		s = strings.ToLower(s)
		if r, n := utf8.DecodeRuneInString(s); n > 0 {
			return string(unicode.ToUpper(r)) + s[n:], true
		}
		return s, true
	case "string", "safe":
		return s, true
	case "e", "escape", "forceescape":
		return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\"", "&#34;", "'", "&#39;").Replace(s), true
	case "reverse":
		r := []rune(s)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return string(r), true
	case "striptags":
		if strings.ContainsAny(s, "<&") {
			return "", false
		}
		return strings.Join(strings.Fields(s), " "), true
	case "urlencode":
		for _, r := range s {
			if !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_.-~/", r))) {
				return "", false
			}
		}
		return s, true
	case "strip":
		return strings.TrimSpace(s), true
	case "lstrip":
		return strings.TrimLeftFunc(s, unicode.IsSpace), true
	case "rstrip":
		return strings.TrimRightFunc(s, unicode.IsSpace), true
	}
	return "", false
}

// replace is str.replace(old, new[, count]) over every value.
func (a *analyzer) replace(x template.Expr, args []template.Expr) ([]string, bool) {
	if len(args) < 2 || len(args) > 3 {
		return nil, false
	}
	olds, ok1 := a.str(args[0])
	news, ok2 := a.str(args[1])
	if !ok1 || !ok2 {
		return nil, false
	}
	n := -1
	if len(args) == 3 {
		c, ok := a.num(args[2])
		if !ok {
			return nil, false
		}
		n = int(max(min(c, 1e6), -1))
	}
	s, ok := a.str(x)
	if !ok {
		return nil, false
	}
	var out []string
	for _, v := range s {
		for _, o := range olds {
			for _, w := range news {
				if o == "" && len(v)*len(w) > maxFolded || len(v)+strings.Count(v, o)*len(w) > maxFolded*4 {
					return nil, false
				}
				out = append(out, strings.Replace(v, o, w, n))
			}
		}
	}
	return a.cap(out), true
}

func (a *analyzer) call(x *template.Call) ([]string, bool) {
	if n, ok := x.Fn.(*template.Name); ok && n.Name == "lipsum" && !a.bound["lipsum"] {
		return nil, false
	}
	at, ok := x.Fn.(*template.Attr)
	if !ok {
		return nil, false
	}
	if n, ok := at.X.(*template.Name); ok && n.Name == "loop" && at.Name == "cycle" {
		return a.values(x.Args)
	}
	switch at.Name {
	case "get":
		if len(x.Args) == 0 || len(x.Args) > 2 {
			return nil, false
		}
		keys, ok := a.str(x.Args[0])
		if !ok {
			// a key known only when the template runs: any of a dict literal's values, or the
			// default ({'k': v}.get(x, d) is v or d, whatever x is)
			if len(x.Args) != 2 {
				return nil, false
			}
			a.inexact = true
			exprs := []template.Expr{x.Args[1]}
			if d, isDict := at.X.(*template.Dict); isDict {
				exprs = append(slices.Clone(d.Vals), x.Args[1])
			}
			return a.values(exprs)
		}
		var exprs []template.Expr
		for _, k := range keys {
			if m, ok := a.member(at.X, k); ok {
				exprs = append(exprs, m...)
			}
		}
		if len(x.Args) == 2 {
			exprs = append(exprs, x.Args[1])
		}
		if len(exprs) == 0 {
			return nil, false
		}
		return a.values(exprs)
	case "join":
		sep, ok := a.one(at.X)
		if !ok || len(x.Args) != 1 {
			return nil, false
		}
		items, ok := a.items(x.Args[0])
		if !ok {
			return nil, false
		}
		return a.joined(items, sep)
	case "format", "format_map":
		f, ok := a.str(at.X)
		if !ok {
			return nil, false
		}
		kw := map[string]template.Expr{}
		for _, k := range x.Kw {
			kw[k.Name] = k.X
		}
		args := x.Args
		if at.Name == "format_map" {
			if len(x.Args) != 1 {
				return nil, false
			}
			d, ok := x.Args[0].(*template.Dict)
			if !ok {
				return nil, false
			}
			for i, k := range d.Keys {
				if ks, ok := a.one(k); ok {
					kw[ks] = d.Vals[i]
				}
			}
			args = nil
		}
		return a.strFormat(x.Off, f, args, kw)
	case "replace":
		return a.replace(at.X, x.Args)
	case "lower", "upper", "title", "capitalize", "swapcase", "casefold", "strip", "lstrip", "rstrip":
		if len(x.Args) > 0 {
			if !strings.HasSuffix(at.Name, "strip") || len(x.Args) != 1 {
				return nil, false
			}
			chars, ok := a.one(x.Args[0])
			if !ok {
				return nil, false
			}
			return a.mapStr(at.X, func(s string) (string, bool) {
				switch at.Name {
				case "lstrip":
					return strings.TrimLeft(s, chars), true
				case "rstrip":
					return strings.TrimRight(s, chars), true
				}
				return strings.Trim(s, chars), true
			})
		}
		name := at.Name
		if name == "title" {
			name = "pytitle"
		}
		return a.mapStr(at.X, func(s string) (string, bool) { return strFunc(name, s) })
	case "removeprefix", "removesuffix":
		if len(x.Args) != 1 {
			return nil, false
		}
		p, ok := a.one(x.Args[0])
		if !ok {
			return nil, false
		}
		return a.mapStr(at.X, func(s string) (string, bool) {
			if at.Name == "removeprefix" {
				return strings.TrimPrefix(s, p), true
			}
			return strings.TrimSuffix(s, p), true
		})
	case "center", "ljust", "rjust", "zfill":
		if len(x.Args) == 0 || len(x.Args) > 2 {
			return nil, false
		}
		w, ok := a.size(x.Args[0], "str."+at.Name+" to a width")
		if !ok || w > maxFolded {
			return nil, false
		}
		fill := " "
		if at.Name == "zfill" {
			fill = "0"
		}
		if len(x.Args) == 2 {
			if fill, ok = a.one(x.Args[1]); !ok || utf8.RuneCountInString(fill) != 1 {
				return nil, false
			}
		}
		align := map[string]string{"center": "^", "ljust": "<", "rjust": ">", "zfill": ">"}[at.Name]
		return a.mapStr(at.X, func(s string) (string, bool) {
			if at.Name == "zfill" && (strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+")) {
				return s[:1] + pad(s[1:], w-1, fill, align), true
			}
			return pad(s, w, fill, align), true
		})
	case "expandtabs":
		if len(x.Args) == 1 {
			a.size(x.Args[0], "str.expandtabs to a tab size")
		}
	}
	return nil, false
}

// percent applies Python's printf-style formatting (what |format and % do) to every value of the
// format, as far as its arguments fold: %c of a variable gives wildChar, %s of one wildStr. A
// width or precision past MaxIterations is reported (off is the expression's offset).
func (a *analyzer) percent(off int, fs []string, args []template.Expr, kw map[string]template.Expr) ([]string, bool) {
	var all []string
	for _, f := range fs {
		out, ok := a.percent1(off, f, args, kw)
		if !ok {
			return nil, false
		}
		all = append(all, out...)
	}
	return a.cap(all), true
}

func (a *analyzer) percent1(off int, f string, args []template.Expr, kw map[string]template.Expr) ([]string, bool) {
	out := []string{""}
	k := 0
	next := func() (template.Expr, bool) {
		if k >= len(args) {
			return nil, false
		}
		k++
		return args[k-1], true
	}
	emit := func(vs ...string) bool {
		var ok bool
		out, ok = a.product(out, vs)
		return ok
	}
	lit := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		if !emit(f[lit:i]) {
			return nil, false
		}
		i++
		if i >= len(f) {
			return nil, false
		}
		var val template.Expr
		if f[i] == '(' {
			depth, j := 1, i+1
			for ; j < len(f) && depth > 0; j++ {
				switch f[j] {
				case '(':
					depth++
				case ')':
					depth--
				}
			}
			if depth > 0 {
				return nil, false
			}
			v, ok := kw[f[i+1:j-1]]
			if !ok {
				return nil, false
			}
			val, i = v, j
		}
		flags := ""
		for i < len(f) && strings.IndexByte("#0- +", f[i]) >= 0 {
			flags += f[i : i+1]
			i++
		}
		num := func(what string) (int, bool) {
			if i < len(f) && f[i] == '*' {
				i++
				e, ok := next()
				if !ok {
					return 0, false
				}
				return a.size(e, "a % format "+what)
			}
			j := i
			for i < len(f) && f[i] >= '0' && f[i] <= '9' {
				i++
			}
			if j == i {
				return -1, true
			}
			n, err := strconv.ParseFloat(f[j:i], 64)
			if err != nil || n > MaxIterations {
				a.add(CodeExhaustion, true, off, "a %% format %s of %s (more than %d)", what, f[j:i], MaxIterations)
				return 0, false
			}
			return int(n), true
		}
		width, ok := num("width")
		if !ok {
			return nil, false
		}
		prec := -1
		if i < len(f) && f[i] == '.' {
			i++
			if prec, ok = num("precision"); !ok {
				return nil, false
			}
			prec = max(prec, 0)
		}
		for i < len(f) && strings.IndexByte("hlL", f[i]) >= 0 {
			i++
		}
		if i >= len(f) {
			return nil, false
		}
		conv := f[i]
		lit = i + 1
		if conv == '%' {
			if !emit("%") {
				return nil, false
			}
			continue
		}
		if val == nil {
			if val, ok = next(); !ok {
				return nil, false
			}
		}
		vals, ok := a.conv(conv, flags, prec, val)
		if !ok {
			return nil, false
		}
		align := ">"
		fill := " "
		if strings.Contains(flags, "-") {
			align = "<"
		} else if strings.Contains(flags, "0") && strings.IndexByte("sraAc", conv) < 0 {
			fill = "0"
		}
		if width > maxFolded {
			return nil, false
		}
		for j, v := range vals {
			vals[j] = zeroPad(v, width, fill, align)
		}
		if !emit(vals...) {
			return nil, false
		}
	}
	if !emit(f[lit:]) {
		return nil, false
	}
	if len(kw) == 0 && k < len(args) {
		return nil, false // not all arguments converted: TypeError
	}
	return out, true
}

// conv is one printf-style conversion of val.
func (a *analyzer) conv(conv byte, flags string, prec int, val template.Expr) ([]string, bool) {
	switch conv {
	case 's', 'r', 'a':
		_, isNum := a.num(val)
		vals := a.orWild(val)
		out := make([]string, len(vals))
		for i, v := range vals {
			if conv != 's' && !isNum && !strings.ContainsRune(v, wildStr) {
				v = pyRepr(v, conv == 'a')
			}
			if prec >= 0 && !strings.ContainsRune(v, wildStr) {
				if r := []rune(v); len(r) > prec {
					v = string(r[:prec])
				}
			}
			out[i] = v
		}
		return out, true
	case 'c':
		if n, ok := a.num(val); ok {
			if n < 0 || n > unicode.MaxRune || n != math.Trunc(n) {
				return nil, false
			}
			return []string{string(rune(n))}, true
		}
		if s, ok := a.str(val); ok {
			for _, v := range s {
				if utf8.RuneCountInString(v) != 1 {
					a.inexact = true
					return []string{string(wildChar)}, true
				}
			}
			return s, true
		}
		a.inexact = true
		return []string{string(wildChar)}, true
	case 'd', 'i', 'u', 'x', 'X', 'o', 'e', 'E', 'f', 'F', 'g', 'G':
		n, ok := a.num(val)
		if !ok {
			return nil, false // a number rendered from a variable: digits, never a name
		}
		if prec > maxFolded {
			return nil, false
		}
		return []string{printfNum(conv, flags, prec, n)}, true
	}
	return nil, false
}

// printfNum formats a number as Python's % does for the numeric conversions.
func printfNum(conv byte, flags string, prec int, n float64) string {
	sign := ""
	switch {
	case n < 0:
		sign, n = "-", -n
	case strings.Contains(flags, "+"):
		sign = "+"
	case strings.Contains(flags, " "):
		sign = " "
	}
	alt := strings.Contains(flags, "#")
	var body string
	switch conv {
	case 'd', 'i', 'u':
		body = strconv.FormatFloat(math.Trunc(n), 'f', 0, 64)
	case 'x', 'X', 'o':
		base := map[byte]int{'x': 16, 'X': 16, 'o': 8}[conv]
		if n > 1<<62 {
			body = "?"
		} else {
			body = strconv.FormatInt(int64(n), base)
		}
		if conv == 'X' {
			body = strings.ToUpper(body)
		}
		if alt {
			body = map[byte]string{'x': "0x", 'X': "0X", 'o': "0o"}[conv] + body
		}
	default:
		if prec < 0 {
			prec = 6
		}
		c := conv
		if c == 'F' {
			c = 'f'
		}
		body = strconv.FormatFloat(n, c, prec, 64)
		if conv == 'F' {
			body = strings.ToUpper(body)
		}
	}
	return sign + body
}

// pyNum is Python's str of a number.
func pyNum(n float64) string {
	if n == math.Trunc(n) && math.Abs(n) < 1e16 {
		return strconv.FormatFloat(n, 'f', 0, 64)
	}
	return strconv.FormatFloat(n, 'g', -1, 64)
}

// pyFloat is Python's str of a float.
func pyFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case math.IsNaN(v):
		return "nan"
	case v == 0 || math.Abs(v) >= 1e-4 && math.Abs(v) < 1e16:
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	return strconv.FormatFloat(v, 'e', -1, 64)
}

// pyRepr is Python's repr (ascii when asc) of a string.
func pyRepr(s string, asc bool) string {
	q := "'"
	if strings.Contains(s, "'") && !strings.Contains(s, "\"") {
		q = "\""
	}
	var b strings.Builder
	b.WriteString(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case string(r) == q:
			b.WriteString(`\` + q)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x` + strconv.FormatInt(int64(r)+0x100, 16)[1:])
		case asc && r > 0xff:
			if r > 0xffff {
				b.WriteString(`\U` + strconv.FormatInt(int64(r)+1<<32, 16)[1:])
			} else {
				b.WriteString(`\u` + strconv.FormatInt(int64(r)+0x10000, 16)[1:])
			}
		case asc && r > 0x7f:
			b.WriteString(`\x` + strconv.FormatInt(int64(r)+0x100, 16)[1:])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString(q)
	return b.String()
}

// strFormat applies str.format to every value of the format: replacement fields of the arguments
// fold (an attribute or item of one, or one that does not fold, gives wildStr), with their fill,
// alignment, width and precision; a width past MaxIterations is reported.
func (a *analyzer) strFormat(off int, fs []string, args []template.Expr, kw map[string]template.Expr) ([]string, bool) {
	var all []string
	for _, f := range fs {
		out, ok := a.strFormat1(off, f, args, kw)
		if !ok {
			return nil, false
		}
		all = append(all, out...)
	}
	return a.cap(all), true
}

func (a *analyzer) strFormat1(off int, f string, args []template.Expr, kw map[string]template.Expr) ([]string, bool) {
	out := []string{""}
	emit := func(vs ...string) bool {
		var ok bool
		out, ok = a.product(out, vs)
		return ok
	}
	auto := 0
	var lit strings.Builder
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c == '}' {
			if i+1 < len(f) && f[i+1] == '}' {
				i++
			}
			lit.WriteByte('}')
			continue
		}
		if c != '{' {
			lit.WriteByte(c)
			continue
		}
		if i+1 < len(f) && f[i+1] == '{' {
			lit.WriteByte('{')
			i++
			continue
		}
		end := strings.IndexByte(f[i:], '}')
		if end < 0 {
			return nil, false
		}
		field := f[i+1 : i+end]
		if strings.ContainsRune(field, '{') {
			return nil, false // nested replacement fields in the spec
		}
		i += end
		if !emit(lit.String()) {
			return nil, false
		}
		lit.Reset()
		spec := ""
		if j := strings.IndexByte(field, ':'); j >= 0 {
			field, spec = field[:j], field[j+1:]
		}
		conv := ""
		if j := strings.IndexByte(field, '!'); j >= 0 {
			field, conv = field[:j], field[j+1:]
		}
		name, rest := field, ""
		if j := strings.IndexAny(field, ".["); j >= 0 {
			name, rest = field[:j], field[j:]
		}
		var val template.Expr
		switch {
		case name == "":
			if auto < len(args) {
				val = args[auto]
			}
			auto++
		case name[0] >= '0' && name[0] <= '9':
			n, err := strconv.Atoi(name)
			if err == nil && n < len(args) {
				val = args[n]
			}
		default:
			val = kw[name]
		}
		if val == nil {
			return nil, false
		}
		vals, ok := a.formatField(off, val, rest, conv, spec)
		if !ok {
			return nil, false
		}
		if !emit(vals...) {
			return nil, false
		}
	}
	if !emit(lit.String()) {
		return nil, false
	}
	return out, true
}

// formatField is one replacement field of str.format.
func (a *analyzer) formatField(off int, val template.Expr, rest, conv, spec string) ([]string, bool) {
	// [[fill]align][sign][z][#][0][width][grouping][.precision][type]
	fill, align := " ", ""
	if r, n := utf8.DecodeRuneInString(spec); n > 0 && n < len(spec) && strings.IndexByte("<>^=", spec[n]) >= 0 {
		fill, align, spec = string(r), spec[n:n+1], spec[n+1:]
	} else if spec != "" && strings.IndexByte("<>^=", spec[0]) >= 0 {
		align, spec = spec[:1], spec[1:]
	}
	flags := ""
	for spec != "" && strings.IndexByte("+- z#", spec[0]) >= 0 {
		flags += spec[:1]
		spec = spec[1:]
	}
	if strings.HasPrefix(spec, "0") && align == "" {
		fill, align = "0", "="
	}
	j := 0
	for j < len(spec) && spec[j] >= '0' && spec[j] <= '9' {
		j++
	}
	width := 0
	if j > 0 {
		w, err := strconv.ParseFloat(spec[:j], 64)
		if err != nil || w > MaxIterations {
			a.add(CodeExhaustion, true, off, "a str.format width of %s (more than %d)", spec[:j], MaxIterations)
			return nil, false
		}
		width = int(w)
	}
	spec = strings.TrimLeft(spec[j:], ",_")
	prec := -1
	if strings.HasPrefix(spec, ".") {
		k := 1
		for k < len(spec) && spec[k] >= '0' && spec[k] <= '9' {
			k++
		}
		p, err := strconv.ParseFloat(spec[1:k], 64)
		if err != nil {
			return nil, false
		}
		if p > MaxIterations {
			a.add(CodeExhaustion, true, off, "a str.format precision of %s (more than %d)", spec[1:k], MaxIterations)
			return nil, false
		}
		prec, spec = int(p), spec[k:]
	}
	typ := spec
	if len(typ) > 1 || width > maxFolded || prec > maxFolded {
		return nil, false
	}
	var vals []string
	switch {
	case rest != "":
		a.inexact = true
		vals = []string{string(wildStr)} // an attribute or item of the argument (private ones: fieldRef)
	case typ == "c":
		n, ok := a.num(val)
		if !ok {
			a.inexact = true
			vals = []string{string(wildChar)}
		} else if n < 0 || n > unicode.MaxRune {
			return nil, false
		} else {
			vals = []string{string(rune(n))}
		}
	case typ != "" && typ != "s":
		n, ok := a.num(val)
		if !ok {
			return nil, false
		}
		c := typ[0]
		if c == 'n' {
			c = 'd'
		} else if c == 'b' || c == '%' {
			return nil, false
		}
		vals = []string{printfNum(c, flags, prec, n)}
	default:
		vals = a.orWild(val)
		for i, v := range vals {
			if (conv == "r" || conv == "a") && !strings.ContainsRune(v, wildStr) {
				v = pyRepr(v, conv == "a")
			}
			if prec >= 0 && !strings.ContainsRune(v, wildStr) {
				if r := []rune(v); len(r) > prec {
					v = string(r[:prec])
				}
			}
			vals[i] = v
		}
		if align == "" {
			align = "<"
		}
	}
	if align == "" {
		align = ">"
	}
	if align == "=" {
		align = ">"
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = zeroPad(v, width, fill, align)
	}
	return out, true
}

// zeroPad pads a value to width; zeros go after a number's sign and base prefix.
func zeroPad(v string, width int, fill, align string) string {
	if fill != "0" || align != ">" {
		return pad(v, width, fill, align)
	}
	head := ""
	if v != "" && strings.IndexByte("+- ", v[0]) >= 0 {
		head, v = v[:1], v[1:]
	}
	if len(v) > 1 && v[0] == '0' && strings.IndexByte("xXob", v[1]) >= 0 {
		head, v = head+v[:2], v[2:]
	}
	return head + pad(v, width-len(head), fill, align)
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
		if !ok1 {
			return 0, false
		}
		r, ok2 := a.num(x.R)
		if !ok2 {
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
			return math.Pow(l, r), true
		case "/":
			if r != 0 {
				return l / r, true
			}
		case "//":
			if r != 0 {
				return math.Floor(l / r), true
			}
		case "%":
			if r != 0 {
				m := math.Mod(l, r)
				if m != 0 && (m < 0) != (r < 0) {
					m += r
				}
				return m, true
			}
		}
	case *template.Name:
		if vals := a.sets[x.Name]; len(vals) == 1 && len(a.loops[x.Name]) == 0 && !a.opaque[x.Name] {
			return a.num(vals[0])
		}
	case *template.Filter:
		switch x.Name {
		case "int", "float", "abs", "round":
			v, ok := a.num(x.X)
			if !ok && x.Name != "abs" && x.Name != "round" {
				if s, isStr := a.one(x.X); isStr {
					f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
					v, ok = f, err == nil
				}
			}
			if !ok {
				return 0, false
			}
			switch x.Name {
			case "int":
				v = math.Trunc(v)
			case "abs":
				v = math.Abs(v)
			}
			return v, true
		case "length", "count":
			if s, ok := a.str(x.X); ok && len(s) == 1 {
				return float64(utf8.RuneCountInString(s[0])), true
			}
			return a.count(x.X)
		}
	}
	return 0, false
}

// count is how many items iterating x gives, when constants say: range() of constants, a constant
// list or string, one repeated.
func (a *analyzer) count(x template.Expr) (float64, bool) {
	switch x := x.(type) {
	case *template.Call:
		if n, ok := x.Fn.(*template.Name); ok && n.Name == "range" && !a.bound["range"] {
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
				return max(math.Ceil((v[1]-v[0])/v[2]), 0), true
			}
		}
	case *template.List:
		return float64(len(x.Items)), true
	case *template.Const:
		if s, ok := x.V.(string); ok {
			return float64(utf8.RuneCountInString(s)), true
		}
	case *template.Name:
		if vals := a.sets[x.Name]; len(vals) == 1 && len(a.loops[x.Name]) == 0 && !a.opaque[x.Name] {
			a.folds--
			if a.folds < 0 {
				return 0, false
			}
			return a.count(vals[0])
		}
	case *template.Binary:
		if x.Op == "*" {
			if r, ok := a.num(x.R); ok {
				if l, ok := a.count(x.L); ok {
					return l * max(r, 0), true
				}
			}
			if l, ok := a.num(x.L); ok {
				if r, ok := a.count(x.R); ok {
					return r * max(l, 0), true
				}
			}
		}
	case *template.Filter:
		switch x.Name {
		case "list", "reverse", "sort", "string":
			return a.count(x.X)
		}
	}
	return 0, false
}
