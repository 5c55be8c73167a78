package template

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// globals are the names a template may call besides its data: transformers' chat-template globals and
// Jinja's harmless ones.
var globals = map[string]any{
	"range": fn(func(r *renderer, args []any, kw *Map) (any, error) {
		var v [3]int64
		v[2] = 1
		if len(args) == 0 || len(args) > 3 {
			return nil, fmt.Errorf("range takes 1 to 3 arguments")
		}
		for i, a := range args {
			n, ok := a.(int64)
			if !ok {
				return nil, fmt.Errorf("range of a %s", typeName(a))
			}
			v[i] = n
		}
		start, stop, step := int64(0), v[0], int64(1)
		if len(args) > 1 {
			start, stop, step = v[0], v[1], v[2]
		}
		if step == 0 {
			return nil, fmt.Errorf("range step cannot be zero")
		}
		n := (stop - start + step - sign(step)) / step
		if n > 100_000 { // Jinja's sandbox refuses larger ranges (MAX_RANGE)
			return nil, fmt.Errorf("%w: a range of more than 100000 items", ErrLimit)
		}
		out := make([]any, 0, max(n, 0))
		for i := int64(0); i < n; i++ {
			out = append(out, start+i*step)
		}
		return out, nil
	}),
	"namespace": fn(func(r *renderer, args []any, kw *Map) (any, error) {
		ns := &namespace{m: NewMap()}
		for _, a := range args {
			if m, ok := a.(*Map); ok {
				for _, k := range m.keys {
					ns.m.Set(k, m.vals[k])
				}
			}
		}
		if kw != nil {
			for _, k := range kw.keys {
				ns.m.Set(k, kw.vals[k])
			}
		}
		return ns, nil
	}),
	"dict": fn(func(r *renderer, args []any, kw *Map) (any, error) {
		m := NewMap()
		if kw != nil {
			for _, k := range kw.keys {
				m.Set(k, kw.vals[k])
			}
		}
		return m, nil
	}),
	"raise_exception": fn(func(r *renderer, args []any, kw *Map) (any, error) {
		msg := ""
		if len(args) > 0 {
			msg = str(args[0])
		}
		return nil, fmt.Errorf("the template raised an exception: %s", msg)
	}),
	"strftime_now": fn(func(r *renderer, args []any, kw *Map) (any, error) {
		if len(args) == 0 {
			return nil, fmt.Errorf("strftime_now takes a format")
		}
		return strftime(str(args[0])), nil
	}),
}

func sign(n int64) int64 {
	if n < 0 {
		return -1
	}
	return 1
}

// strftime formats the fixed date 26 July 2024 (a Friday), so renderings compare.
func strftime(f string) string {
	r := strings.NewReplacer("%d", "26", "%b", "Jul", "%B", "July", "%Y", "2024", "%y", "24", "%m", "07",
		"%A", "Friday", "%a", "Fri", "%H", "00", "%M", "00", "%S", "00", "%-d", "26", "%j", "208", "%%", "%")
	return r.Replace(f)
}

func kwOr(kw *Map, name string, args []any, i int) (any, bool) {
	if kw != nil {
		if v, ok := kw.Get(name); ok {
			return v, true
		}
	}
	if i >= 0 && i < len(args) {
		return args[i], true
	}
	return nil, false
}

// attrPath reads a dotted attribute path (map(attribute='a.b')) of v.
func attrPath(v any, path string) (any, error) {
	for _, p := range strings.Split(path, ".") {
		var err error
		if n, e := strconv.ParseInt(p, 10, 64); e == nil {
			v, err = getItem(v, n, 0)
		} else {
			v, err = getAttr(v, p, 0)
			if _, und := v.(undefined); und && err == nil {
				v, err = getItem(v, p, 0)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return v, nil
}

func (r *renderer) filter(f *Filter, v any, sc *scope) (any, error) {
	args, kw, err := r.args(f.Args, f.Kw, sc)
	if err != nil {
		return nil, err
	}
	out, err := r.applyFilter(f.Name, v, args, kw, sc)
	if err != nil {
		if _, ok := err.(*RenderError); ok {
			return nil, err
		}
		return nil, &RenderError{Pos: f.Off, Err: err}
	}
	return out, nil
}

func (r *renderer) applyFilter(name string, v any, args []any, kw *Map, sc *scope) (any, error) {
	switch name {
	case "length", "count":
		switch v := v.(type) {
		case string:
			return int64(len([]rune(v))), nil
		case []any:
			return int64(len(v)), nil
		case *Map:
			return int64(v.Len()), nil
		case nil, undefined:
			return int64(0), nil
		}
		return nil, fmt.Errorf("length of a %s", typeName(v))
	case "trim":
		return strings.TrimSpace(str(v)), nil
	case "upper":
		return strings.ToUpper(str(v)), nil
	case "lower":
		return strings.ToLower(str(v)), nil
	case "title":
		return title(str(v)), nil
	case "capitalize":
		s := strings.ToLower(str(v))
		for i, c := range s {
			return s[:i] + string(unicode.ToUpper(c)) + s[i+len(string(c)):], nil
		}
		return s, nil
	case "string":
		return str(v), nil
	case "safe", "e", "escape", "forceescape":
		if name == "safe" {
			return v, nil
		}
		return escape(str(v)), nil
	case "tojson":
		indent := 0
		if x, ok := kwOr(kw, "indent", args, 0); ok {
			if n, ok := x.(int64); ok {
				indent = int(n)
			}
		}
		sortKeys := false
		if x, ok := kwOr(kw, "sort_keys", nil, -1); ok {
			sortKeys = truthy(x)
		}
		return toJSON(v, indent, sortKeys), nil
	case "default", "d":
		def, _ := kwOr(kw, "default_value", args, 0)
		boolean := false
		if x, ok := kwOr(kw, "boolean", args, 1); ok {
			boolean = truthy(x)
		}
		if _, und := v.(undefined); und || boolean && !truthy(v) {
			if def == nil && len(args) == 0 {
				return "", nil
			}
			return def, nil
		}
		return v, nil
	case "first", "last":
		l, err := items(v)
		if err != nil {
			return nil, err
		}
		if len(l) == 0 {
			return undefined{}, nil
		}
		if name == "first" {
			return l[0], nil
		}
		return l[len(l)-1], nil
	case "join":
		l, err := items(v)
		if err != nil {
			return nil, err
		}
		sep := ""
		if len(args) > 0 {
			sep = str(args[0])
		}
		attr, hasAttr := kwOr(kw, "attribute", nil, -1)
		parts := make([]string, len(l))
		for i, x := range l {
			if hasAttr {
				if x, err = attrPath(x, str(attr)); err != nil {
					return nil, err
				}
			}
			parts[i] = str(x)
		}
		return strings.Join(parts, sep), nil
	case "int":
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			return int64(x), nil
		case bool:
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		case string:
			n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
			if err != nil {
				return int64(0), nil
			}
			return n, nil
		}
		return int64(0), nil
	case "float":
		if f, ok := num(v); ok {
			return f, nil
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(str(v)), 64)
		if err != nil {
			return 0.0, nil
		}
		return f, nil
	case "abs":
		switch x := v.(type) {
		case int64:
			if x < 0 {
				return -x, nil
			}
			return x, nil
		case float64:
			return math.Abs(x), nil
		}
		return nil, fmt.Errorf("abs of a %s", typeName(v))
	case "round":
		f, ok := num(v)
		if !ok {
			return nil, fmt.Errorf("round of a %s", typeName(v))
		}
		prec := int64(0)
		if x, ok := kwOr(kw, "precision", args, 0); ok {
			prec, _ = x.(int64)
		}
		p := math.Pow(10, float64(prec))
		return math.Round(f*p) / p, nil
	case "list":
		l, err := items(v)
		if err != nil {
			return nil, err
		}
		return append([]any{}, l...), nil
	case "items":
		m, ok := v.(*Map)
		if !ok {
			return []any{}, nil
		}
		out := make([]any, 0, m.Len())
		for _, k := range m.keys {
			out = append(out, []any{m.key(k), m.vals[k]})
		}
		return out, nil
	case "dictsort":
		m, ok := v.(*Map)
		if !ok {
			return nil, fmt.Errorf("dictsort of a %s", typeName(v))
		}
		l := make([]any, len(m.keys))
		for i, k := range m.keys {
			l[i] = m.key(k)
		}
		sortValues(l, false)
		out := make([]any, len(l))
		for i, k := range l {
			out[i] = []any{k, m.vals[str(k)]}
		}
		return out, nil
	case "reverse":
		if s, ok := v.(string); ok {
			rs := []rune(s)
			for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
				rs[i], rs[j] = rs[j], rs[i]
			}
			return string(rs), nil
		}
		l, err := items(v)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(l))
		for i, x := range l {
			out[len(l)-1-i] = x
		}
		return out, nil
	case "sort", "unique":
		l, err := items(v)
		if err != nil {
			return nil, err
		}
		l = append([]any{}, l...)
		if name == "unique" {
			var out []any
			for _, x := range l {
				dup := false
				for _, y := range out {
					dup = dup || equal(x, y)
				}
				if !dup {
					out = append(out, x)
				}
			}
			return out, nil
		}
		rev := false
		if x, ok := kwOr(kw, "reverse", args, 0); ok {
			rev = truthy(x)
		}
		if attr, ok := kwOr(kw, "attribute", nil, -1); ok {
			keyed := make([]any, len(l))
			for i, x := range l {
				k, err := attrPath(x, str(attr))
				if err != nil {
					return nil, err
				}
				keyed[i] = []any{k, x}
			}
			sortPairs(keyed, rev)
			for i := range keyed {
				l[i] = keyed[i].([]any)[1]
			}
			return l, nil
		}
		sortValues(l, rev)
		return l, nil
	case "replace":
		if len(args) < 2 {
			return nil, fmt.Errorf("replace takes two arguments")
		}
		n := -1
		if len(args) > 2 {
			if c, ok := args[2].(int64); ok {
				n = int(c)
			}
		}
		return strings.Replace(str(v), str(args[0]), str(args[1]), n), nil
	case "indent":
		width := "    "
		if x, ok := kwOr(kw, "width", args, 0); ok {
			if n, ok := x.(int64); ok {
				width = strings.Repeat(" ", int(min(max(n, 0), 1000)))
			} else {
				width = str(x)
			}
		}
		first := false
		if x, ok := kwOr(kw, "first", args, 1); ok {
			first = truthy(x)
		}
		lines := strings.Split(str(v), "\n")
		for i := range lines {
			if (i > 0 || first) && lines[i] != "" {
				lines[i] = width + lines[i]
			}
		}
		return strings.Join(lines, "\n"), nil
	case "wordcount":
		return int64(len(strings.Fields(str(v)))), nil
	case "batch":
		return nil, fmt.Errorf("filter batch is not supported")
	case "map", "select", "reject", "selectattr", "rejectattr":
		return r.seqFilter(name, v, args, kw, sc)
	case "attr":
		if len(args) != 1 {
			return nil, fmt.Errorf("attr takes one argument")
		}
		return getAttr(v, str(args[0]), 0)
	case "min", "max", "sum":
		l, err := items(v)
		if err != nil {
			return nil, err
		}
		if name == "sum" {
			var s float64
			ints := true
			for _, x := range l {
				f, ok := num(x)
				if !ok {
					return nil, fmt.Errorf("sum of a %s", typeName(x))
				}
				_, isInt := x.(int64)
				ints = ints && isInt
				s += f
			}
			if ints {
				return int64(s), nil
			}
			return s, nil
		}
		if len(l) == 0 {
			return undefined{}, nil
		}
		best := l[0]
		for _, x := range l[1:] {
			c, _ := compare(x, best)
			if name == "min" && c < 0 || name == "max" && c > 0 {
				best = x
			}
		}
		return best, nil
	}
	return nil, fmt.Errorf("unknown filter %s", name)
}

func sortPairs(l []any, rev bool) {
	keys := make([]any, len(l))
	for i := range l {
		keys[i] = l[i].([]any)[0]
	}
	idx := make([]int, len(l))
	for i := range idx {
		idx[i] = i
	}
	less := func(a, b int) bool {
		c, _ := compare(keys[idx[a]], keys[idx[b]])
		if rev {
			return c > 0
		}
		return c < 0
	}
	for i := 1; i < len(idx); i++ { // insertion sort: stable, small lists
		for j := i; j > 0 && less(j, j-1); j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	out := make([]any, len(l))
	for i, k := range idx {
		out[i] = l[k]
	}
	copy(l, out)
}

func (r *renderer) seqFilter(name string, v any, args []any, kw *Map, sc *scope) (any, error) {
	l, err := items(v)
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, x := range l {
		if err := r.step(0); err != nil {
			return nil, err
		}
		switch name {
		case "map":
			if attr, ok := kwOr(kw, "attribute", nil, -1); ok {
				y, err := attrPath(x, str(attr))
				if err != nil {
					return nil, err
				}
				if _, und := y.(undefined); und {
					if d, ok := kwOr(kw, "default", nil, -1); ok {
						y = d
					}
				}
				out = append(out, y)
				continue
			}
			if len(args) == 0 {
				return nil, fmt.Errorf("map needs a filter or an attribute")
			}
			y, err := r.applyFilter(str(args[0]), x, args[1:], nil, sc)
			if err != nil {
				return nil, err
			}
			out = append(out, y)
		case "select", "reject":
			ok := truthy(x)
			if len(args) > 0 {
				var err error
				if ok, err = test(str(args[0]), x, args[1:]); err != nil {
					return nil, err
				}
			}
			if ok == (name == "select") {
				out = append(out, x)
			}
		case "selectattr", "rejectattr":
			if len(args) == 0 {
				return nil, fmt.Errorf("%s needs an attribute", name)
			}
			y, err := attrPath(x, str(args[0]))
			if err != nil {
				return nil, err
			}
			ok := truthy(y)
			if len(args) > 1 {
				if ok, err = test(str(args[1]), y, args[2:]); err != nil {
					return nil, err
				}
			}
			if ok == (name == "selectattr") {
				out = append(out, x)
			}
		}
	}
	return out, nil
}

func test(name string, v any, args []any) (bool, error) {
	arg := func() any {
		if len(args) > 0 {
			return args[0]
		}
		return undefined{}
	}
	switch name {
	case "defined":
		_, und := v.(undefined)
		return !und, nil
	case "undefined":
		_, und := v.(undefined)
		return und, nil
	case "none":
		return v == nil, nil
	case "string":
		_, ok := v.(string)
		return ok, nil
	case "mapping":
		switch v.(type) {
		case *Map, *namespace:
			return true, nil
		}
		return false, nil
	case "iterable", "sequence":
		switch v.(type) {
		case string, []any, *Map:
			return true, nil
		}
		return false, nil
	case "number":
		switch v.(type) {
		case int64, float64:
			return true, nil
		}
		return false, nil
	case "integer":
		_, ok := v.(int64)
		return ok, nil
	case "float":
		_, ok := v.(float64)
		return ok, nil
	case "boolean":
		_, ok := v.(bool)
		return ok, nil
	case "true", "false":
		b, ok := v.(bool)
		return ok && b == (name == "true"), nil
	case "callable":
		_, ok := v.(fn)
		return ok, nil
	case "equalto", "eq", "==", "sameas":
		return equal(v, arg()), nil
	case "ne", "!=":
		return !equal(v, arg()), nil
	case "lt", "<", "gt", ">", "le", "<=", "ge", ">=", "lessthan", "greaterthan":
		c, ok := compare(v, arg())
		if !ok {
			return false, fmt.Errorf("cannot compare %s and %s", typeName(v), typeName(arg()))
		}
		switch name {
		case "lt", "<", "lessthan":
			return c < 0, nil
		case "gt", ">", "greaterthan":
			return c > 0, nil
		case "le", "<=":
			return c <= 0, nil
		}
		return c >= 0, nil
	case "in":
		return contains(arg(), v)
	case "odd", "even":
		n, ok := v.(int64)
		return ok && (n%2 != 0) == (name == "odd"), nil
	case "divisibleby":
		n, ok1 := v.(int64)
		d, ok2 := arg().(int64)
		return ok1 && ok2 && d != 0 && n%d == 0, nil
	case "lower", "upper":
		s, ok := v.(string)
		return ok && (name == "lower" && s == strings.ToLower(s) || name == "upper" && s == strings.ToUpper(s)), nil
	}
	return false, fmt.Errorf("unknown test %s", name)
}

func strArg(args []any, i int) (string, bool) {
	if i < len(args) {
		if s, ok := args[i].(string); ok {
			return s, true
		}
	}
	return "", false
}

// strMethod is the method name of string s, nil for one a template may not call (format among them).
func strMethod(s, name string) fn {
	chars := func(args []any) (string, bool) { return strArg(args, 0) }
	switch name {
	case "strip", "lstrip", "rstrip":
		return func(r *renderer, args []any, kw *Map) (any, error) {
			cs, has := chars(args)
			switch {
			case name == "strip" && has:
				return strings.Trim(s, cs), nil
			case name == "strip":
				return strings.TrimSpace(s), nil
			case name == "lstrip" && has:
				return strings.TrimLeft(s, cs), nil
			case name == "lstrip":
				return strings.TrimLeftFunc(s, unicode.IsSpace), nil
			case has:
				return strings.TrimRight(s, cs), nil
			}
			return strings.TrimRightFunc(s, unicode.IsSpace), nil
		}
	case "split", "rsplit":
		return func(r *renderer, args []any, kw *Map) (any, error) {
			sep, has := chars(args)
			n := -1
			if x, ok := kwOr(kw, "maxsplit", args, 1); ok {
				if k, ok := x.(int64); ok {
					n = int(k)
				}
			}
			var parts []string
			switch {
			case !has:
				parts = strings.Fields(s)
			case sep == "":
				return nil, fmt.Errorf("empty separator")
			case n < 0:
				parts = strings.Split(s, sep)
			case name == "split":
				parts = strings.SplitN(s, sep, n+1)
			default:
				parts = rsplitN(s, sep, n)
			}
			out := make([]any, len(parts))
			for i, p := range parts {
				out[i] = p
			}
			return out, nil
		}
	case "startswith", "endswith":
		return func(r *renderer, args []any, kw *Map) (any, error) {
			var cands []any
			switch a := firstArg(args).(type) {
			case string:
				cands = []any{a}
			case []any:
				cands = a
			}
			for _, c := range cands {
				p, _ := c.(string)
				if name == "startswith" && strings.HasPrefix(s, p) || name == "endswith" && strings.HasSuffix(s, p) {
					return true, nil
				}
			}
			return false, nil
		}
	case "upper", "lower", "title", "capitalize":
		return func(r *renderer, args []any, kw *Map) (any, error) { return r.applyFilter(name, s, nil, nil, nil) }
	case "replace":
		return func(r *renderer, args []any, kw *Map) (any, error) {
			return r.applyFilter("replace", s, args, nil, nil)
		}
	case "find", "rfind", "index", "count":
		return func(r *renderer, args []any, kw *Map) (any, error) {
			sub, _ := strArg(args, 0)
			switch name {
			case "find", "index":
				return int64(strings.Index(s, sub)), nil
			case "rfind":
				return int64(strings.LastIndex(s, sub)), nil
			}
			return int64(strings.Count(s, sub)), nil
		}
	case "join":
		return func(r *renderer, args []any, kw *Map) (any, error) {
			l, err := items(firstArg(args))
			if err != nil {
				return nil, err
			}
			parts := make([]string, len(l))
			for i, x := range l {
				parts[i] = str(x)
			}
			return strings.Join(parts, s), nil
		}
	case "splitlines":
		return func(r *renderer, args []any, kw *Map) (any, error) {
			out := []any{}
			for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
				out = append(out, strings.TrimSuffix(l, "\r"))
			}
			return out, nil
		}
	case "isdigit", "isspace", "isalpha", "isalnum":
		return func(r *renderer, args []any, kw *Map) (any, error) {
			if s == "" {
				return false, nil
			}
			for _, c := range s {
				ok := map[string]bool{"isdigit": unicode.IsDigit(c), "isspace": unicode.IsSpace(c), "isalpha": unicode.IsLetter(c), "isalnum": unicode.IsLetter(c) || unicode.IsDigit(c)}[name]
				if !ok {
					return false, nil
				}
			}
			return true, nil
		}
	}
	return nil
}

func rsplitN(s, sep string, n int) []string {
	var out []string
	for n > 0 {
		i := strings.LastIndex(s, sep)
		if i < 0 {
			break
		}
		out = append([]string{s[i+len(sep):]}, out...)
		s = s[:i]
		n--
	}
	return append([]string{s}, out...)
}

func firstArg(args []any) any {
	if len(args) > 0 {
		return args[0]
	}
	return undefined{}
}

// mapMethod is the method name of mapping m (items, keys, values, get), nil for others.
func mapMethod(m *Map, name string) fn {
	switch name {
	case "items", "keys", "values":
		return func(r *renderer, args []any, kw *Map) (any, error) {
			out := make([]any, 0, m.Len())
			for _, k := range m.keys {
				switch name {
				case "items":
					out = append(out, []any{m.key(k), m.vals[k]})
				case "keys":
					out = append(out, m.key(k))
				default:
					out = append(out, m.vals[k])
				}
			}
			return out, nil
		}
	case "get":
		return func(r *renderer, args []any, kw *Map) (any, error) {
			if v, ok := m.Get(str(firstArg(args))); ok {
				return v, nil
			}
			if len(args) > 1 {
				return args[1], nil
			}
			return nil, nil
		}
	}
	return nil
}

// listMethod is the method name of list l (index, count), nil for others: the lists a template sees
// are immutable, as in transformers' ImmutableSandboxedEnvironment.
func listMethod(l []any, name string) fn {
	switch name {
	case "index", "count":
		return func(r *renderer, args []any, kw *Map) (any, error) {
			n := int64(0)
			for i, x := range l {
				if equal(x, firstArg(args)) {
					if name == "index" {
						return int64(i), nil
					}
					n++
				}
			}
			if name == "index" {
				return nil, fmt.Errorf("value not in list")
			}
			return n, nil
		}
	}
	return nil
}

// title is Python's str.title: the first letter of every run of letters upper-cased, the others lower-cased.
func title(s string) string {
	var b strings.Builder
	prev := false
	for _, r := range s {
		if unicode.IsLetter(r) {
			if prev {
				b.WriteRune(unicode.ToLower(r))
			} else {
				b.WriteRune(unicode.ToUpper(r))
			}
			prev = true
			continue
		}
		prev = false
		b.WriteRune(r)
	}
	return b.String()
}
