package template

import (
	"errors"
	"fmt"
	"html"
	"math"
	"sort"
	"strings"
)

// Limits bound a rendering: Steps is the most statements and expressions it evaluates, Output the
// most bytes it writes, Depth the deepest macro calls may nest. A zero field takes the default
// (DefaultLimits).
type Limits struct {
	Steps, Output, Depth int
}

// DefaultLimits are the bounds Render uses for a zero Limits field: room for any real chat template on a
// short conversation, far from what a machine notices.
var DefaultLimits = Limits{Steps: 1_000_000, Output: 1 << 20, Depth: 64}

// ErrLimit is wrapped by the error of a rendering that went past its Limits.
var ErrLimit = errors.New("template exceeds its rendering limits")

// RenderError is why a template could not be rendered: a raise_exception, a type error, a refused
// access, a limit.
type RenderError struct {
	// Pos is the byte offset in the template of the statement or expression that failed.
	Pos int
	Err error
}

// Error is "offset N: why".
func (e *RenderError) Error() string { return fmt.Sprintf("offset %d: %v", e.Pos, e.Err) }

// Unwrap gives the cause.
func (e *RenderError) Unwrap() error { return e.Err }

// Conversation is the fixed conversation Render is given to show a template's prompt: a system
// message, a user message, the assistant's answer, a second user message, and add_generation_prompt,
// with placeholder special tokens (bos_token "<BOS>", eos_token "<EOS>", …) so that what changes
// between two templates is theirs, not their tokenizers'.
func Conversation() map[string]any {
	msg := func(role, content string) any { return NewMap("role", role, "content", content) }
	return map[string]any{
		"messages": []any{
			msg("system", "You are a helpful assistant."),
			msg("user", "What is the capital of France?"),
			msg("assistant", "The capital of France is Paris."),
			msg("user", "And of Italy?"),
		},
		"add_generation_prompt": true,
		"bos_token":             "<BOS>",
		"eos_token":             "<EOS>",
		"unk_token":             "<UNK>",
		"pad_token":             "<PAD>",
	}
}

// Render runs t on data (values: nil, bool, int64, float64, string, []any, *Map, or
// map[string]any at the top) within lim, with no way out of the data: attribute access reaches a
// mapping's keys and a fixed set of string, list and mapping methods; a name starting with an
// underscore is refused; there is no global but range, namespace, dict, raise_exception and
// strftime_now (which gives a fixed date, so renderings compare). Errors are *RenderError values.
func Render(t *Template, data map[string]any, lim Limits) (string, error) {
	if lim.Steps <= 0 {
		lim.Steps = DefaultLimits.Steps
	}
	if lim.Output <= 0 {
		lim.Output = DefaultLimits.Output
	}
	if lim.Depth <= 0 {
		lim.Depth = DefaultLimits.Depth
	}
	r := &renderer{lim: lim, steps: lim.Steps}
	root := &scope{vars: map[string]any{}}
	for k, v := range globals {
		root.vars[k] = v
	}
	for k, v := range data {
		root.vars[k] = v
	}
	var out strings.Builder
	err := r.exec(t.Nodes, &scope{vars: map[string]any{}, up: root}, &out)
	if errors.Is(err, errBreak) || errors.Is(err, errContinue) {
		err = nil
	}
	return out.String(), err
}

type renderer struct {
	lim   Limits
	steps int
	depth int
}

type scope struct {
	vars map[string]any
	up   *scope
}

func (s *scope) get(name string) (any, bool) {
	for ; s != nil; s = s.up {
		if v, ok := s.vars[name]; ok {
			return v, true
		}
	}
	return nil, false
}

var (
	errBreak    = errors.New("break outside a loop")
	errContinue = errors.New("continue outside a loop")
)

func (r *renderer) step(pos int) error {
	r.steps--
	if r.steps < 0 {
		return &RenderError{Pos: pos, Err: fmt.Errorf("%w: more than %d steps", ErrLimit, r.lim.Steps)}
	}
	return nil
}

func (r *renderer) write(out *strings.Builder, s string, pos int) error {
	if out.Len()+len(s) > r.lim.Output {
		return &RenderError{Pos: pos, Err: fmt.Errorf("%w: more than %d bytes of output", ErrLimit, r.lim.Output)}
	}
	out.WriteString(s)
	return nil
}

func fail(pos int, format string, args ...any) error {
	return &RenderError{Pos: pos, Err: fmt.Errorf(format, args...)}
}

func (r *renderer) exec(nodes []Node, sc *scope, out *strings.Builder) error {
	for _, n := range nodes {
		if err := r.step(n.pos()); err != nil {
			return err
		}
		switch n := n.(type) {
		case *Text:
			if err := r.write(out, n.S, n.Off); err != nil {
				return err
			}
		case *Output:
			v, err := r.eval(n.X, sc)
			if err != nil {
				return err
			}
			if err := r.write(out, str(v), n.Off); err != nil {
				return err
			}
		case *If:
			done := false
			for i, c := range n.Conds {
				v, err := r.eval(c, sc)
				if err != nil {
					return err
				}
				if truthy(v) {
					if err := r.exec(n.Bodies[i], sc, out); err != nil {
						return err
					}
					done = true
					break
				}
			}
			if !done {
				if err := r.exec(n.Else, sc, out); err != nil {
					return err
				}
			}
		case *For:
			if err := r.forLoop(n, sc, out); err != nil {
				return err
			}
		case *Set:
			v, err := r.eval(n.X, sc)
			if err != nil {
				return err
			}
			if n.Attr != "" {
				ns, ok := lookup(sc, n.Vars[0]).(*namespace)
				if !ok {
					return fail(n.Off, "cannot set an attribute of %s", n.Vars[0])
				}
				if strings.HasPrefix(n.Attr, "_") {
					return fail(n.Off, "private attribute %s refused", n.Attr)
				}
				ns.m.Set(n.Attr, v)
				continue
			}
			if len(n.Vars) == 1 {
				sc.vars[n.Vars[0]] = v
				continue
			}
			l, err := items(v)
			if err != nil || len(l) != len(n.Vars) {
				return fail(n.Off, "cannot unpack %s into %d names", typeName(v), len(n.Vars))
			}
			for i, name := range n.Vars {
				sc.vars[name] = l[i]
			}
		case *SetBlock:
			var b strings.Builder
			if err := r.exec(n.Body, sc, &b); err != nil {
				return err
			}
			var v any = b.String()
			for _, f := range n.Filters {
				var err error
				if v, err = r.filter(f, v, sc); err != nil {
					return err
				}
			}
			sc.vars[n.Var] = v
		case *Macro:
			sc.vars[n.Name] = r.macro(n, sc)
		case *CallBlock:
			caller := fn(func(r *renderer, args []any, kw *Map) (any, error) {
				inner := &scope{vars: map[string]any{}, up: sc}
				for i, p := range n.Params {
					if i < len(args) {
						inner.vars[p] = args[i]
					}
				}
				var b strings.Builder
				err := r.exec(n.Body, inner, &b)
				return b.String(), err
			})
			v, err := r.eval(n.Call, &scope{vars: map[string]any{"caller": caller}, up: sc})
			if err != nil {
				return err
			}
			if err := r.write(out, str(v), n.Off); err != nil {
				return err
			}
		case *FilterBlock:
			var b strings.Builder
			if err := r.exec(n.Body, sc, &b); err != nil {
				return err
			}
			var v any = b.String()
			for _, f := range n.Filters {
				var err error
				if v, err = r.filter(f, v, sc); err != nil {
					return err
				}
			}
			if err := r.write(out, str(v), n.Off); err != nil {
				return err
			}
		case *Block:
			if err := r.exec(n.Body, sc, out); err != nil {
				return err
			}
		case *Do:
			if _, err := r.eval(n.X, sc); err != nil {
				return err
			}
		case *Loop:
			if n.Break {
				return errBreak
			}
			return errContinue
		}
	}
	return nil
}

func lookup(sc *scope, name string) any {
	v, ok := sc.get(name)
	if !ok {
		return undefined{}
	}
	return v
}

func (r *renderer) forLoop(n *For, sc *scope, out *strings.Builder) error {
	iter, err := r.eval(n.Iter, sc)
	if err != nil {
		return err
	}
	var body func(iter any, depth int) error
	body = func(iter any, depth int) error {
		if depth > r.lim.Depth {
			return fail(n.Off, "%w: recursive loop deeper than %d", ErrLimit, r.lim.Depth)
		}
		all, err := items(iter)
		if err != nil {
			return fail(n.Off, "%v", err)
		}
		if m, ok := iter.(*Map); ok && len(n.Vars) == 2 { // for k, v in dict: Python iterates keys; .items() is the usual
			_ = m
		}
		var list []any
		inner := &scope{vars: map[string]any{}, up: sc}
		for _, it := range all {
			if n.Cond != nil {
				r.bind(n, inner, it)
				c, err := r.eval(n.Cond, inner)
				if err != nil {
					return err
				}
				if !truthy(c) {
					continue
				}
			}
			list = append(list, it)
		}
		if len(list) == 0 {
			return r.exec(n.Else, sc, out)
		}
		for i, it := range list {
			if err := r.step(n.Off); err != nil {
				return err
			}
			inner := &scope{vars: map[string]any{}, up: sc}
			if err := r.bind(n, inner, it); err != nil {
				return err
			}
			loop := NewMap("index", int64(i+1), "index0", int64(i), "first", i == 0, "last", i == len(list)-1,
				"length", int64(len(list)), "revindex", int64(len(list)-i), "revindex0", int64(len(list)-i-1))
			if i > 0 {
				loop.Set("previtem", list[i-1])
			}
			if i+1 < len(list) {
				loop.Set("nextitem", list[i+1])
			}
			if n.Recursive {
				loop.Set("__call__", fn(func(r *renderer, args []any, kw *Map) (any, error) {
					if len(args) != 1 {
						return nil, fmt.Errorf("loop() takes one argument")
					}
					var b strings.Builder
					saved := out
					out = &b
					err := body(args[0], depth+1)
					out = saved
					return b.String(), err
				}))
			}
			inner.vars["loop"] = loop
			err := r.exec(n.Body, inner, out)
			if errors.Is(err, errBreak) {
				break
			}
			if err != nil && !errors.Is(err, errContinue) {
				return err
			}
		}
		return nil
	}
	return body(iter, 0)
}

func (r *renderer) bind(n *For, sc *scope, it any) error {
	if len(n.Vars) == 1 {
		sc.vars[n.Vars[0]] = it
		return nil
	}
	l, err := items(it)
	if err != nil || len(l) != len(n.Vars) {
		return fail(n.Off, "cannot unpack %s into %d names", typeName(it), len(n.Vars))
	}
	for i, name := range n.Vars {
		sc.vars[name] = l[i]
	}
	return nil
}

func (r *renderer) macro(n *Macro, def *scope) fn {
	return func(r *renderer, args []any, kw *Map) (any, error) {
		r.depth++
		defer func() { r.depth-- }()
		if r.depth > r.lim.Depth {
			return nil, fmt.Errorf("%w: macro calls nested deeper than %d", ErrLimit, r.lim.Depth)
		}
		sc := &scope{vars: map[string]any{}, up: def}
		for i, p := range n.Params {
			switch {
			case i < len(args):
				sc.vars[p] = args[i]
			case kw != nil && hasKey(kw, p):
				sc.vars[p], _ = kw.Get(p)
			case n.Defaults[i] != nil:
				v, err := r.eval(n.Defaults[i], sc)
				if err != nil {
					return nil, err
				}
				sc.vars[p] = v
			default:
				sc.vars[p] = undefined{}
			}
		}
		if c, ok := def.get("caller"); ok {
			sc.vars["caller"] = c
		}
		var b strings.Builder
		err := r.exec(n.Body, sc, &b)
		if errors.Is(err, errBreak) || errors.Is(err, errContinue) {
			err = nil
		}
		return b.String(), err
	}
}

func hasKey(m *Map, k string) bool { _, ok := m.Get(k); return ok }

func (r *renderer) eval(x Expr, sc *scope) (any, error) {
	if err := r.step(x.pos()); err != nil {
		return nil, err
	}
	switch x := x.(type) {
	case *Const:
		return x.V, nil
	case *Name:
		return lookup(sc, x.Name), nil
	case *Attr:
		v, err := r.eval(x.X, sc)
		if err != nil {
			return nil, err
		}
		return getAttr(v, x.Name, x.Off)
	case *Index:
		v, err := r.eval(x.X, sc)
		if err != nil {
			return nil, err
		}
		k, err := r.eval(x.Key, sc)
		if err != nil {
			return nil, err
		}
		return getItem(v, k, x.Off)
	case *Slice:
		return r.slice(x, sc)
	case *Call:
		f, err := r.eval(x.Fn, sc)
		if err != nil {
			return nil, err
		}
		if m, ok := f.(*Map); ok { // loop(...) of a recursive loop
			f, _ = m.Get("__call__")
		}
		call, ok := f.(fn)
		if !ok {
			return nil, fail(x.Off, "%s is not callable", typeName(f))
		}
		args, kw, err := r.args(x.Args, x.Kw, sc)
		if err != nil {
			return nil, err
		}
		v, err := call(r, args, kw)
		if err != nil {
			var re *RenderError
			if errors.As(err, &re) {
				return nil, err
			}
			return nil, &RenderError{Pos: x.Off, Err: err}
		}
		return v, nil
	case *Filter:
		v, err := r.eval(x.X, sc)
		if err != nil {
			return nil, err
		}
		return r.filter(x, v, sc)
	case *Test:
		v, err := r.eval(x.X, sc)
		if err != nil {
			return nil, err
		}
		args, _, err := r.args(x.Args, nil, sc)
		if err != nil {
			return nil, err
		}
		b, err := test(x.Name, v, args)
		if err != nil {
			return nil, fail(x.Off, "%v", err)
		}
		return b != x.Not, nil
	case *Binary:
		return r.binary(x, sc)
	case *Unary:
		v, err := r.eval(x.X, sc)
		if err != nil {
			return nil, err
		}
		switch x.Op {
		case "not":
			return !truthy(v), nil
		case "-":
			switch v := v.(type) {
			case int64:
				return -v, nil
			case float64:
				return -v, nil
			}
		case "+":
			if _, ok := num(v); ok {
				return v, nil
			}
		}
		return nil, fail(x.Off, "bad operand %s for unary %s", typeName(v), x.Op)
	case *Cond:
		c, err := r.eval(x.Test, sc)
		if err != nil {
			return nil, err
		}
		if truthy(c) {
			return r.eval(x.Then, sc)
		}
		if x.Else == nil {
			return undefined{}, nil
		}
		return r.eval(x.Else, sc)
	case *List:
		out := make([]any, 0, len(x.Items))
		for _, it := range x.Items {
			v, err := r.eval(it, sc)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case *Dict:
		m := NewMap()
		for i := range x.Keys {
			k, err := r.eval(x.Keys[i], sc)
			if err != nil {
				return nil, err
			}
			v, err := r.eval(x.Vals[i], sc)
			if err != nil {
				return nil, err
			}
			m.setKey(k, v)
		}
		return m, nil
	}
	return nil, fail(x.pos(), "cannot evaluate %T", x)
}

func (r *renderer) args(xs []Expr, kws []Kwarg, sc *scope) ([]any, *Map, error) {
	args := make([]any, 0, len(xs))
	for _, a := range xs {
		v, err := r.eval(a, sc)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, v)
	}
	var kw *Map
	if len(kws) > 0 {
		kw = NewMap()
		for _, k := range kws {
			v, err := r.eval(k.X, sc)
			if err != nil {
				return nil, nil, err
			}
			kw.Set(k.Name, v)
		}
	}
	return args, kw, nil
}

func getAttr(v any, name string, pos int) (any, error) {
	if strings.HasPrefix(name, "_") {
		return nil, fail(pos, "private attribute %s refused", name)
	}
	switch v := v.(type) {
	case *Map:
		if x, ok := v.Get(name); ok {
			return x, nil
		}
		if m := mapMethod(v, name); m != nil {
			return m, nil
		}
		return undefined{}, nil
	case *namespace:
		if x, ok := v.m.Get(name); ok {
			return x, nil
		}
		return undefined{}, nil
	case string:
		if m := strMethod(v, name); m != nil {
			return m, nil
		}
	case []any:
		if m := listMethod(v, name); m != nil {
			return m, nil
		}
	}
	return undefined{}, nil
}

func getItem(v, k any, pos int) (any, error) {
	switch v := v.(type) {
	case *Map:
		if x, ok := v.Get(str(k)); ok {
			return x, nil
		}
		return undefined{}, nil
	case *namespace:
		if x, ok := v.m.Get(str(k)); ok {
			return x, nil
		}
		return undefined{}, nil
	case []any:
		i, ok := k.(int64)
		if !ok {
			return undefined{}, nil
		}
		if i < 0 {
			i += int64(len(v))
		}
		if i < 0 || i >= int64(len(v)) {
			return undefined{}, nil
		}
		return v[i], nil
	case string:
		i, ok := k.(int64)
		if !ok {
			if s, ok := k.(string); ok {
				return getAttr(v, s, pos)
			}
			return undefined{}, nil
		}
		rs := []rune(v)
		if i < 0 {
			i += int64(len(rs))
		}
		if i < 0 || i >= int64(len(rs)) {
			return undefined{}, nil
		}
		return string(rs[i]), nil
	}
	return undefined{}, nil
}

func (r *renderer) slice(x *Slice, sc *scope) (any, error) {
	v, err := r.eval(x.X, sc)
	if err != nil {
		return nil, err
	}
	var parts [3]*int64
	for i, e := range []Expr{x.Lo, x.Hi, x.Step} {
		if e == nil {
			continue
		}
		p, err := r.eval(e, sc)
		if err != nil {
			return nil, err
		}
		if n, ok := p.(int64); ok {
			parts[i] = &n
		}
	}
	var list []any
	s, isStr := v.(string)
	if isStr {
		for _, r := range s {
			list = append(list, string(r))
		}
	} else if l, ok := v.([]any); ok {
		list = l
	} else {
		return undefined{}, nil
	}
	n := int64(len(list))
	step := int64(1)
	if parts[2] != nil {
		step = *parts[2]
	}
	if step == 0 {
		return nil, fail(x.Off, "slice step cannot be zero")
	}
	norm := func(p *int64, def int64, lo, hi int64) int64 {
		if p == nil {
			return def
		}
		i := *p
		if i < 0 {
			i += n
		}
		return max(lo, min(i, hi))
	}
	var out []any
	if step > 0 {
		for i := norm(parts[0], 0, 0, n); i < norm(parts[1], n, 0, n); i += step {
			out = append(out, list[i])
		}
	} else {
		for i := norm(parts[0], n-1, -1, n-1); i > norm(parts[1], -1, -1, n-1); i += step {
			out = append(out, list[i])
		}
	}
	if isStr {
		var b strings.Builder
		for _, c := range out {
			b.WriteString(c.(string))
		}
		return b.String(), nil
	}
	if out == nil {
		out = []any{}
	}
	return out, nil
}

func (r *renderer) binary(x *Binary, sc *scope) (any, error) {
	l, err := r.eval(x.L, sc)
	if err != nil {
		return nil, err
	}
	switch x.Op {
	case "and":
		if !truthy(l) {
			return l, nil
		}
		return r.eval(x.R, sc)
	case "or":
		if truthy(l) {
			return l, nil
		}
		return r.eval(x.R, sc)
	}
	rv, err := r.eval(x.R, sc)
	if err != nil {
		return nil, err
	}
	switch x.Op {
	case "~":
		s := str(l) + str(rv)
		if len(s) > r.lim.Output {
			return nil, fail(x.Off, "%w: a string longer than %d bytes", ErrLimit, r.lim.Output)
		}
		return s, nil
	case "==":
		return equal(l, rv), nil
	case "!=":
		return !equal(l, rv), nil
	case "in", "not in":
		in, err := contains(rv, l)
		if err != nil {
			return nil, fail(x.Off, "%v", err)
		}
		return in == (x.Op == "in"), nil
	case "<", ">", "<=", ">=":
		c, ok := compare(l, rv)
		if !ok {
			return nil, fail(x.Off, "cannot compare %s and %s", typeName(l), typeName(rv))
		}
		return map[string]bool{"<": c < 0, ">": c > 0, "<=": c <= 0, ">=": c >= 0}[x.Op], nil
	case "+":
		switch a := l.(type) {
		case string:
			if b, ok := rv.(string); ok {
				if len(a)+len(b) > r.lim.Output {
					return nil, fail(x.Off, "%w: a string longer than %d bytes", ErrLimit, r.lim.Output)
				}
				return a + b, nil
			}
		case []any:
			if b, ok := rv.([]any); ok {
				if len(a)+len(b) > r.lim.Output {
					return nil, fail(x.Off, "%w: a list longer than %d items", ErrLimit, r.lim.Output)
				}
				return append(append([]any{}, a...), b...), nil
			}
		}
	case "*":
		s, isStr := l.(string)
		k, isInt := rv.(int64)
		if !isStr {
			s, isStr = rv.(string)
			k, isInt = l.(int64)
		}
		if isStr && isInt {
			if k > 0 && int64(len(s))*k > int64(r.lim.Output) {
				return nil, fail(x.Off, "%w: a string longer than %d bytes", ErrLimit, r.lim.Output)
			}
			return strings.Repeat(s, int(max(k, 0))), nil
		}
	}
	a, ok1 := num(l)
	b, ok2 := num(rv)
	if !ok1 || !ok2 {
		return nil, fail(x.Off, "unsupported operands %s and %s for %s", typeName(l), typeName(rv), x.Op)
	}
	_, li := l.(int64)
	_, ri := rv.(int64)
	ints := li && ri
	var f float64
	switch x.Op {
	case "+":
		f = a + b
	case "-":
		f = a - b
	case "*":
		f = a * b
	case "/":
		if b == 0 {
			return nil, fail(x.Off, "division by zero")
		}
		return a / b, nil
	case "//":
		if b == 0 {
			return nil, fail(x.Off, "division by zero")
		}
		f = math.Floor(a / b)
	case "%":
		if b == 0 {
			return nil, fail(x.Off, "modulo by zero")
		}
		f = a - b*math.Floor(a/b)
	case "**":
		if b > 64 || b < 0 && ints {
			return nil, fail(x.Off, "%w: a power past 64", ErrLimit)
		}
		f = math.Pow(a, b)
	}
	if ints && math.Abs(f) < 1<<62 {
		return int64(f), nil
	}
	return f, nil
}

func compare(a, b any) (int, bool) {
	if x, ok := num(a); ok {
		if y, ok := num(b); ok {
			switch {
			case x < y:
				return -1, true
			case x > y:
				return 1, true
			}
			return 0, true
		}
	}
	if x, ok := a.(string); ok {
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), true
		}
	}
	return 0, false
}

func contains(container, v any) (bool, error) {
	switch c := container.(type) {
	case string:
		s, ok := v.(string)
		if !ok {
			return false, fmt.Errorf("'in <string>' requires string as left operand, not %s", typeName(v))
		}
		return strings.Contains(c, s), nil
	case []any:
		for _, x := range c {
			if equal(x, v) {
				return true, nil
			}
		}
		return false, nil
	case *Map:
		return hasKey(c, str(v)), nil
	case *namespace:
		return hasKey(c.m, str(v)), nil
	case undefined:
		return false, nil // jinja2's Undefined iterates as empty
	}
	return false, fmt.Errorf("argument of type %s is not iterable", typeName(container))
}

// sortValues sorts a list of values as Python's sorted does for values of one kind.
func sortValues(l []any, reverse bool) {
	sort.SliceStable(l, func(i, j int) bool {
		c, _ := compare(l[i], l[j])
		if reverse {
			return c > 0
		}
		return c < 0
	})
}

func escape(s string) string { return html.EscapeString(s) }
