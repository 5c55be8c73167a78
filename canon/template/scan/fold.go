package scan

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stdiff/stdiff/canon/template"
)

// maxFolded bounds the length of a string folded from constants: longer ones are not followed (a
// name is short; what builds a long string is checked as exhaustion).
const maxFolded = 4096

// repeated folds s * n and n * s.
func (a *analyzer) repeated(x *template.Binary) ([]string, bool) {
	s, n, ok := a.strTimes(x.L, x.R)
	if !ok {
		s, n, ok = a.strTimes(x.R, x.L)
	}
	if !ok || n < 0 {
		return nil, n < 0 && ok
	}
	out := make([]string, 0, len(s))
	for _, v := range s {
		if float64(len(v))*n > maxFolded {
			return nil, false
		}
		out = append(out, strings.Repeat(v, int(n)))
	}
	return out, true
}

// strTimes folds a string expression s and a whole number n.
func (a *analyzer) strTimes(s, n template.Expr) ([]string, float64, bool) {
	k, ok := a.num(n)
	if !ok || k != float64(int64(k)) {
		return nil, 0, false
	}
	v, ok := a.str(s)
	return v, max(k, 0), ok
}

// percent folds f % args: a tuple of arguments, or one.
func (a *analyzer) percent(x *template.Binary) ([]string, bool) {
	f, ok := a.str(x.L)
	if !ok || len(f) != 1 {
		return nil, false
	}
	items := []template.Expr{x.R}
	if l, ok := x.R.(*template.List); ok && l.Tuple {
		items = l.Items
	}
	args := make([][]string, len(items))
	for i, it := range items {
		if args[i], ok = a.str(it); !ok || len(args[i]) != 1 {
			return nil, false
		}
	}
	return percentFormat(f[0], args)
}

// percentFormat applies Python's % formatting, as |format and % do: the conversions s, r, a (the
// string; r and a would quote it, which only makes a name less of one), d, i, x, X, o (of whole
// numbers), c (a number's character, or a one-character string) and %%, with flags, width and
// precision. Anything else cannot be folded.
func percentFormat(f string, args [][]string) ([]string, bool) {
	var b strings.Builder
	k := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		j := i + 1
		flags := ""
		for j < len(f) && strings.IndexByte("-+ #0", f[j]) >= 0 {
			flags += f[j : j+1]
			j++
		}
		width, prec := 0, -1
		for j < len(f) && f[j] >= '0' && f[j] <= '9' {
			width = width*10 + int(f[j]-'0')
			j++
		}
		if j < len(f) && f[j] == '.' {
			prec = 0
			for j++; j < len(f) && f[j] >= '0' && f[j] <= '9'; j++ {
				prec = prec*10 + int(f[j]-'0')
			}
		}
		if j >= len(f) || width > maxFolded || prec > maxFolded {
			return nil, false
		}
		i = j
		if f[j] == '%' {
			b.WriteByte('%')
			continue
		}
		if k >= len(args) {
			return nil, false
		}
		arg := args[k][0]
		k++
		var v string
		switch f[j] {
		case 's', 'r', 'a':
			v = arg
			if prec >= 0 && prec < utf8.RuneCountInString(v) {
				v = string([]rune(v)[:prec])
			}
		case 'd', 'i', 'x', 'X', 'o':
			n, err := strconv.ParseInt(arg, 10, 64)
			if err != nil {
				return nil, false
			}
			base := map[byte]int{'d': 10, 'i': 10, 'x': 16, 'X': 16, 'o': 8}[f[j]]
			v = strconv.FormatInt(n, base)
			if f[j] == 'X' {
				v = strings.ToUpper(v)
			}
			if strings.Contains(flags, "#") && base != 10 {
				v = "0" + map[byte]string{'x': "x", 'X': "X", 'o': "o"}[f[j]] + v
			}
		case 'c':
			if n, err := strconv.ParseInt(arg, 10, 64); err == nil && n >= 0 && n <= unicode.MaxRune {
				v = string(rune(n))
			} else if utf8.RuneCountInString(arg) == 1 {
				v = arg
			} else {
				return nil, false
			}
		default:
			return nil, false
		}
		if pad := width - utf8.RuneCountInString(v); pad > 0 {
			fill := " "
			if strings.Contains(flags, "0") && !strings.Contains(flags, "-") && strings.IndexByte("dixXo", f[j]) >= 0 {
				fill = "0"
			}
			if strings.Contains(flags, "-") {
				v += strings.Repeat(" ", pad)
			} else {
				v = strings.Repeat(fill, pad) + v
			}
		}
		b.WriteString(v)
	}
	return []string{b.String()}, true
}

// strFormat folds f.format(args…): fields {}, {0}, {name}, without conversions or format specs.
func (a *analyzer) strFormat(fx template.Expr, call *template.Call) ([]string, bool) {
	f, ok := a.str(fx)
	if !ok || len(f) != 1 {
		return nil, false
	}
	pos := make([]string, len(call.Args))
	for i, arg := range call.Args {
		v, ok := a.str(arg)
		if !ok || len(v) != 1 {
			return nil, false
		}
		pos[i] = v[0]
	}
	kw := map[string]string{}
	for _, k := range call.Kw {
		v, ok := a.str(k.X)
		if !ok || len(v) != 1 {
			return nil, false
		}
		kw[k.Name] = v[0]
	}
	var b strings.Builder
	auto := 0
	s := f[0]
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '{' && i+1 < len(s) && s[i+1] == '{', c == '}' && i+1 < len(s) && s[i+1] == '}':
			b.WriteByte(c)
			i++
		case c == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return nil, false
			}
			field := s[i+1 : i+end]
			i += end
			var v string
			if n, err := strconv.Atoi(field); err == nil && n >= 0 && n < len(pos) {
				v = pos[n]
			} else if field == "" && auto < len(pos) {
				v = pos[auto]
				auto++
			} else if w, ok := kw[field]; ok {
				v = w
			} else {
				return nil, false
			}
			b.WriteString(v)
		default:
			b.WriteByte(c)
		}
		if b.Len() > maxFolded {
			return nil, false
		}
	}
	return []string{b.String()}, true
}

// item is the expression x[key] stands for when x is a dict or list literal (or a name set to one)
// and key a constant.
func (a *analyzer) item(x, key template.Expr) (template.Expr, bool) {
	if n, ok := x.(*template.Name); ok && len(a.sets[n.Name]) == 1 {
		x = a.sets[n.Name][0]
	}
	switch x := x.(type) {
	case *template.Dict:
		k, ok := a.str(key)
		if !ok || len(k) != 1 {
			return nil, false
		}
		for i := len(x.Keys) - 1; i >= 0; i-- { // the last of a key written twice
			if kk, ok := a.str(x.Keys[i]); ok && len(kk) == 1 && kk[0] == k[0] {
				return x.Vals[i], true
			}
		}
	case *template.List:
		n, ok := a.num(key)
		if !ok || n != float64(int(n)) {
			return nil, false
		}
		if n < 0 {
			n += float64(len(x.Items))
		}
		if n >= 0 && int(n) < len(x.Items) {
			return x.Items[int(n)], true
		}
	}
	return nil, false
}

// sliced folds s[lo:hi:step] of a constant string, as Python slices it.
func (a *analyzer) sliced(x *template.Slice) ([]string, bool) {
	s, ok := a.str(x.X)
	if !ok || len(s) != 1 {
		return nil, false
	}
	r := []rune(s[0])
	n := len(r)
	bound := func(e template.Expr, def int) (int, bool) {
		if e == nil {
			return def, true
		}
		v, ok := a.num(e)
		if !ok || v != float64(int(v)) {
			return 0, false
		}
		return int(v), true
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
	clamp := func(i int) int {
		if i < 0 {
			i += n
		}
		if step > 0 {
			return min(max(i, 0), n)
		}
		return min(max(i, -1), n-1)
	}
	lo, hi = clamp(lo), clamp(hi)
	var out []rune
	for i := lo; step > 0 && i < hi || step < 0 && i > hi; i += step {
		out = append(out, r[i])
	}
	return []string{string(out)}, true
}

// member folds ns.x: what {% set ns.x = … %} and namespace(x=…) set it to.
func (a *analyzer) member(x *template.Attr) ([]string, bool) {
	n, ok := x.X.(*template.Name)
	if !ok {
		return nil, false
	}
	vals := append([]template.Expr(nil), a.sets[n.Name+"."+x.Name]...)
	for _, v := range a.sets[n.Name] {
		if c, ok := v.(*template.Call); ok {
			if fn, ok := c.Fn.(*template.Name); ok && fn.Name == "namespace" {
				for _, k := range c.Kw {
					if k.Name == x.Name {
						vals = append(vals, k.X)
					}
				}
			}
		}
	}
	return a.strAll(vals)
}

// strAll folds each of vals, the values a name may have: the values they may take, none when one of
// them cannot be folded or there are none.
func (a *analyzer) strAll(vals []template.Expr) ([]string, bool) {
	if len(vals) == 0 {
		return nil, false
	}
	var out []string
	for _, v := range vals {
		s, ok := a.str(v)
		if !ok {
			return nil, false
		}
		out = append(out, s...)
	}
	return cap16(out), true
}

// caseOf is v|title or v|capitalize.
func caseOf(filter, v string) string {
	if filter == "capitalize" {
		r := []rune(strings.ToLower(v))
		if len(r) > 0 {
			r[0] = unicode.ToUpper(r[0])
		}
		return string(r)
	}
	r := []rune(v)
	prev := false
	for i, c := range r {
		if prev {
			r[i] = unicode.ToLower(c)
		} else {
			r[i] = unicode.ToUpper(c)
		}
		prev = unicode.IsLetter(c) || unicode.IsDigit(c)
	}
	return string(r)
}

// macroArgs adds to the values each macro parameter is set to the arguments of every call of the
// macro: a name passed in as a literal is folded like one set.
func (a *analyzer) macroArgs(nodes []template.Node) {
	eachExpr(nodes, func(x template.Expr) {
		c, ok := x.(*template.Call)
		if !ok {
			return
		}
		fn, ok := c.Fn.(*template.Name)
		if !ok {
			return
		}
		m := a.macros[fn.Name]
		if m == nil {
			return
		}
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

// eachExpr calls fn on every expression of nodes, and on every expression within each.
func eachExpr(nodes []template.Node, fn func(template.Expr)) {
	var walk func(x template.Expr)
	walk = func(x template.Expr) {
		if x == nil {
			return
		}
		fn(x)
		switch x := x.(type) {
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

// sizeArgs are the arguments of filters and globals that size what they make: |center(width),
// |indent(width), lipsum(n) (paragraphs of up to 100 words each), and range's bounds.
var sizeArgs = map[string]struct {
	kw     string
	pos    int
	weight float64
}{
	"center": {"width", 0, 1},
	"indent": {"width", 0, 1},
	"lipsum": {"n", 0, 100},
}

// exhausts reports CodeExhaustion for a filter or call whose size argument folds past MaxIterations.
func (a *analyzer) exhausts(name string, off int, args []template.Expr, kw []template.Kwarg) {
	sa, ok := sizeArgs[name]
	if !ok {
		return
	}
	var arg template.Expr
	if sa.pos < len(args) {
		arg = args[sa.pos]
	}
	for _, k := range kw {
		if k.Name == sa.kw {
			arg = k.X
		}
	}
	if arg == nil {
		return
	}
	a.folds = 10000
	if n, ok := a.num(arg); ok && n*sa.weight > MaxIterations {
		a.add(CodeExhaustion, true, off, "%s(%.3g) makes more than %d characters", name, n, MaxIterations)
	}
}
