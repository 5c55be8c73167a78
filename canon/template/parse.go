package template

import (
	"strconv"
)

// MaxDepth bounds the nesting of blocks and expressions a template may have; deeper templates are
// refused (a SyntaxError), so parsing never exhausts the stack.
const MaxDepth = 200

// Template is a parsed template: its statements.
type Template struct {
	Nodes []Node
}

// Parse parses a Jinja template as transformers' chat-template environment reads it (trim_blocks,
// lstrip_blocks, the {% generation %} tag, loop controls). Errors are *SyntaxError values.
func Parse(src string) (*Template, error) {
	segs, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{segs: segs}
	nodes, end, err := p.body(0)
	if err != nil {
		return nil, err
	}
	if end != "" {
		return nil, errAt(p.segs[p.i].off, "unexpected %s", end)
	}
	return &Template{Nodes: nodes}, nil
}

type parser struct {
	segs []segment
	i    int
}

// blockEnds are the statements that end or divide a block.
var blockEnds = map[string]bool{"elif": true, "else": true, "endif": true, "endfor": true, "endset": true,
	"endmacro": true, "endcall": true, "endfilter": true, "endgeneration": true, "endblock": true}

// body parses statements up to one in blockEnds (returned, consumed) or the end ("").
func (p *parser) body(depth int) ([]Node, string, error) {
	if depth > MaxDepth {
		return nil, "", errAt(p.off(), "blocks nested deeper than %d", MaxDepth)
	}
	var nodes []Node
	for p.i < len(p.segs) {
		s := &p.segs[p.i]
		p.i++
		switch s.kind {
		case segText:
			nodes = append(nodes, &Text{Off: s.off, S: s.text})
		case segOutput:
			e := &exprParser{toks: s.toks, off: s.off}
			x, err := e.tuple()
			if err != nil {
				return nil, "", err
			}
			if err := e.done(); err != nil {
				return nil, "", err
			}
			nodes = append(nodes, &Output{Off: s.off, X: x})
		case segStmt:
			if len(s.toks) == 0 || s.toks[0].kind != tName {
				return nil, "", errAt(s.off, "statement without a keyword")
			}
			kw := s.toks[0].s
			if blockEnds[kw] {
				p.i--
				return nodes, kw, nil
			}
			n, err := p.stmt(s, kw, depth)
			if err != nil {
				return nil, "", err
			}
			if n != nil {
				nodes = append(nodes, n)
			}
		}
	}
	return nodes, "", nil
}

func (p *parser) off() int {
	if p.i > 0 && p.i <= len(p.segs) {
		return p.segs[p.i-1].off
	}
	return 0
}

// end consumes the statement kw that body stopped at, which must be one of want; it returns kw and
// the statement's tokens after the keyword.
func (p *parser) end(kw string, at int, want ...string) ([]token, error) {
	for _, w := range want {
		if kw == w {
			s := &p.segs[p.i]
			p.i++
			return s.toks[1:], nil
		}
	}
	if kw == "" {
		return nil, errAt(at, "block not closed (want %s)", want[len(want)-1])
	}
	return nil, errAt(p.segs[p.i].off, "unexpected %s (want %s)", kw, want[len(want)-1])
}

func (p *parser) stmt(s *segment, kw string, depth int) (Node, error) {
	e := &exprParser{toks: s.toks[1:], off: s.off}
	switch kw {
	case "if":
		n := &If{Off: s.off}
		cond, err := e.full()
		if err != nil {
			return nil, err
		}
		for {
			body, end, err := p.body(depth + 1)
			if err != nil {
				return nil, err
			}
			n.Conds, n.Bodies = append(n.Conds, cond), append(n.Bodies, body)
			rest, err := p.end(end, s.off, "elif", "else", "endif")
			if err != nil {
				return nil, err
			}
			switch end {
			case "elif":
				if cond, err = (&exprParser{toks: rest, off: s.off}).full(); err != nil {
					return nil, err
				}
				continue
			case "else":
				if n.Else, end, err = p.body(depth + 1); err != nil {
					return nil, err
				}
				if _, err := p.end(end, s.off, "endif"); err != nil {
					return nil, err
				}
			}
			return n, nil
		}
	case "for":
		n := &For{Off: s.off}
		for {
			t := e.next()
			if t.kind != tName {
				return nil, errAt(t.off, "for: want a variable name")
			}
			n.Vars = append(n.Vars, t.s)
			if !e.accept(tOp, ",") {
				break
			}
		}
		if !e.accept(tName, "in") {
			return nil, errAt(s.off, "for: want in")
		}
		var err error
		if n.Iter, err = e.tupleNoCond(); err != nil {
			return nil, err
		}
		if e.accept(tName, "if") {
			if n.Cond, err = e.condexpr(false); err != nil {
				return nil, err
			}
		}
		n.Recursive = e.accept(tName, "recursive")
		if err := e.done(); err != nil {
			return nil, err
		}
		body, end, err := p.body(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Body = body
		if _, err := p.end(end, s.off, "else", "endfor"); err != nil {
			return nil, err
		}
		if end == "else" {
			if n.Else, end, err = p.body(depth + 1); err != nil {
				return nil, err
			}
			if _, err := p.end(end, s.off, "endfor"); err != nil {
				return nil, err
			}
		}
		return n, nil
	case "set":
		t := e.next()
		if t.kind != tName {
			return nil, errAt(t.off, "set: want a name")
		}
		vars := []string{t.s}
		attr := ""
		if e.accept(tOp, ".") {
			a := e.next()
			if a.kind != tName {
				return nil, errAt(a.off, "set: want an attribute name")
			}
			attr = a.s
		}
		for e.accept(tOp, ",") {
			t := e.next()
			if t.kind != tName {
				return nil, errAt(t.off, "set: want a name")
			}
			vars = append(vars, t.s)
		}
		if e.accept(tOp, "=") {
			x, err := e.tuple()
			if err != nil {
				return nil, err
			}
			if err := e.done(); err != nil {
				return nil, err
			}
			return &Set{Off: s.off, Vars: vars, Attr: attr, X: x}, nil
		}
		if attr != "" || len(vars) > 1 {
			return nil, errAt(s.off, "set: want =")
		}
		n := &SetBlock{Off: s.off, Var: vars[0]}
		for e.accept(tOp, "|") {
			f, err := e.filter(nil)
			if err != nil {
				return nil, err
			}
			n.Filters = append(n.Filters, f)
		}
		if err := e.done(); err != nil {
			return nil, err
		}
		body, end, err := p.body(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Body = body
		_, err = p.end(end, s.off, "endset")
		return n, err
	case "macro":
		t := e.next()
		if t.kind != tName {
			return nil, errAt(t.off, "macro: want a name")
		}
		n := &Macro{Off: s.off, Name: t.s}
		params, defaults, err := e.params()
		if err != nil {
			return nil, err
		}
		n.Params, n.Defaults = params, defaults
		if err := e.done(); err != nil {
			return nil, err
		}
		body, end, err := p.body(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Body = body
		_, err = p.end(end, s.off, "endmacro")
		return n, err
	case "call":
		n := &CallBlock{Off: s.off}
		if e.peek().kind == tOp && e.peek().s == "(" {
			params, _, err := e.params()
			if err != nil {
				return nil, err
			}
			n.Params = params
		}
		x, err := e.full()
		if err != nil {
			return nil, err
		}
		n.Call = x
		body, end, err := p.body(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Body = body
		_, err = p.end(end, s.off, "endcall")
		return n, err
	case "filter":
		n := &FilterBlock{Off: s.off}
		for {
			f, err := e.filter(nil)
			if err != nil {
				return nil, err
			}
			n.Filters = append(n.Filters, f)
			if !e.accept(tOp, "|") {
				break
			}
		}
		if err := e.done(); err != nil {
			return nil, err
		}
		body, end, err := p.body(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Body = body
		_, err = p.end(end, s.off, "endfilter")
		return n, err
	case "generation", "block":
		name := kw
		if kw == "block" {
			t := e.next()
			name = "block " + t.s
		}
		body, end, err := p.body(depth + 1)
		if err != nil {
			return nil, err
		}
		_, err = p.end(end, s.off, "end"+kw)
		return &Block{Off: s.off, Name: name, Body: body}, err
	case "do":
		x, err := e.full()
		if err != nil {
			return nil, err
		}
		return &Do{Off: s.off, X: x}, nil
	case "break", "continue":
		if err := e.done(); err != nil {
			return nil, err
		}
		return &Loop{Off: s.off, Break: kw == "break"}, nil
	}
	return nil, errAt(s.off, "unknown statement %s", kw)
}

// exprParser parses the tokens of one tag.
type exprParser struct {
	toks  []token
	i     int
	off   int
	depth int
}

func (e *exprParser) peek() token {
	if e.i < len(e.toks) {
		return e.toks[e.i]
	}
	return token{kind: tEOF, off: e.off}
}

func (e *exprParser) next() token {
	t := e.peek()
	if e.i < len(e.toks) {
		e.i++
	}
	return t
}

func (e *exprParser) is(kind tokKind, s string) bool {
	t := e.peek()
	return t.kind == kind && t.s == s
}

func (e *exprParser) accept(kind tokKind, s string) bool {
	if e.is(kind, s) {
		e.i++
		return true
	}
	return false
}

func (e *exprParser) expect(s string) error {
	if !e.accept(tOp, s) {
		t := e.peek()
		return errAt(t.off, "want %s, found %q", s, t.s)
	}
	return nil
}

func (e *exprParser) done() error {
	if t := e.peek(); t.kind != tEOF {
		return errAt(t.off, "unexpected %q", t.s)
	}
	return nil
}

// full parses one whole expression and requires the tag to end there.
func (e *exprParser) full() (Expr, error) {
	x, err := e.condexpr(true)
	if err != nil {
		return nil, err
	}
	return x, e.done()
}

// tuple parses an expression or a bare tuple (a, b).
func (e *exprParser) tuple() (Expr, error) { return e.tupleOf(true) }

func (e *exprParser) tupleNoCond() (Expr, error) { return e.tupleOf(false) }

func (e *exprParser) tupleOf(cond bool) (Expr, error) {
	off := e.peek().off
	x, err := e.condexpr(cond)
	if err != nil || !e.is(tOp, ",") {
		return x, err
	}
	items := []Expr{x}
	for e.accept(tOp, ",") {
		if t := e.peek(); t.kind == tEOF || t.kind == tName && (t.s == "if" || t.s == "recursive") {
			break
		}
		x, err := e.condexpr(cond)
		if err != nil {
			return nil, err
		}
		items = append(items, x)
	}
	return &List{Off: off, Items: items, Tuple: true}, nil
}

func (e *exprParser) enter() error {
	e.depth++
	if e.depth > MaxDepth {
		return errAt(e.peek().off, "expression nested deeper than %d", MaxDepth)
	}
	return nil
}

// condexpr parses X [if T [else Y]] (the conditional only when cond: a for loop's filter takes if).
func (e *exprParser) condexpr(cond bool) (Expr, error) {
	if err := e.enter(); err != nil {
		return nil, err
	}
	defer func() { e.depth-- }()
	x, err := e.or()
	if err != nil || !cond {
		return x, err
	}
	for e.is(tName, "if") {
		off := e.next().off
		t, err := e.or()
		if err != nil {
			return nil, err
		}
		c := &Cond{Off: off, Then: x, Test: t}
		if e.accept(tName, "else") {
			if c.Else, err = e.condexpr(true); err != nil {
				return nil, err
			}
		}
		x = c
	}
	return x, nil
}

func (e *exprParser) or() (Expr, error) {
	x, err := e.and()
	for err == nil && e.is(tName, "or") {
		off := e.next().off
		var r Expr
		if r, err = e.and(); err == nil {
			x = &Binary{Off: off, Op: "or", L: x, R: r}
		}
	}
	return x, err
}

func (e *exprParser) and() (Expr, error) {
	x, err := e.not()
	for err == nil && e.is(tName, "and") {
		off := e.next().off
		var r Expr
		if r, err = e.not(); err == nil {
			x = &Binary{Off: off, Op: "and", L: x, R: r}
		}
	}
	return x, err
}

func (e *exprParser) not() (Expr, error) {
	if e.is(tName, "not") {
		off := e.next().off
		if err := e.enter(); err != nil {
			return nil, err
		}
		defer func() { e.depth-- }()
		x, err := e.not()
		return &Unary{Off: off, Op: "not", X: x}, err
	}
	return e.compare()
}

var compareOps = map[string]bool{"==": true, "!=": true, "<": true, ">": true, "<=": true, ">=": true}

func (e *exprParser) compare() (Expr, error) {
	x, err := e.math1()
	for err == nil {
		t := e.peek()
		var op string
		switch {
		case t.kind == tOp && compareOps[t.s]:
			op = t.s
			e.i++
		case t.kind == tName && t.s == "in":
			op = "in"
			e.i++
		case t.kind == tName && t.s == "not" && e.i+1 < len(e.toks) && e.toks[e.i+1].kind == tName && e.toks[e.i+1].s == "in":
			op = "not in"
			e.i += 2
		default:
			return x, nil
		}
		var r Expr
		if r, err = e.math1(); err == nil {
			x = &Binary{Off: t.off, Op: op, L: x, R: r}
		}
	}
	return x, err
}

func (e *exprParser) math1() (Expr, error) {
	x, err := e.concat()
	for err == nil && (e.is(tOp, "+") || e.is(tOp, "-")) {
		t := e.next()
		var r Expr
		if r, err = e.concat(); err == nil {
			x = &Binary{Off: t.off, Op: t.s, L: x, R: r}
		}
	}
	return x, err
}

func (e *exprParser) concat() (Expr, error) {
	x, err := e.math2()
	for err == nil && e.is(tOp, "~") {
		t := e.next()
		var r Expr
		if r, err = e.math2(); err == nil {
			x = &Binary{Off: t.off, Op: "~", L: x, R: r}
		}
	}
	return x, err
}

func (e *exprParser) math2() (Expr, error) {
	x, err := e.pow()
	for err == nil && (e.is(tOp, "*") || e.is(tOp, "/") || e.is(tOp, "//") || e.is(tOp, "%")) {
		t := e.next()
		var r Expr
		if r, err = e.pow(); err == nil {
			x = &Binary{Off: t.off, Op: t.s, L: x, R: r}
		}
	}
	return x, err
}

func (e *exprParser) pow() (Expr, error) {
	x, err := e.unary(true)
	for err == nil && e.is(tOp, "**") {
		t := e.next()
		var r Expr
		if r, err = e.unary(true); err == nil {
			x = &Binary{Off: t.off, Op: "**", L: x, R: r}
		}
	}
	return x, err
}

func (e *exprParser) unary(withFilter bool) (Expr, error) {
	if err := e.enter(); err != nil {
		return nil, err
	}
	defer func() { e.depth-- }()
	var x Expr
	var err error
	if t := e.peek(); t.kind == tOp && (t.s == "-" || t.s == "+") {
		e.i++
		var y Expr
		if y, err = e.unary(false); err != nil {
			return nil, err
		}
		x = &Unary{Off: t.off, Op: t.s, X: y}
	} else {
		if x, err = e.primary(); err != nil {
			return nil, err
		}
		if x, err = e.postfix(x); err != nil {
			return nil, err
		}
	}
	if withFilter {
		return e.filterExpr(x)
	}
	return x, nil
}

func (e *exprParser) postfix(x Expr) (Expr, error) {
	for {
		t := e.peek()
		if t.kind != tOp {
			return x, nil
		}
		switch t.s {
		case ".":
			e.i++
			n := e.next()
			switch n.kind {
			case tName:
				x = &Attr{Off: n.off, X: x, Name: n.s}
			case tInt:
				x = &Index{Off: n.off, X: x, Key: &Const{Off: n.off, V: mustInt(n.s)}}
			default:
				return nil, errAt(n.off, "want an attribute name")
			}
		case "[":
			e.i++
			var err error
			if x, err = e.subscript(x, t.off); err != nil {
				return nil, err
			}
		case "(":
			e.i++
			args, kw, err := e.args()
			if err != nil {
				return nil, err
			}
			x = &Call{Off: t.off, Fn: x, Args: args, Kw: kw}
		default:
			return x, nil
		}
	}
}

func mustInt(s string) int64 {
	v, _ := strconv.ParseInt(s, 10, 64)
	return v
}

func (e *exprParser) subscript(x Expr, off int) (Expr, error) {
	var parts [3]Expr
	n, colon := 0, false
	for {
		if e.accept(tOp, "]") {
			break
		}
		if e.accept(tOp, ":") {
			colon = true
			n++
			if n > 2 {
				return nil, errAt(off, "too many colons in a slice")
			}
			continue
		}
		if parts[n] != nil {
			return nil, errAt(e.peek().off, "want ] or :")
		}
		y, err := e.condexpr(true)
		if err != nil {
			return nil, err
		}
		parts[n] = y
	}
	if !colon {
		if parts[0] == nil {
			return nil, errAt(off, "empty subscript")
		}
		return &Index{Off: off, X: x, Key: parts[0]}, nil
	}
	return &Slice{Off: off, X: x, Lo: parts[0], Hi: parts[1], Step: parts[2]}, nil
}

// args parses call arguments after "(" up to and including ")".
func (e *exprParser) args() ([]Expr, []Kwarg, error) {
	var args []Expr
	var kw []Kwarg
	for !e.accept(tOp, ")") {
		if len(args)+len(kw) > 0 {
			if err := e.expect(","); err != nil {
				return nil, nil, err
			}
			if e.accept(tOp, ")") {
				break
			}
		}
		e.accept(tOp, "*")
		e.accept(tOp, "**")
		if t := e.peek(); t.kind == tName && e.i+1 < len(e.toks) && e.toks[e.i+1].kind == tOp && e.toks[e.i+1].s == "=" {
			e.i += 2
			x, err := e.condexpr(true)
			if err != nil {
				return nil, nil, err
			}
			kw = append(kw, Kwarg{Name: t.s, X: x})
			continue
		}
		x, err := e.condexpr(true)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, x)
		if e.peek().kind == tEOF {
			return nil, nil, errAt(e.off, "unclosed call")
		}
	}
	return args, kw, nil
}

// params parses a macro's (name, name=default, …).
func (e *exprParser) params() ([]string, []Expr, error) {
	if err := e.expect("("); err != nil {
		return nil, nil, err
	}
	var names []string
	var defaults []Expr
	for !e.accept(tOp, ")") {
		if len(names) > 0 {
			if err := e.expect(","); err != nil {
				return nil, nil, err
			}
			if e.accept(tOp, ")") {
				break
			}
		}
		t := e.next()
		if t.kind != tName {
			return nil, nil, errAt(t.off, "want a parameter name")
		}
		var d Expr
		if e.accept(tOp, "=") {
			var err error
			if d, err = e.condexpr(true); err != nil {
				return nil, nil, err
			}
		}
		names, defaults = append(names, t.s), append(defaults, d)
	}
	return names, defaults, nil
}

func (e *exprParser) filterExpr(x Expr) (Expr, error) {
	for {
		switch {
		case e.is(tOp, "|"):
			e.i++
			f, err := e.filter(x)
			if err != nil {
				return nil, err
			}
			x = f
		case e.is(tName, "is"):
			off := e.next().off
			t := &Test{Off: off, X: x, Not: e.accept(tName, "not")}
			n := e.next()
			if n.kind != tName {
				return nil, errAt(n.off, "want a test name")
			}
			t.Name = n.s
			for e.accept(tOp, ".") {
				n := e.next()
				t.Name += "." + n.s
			}
			if e.accept(tOp, "(") {
				args, _, err := e.args()
				if err != nil {
					return nil, err
				}
				t.Args = args
			} else if p := e.peek(); p.kind == tString || p.kind == tInt || p.kind == tFloat || p.kind == tName && !isKeyword(p.s) {
				y, err := e.primary()
				if err != nil {
					return nil, err
				}
				if y, err = e.postfix(y); err != nil {
					return nil, err
				}
				t.Args = []Expr{y}
			}
			x = t
		default:
			return x, nil
		}
	}
}

func isKeyword(s string) bool {
	switch s {
	case "and", "or", "not", "in", "is", "if", "else", "recursive":
		return true
	}
	return false
}

// filter parses a filter's name and arguments after "|".
func (e *exprParser) filter(x Expr) (*Filter, error) {
	n := e.next()
	if n.kind != tName {
		return nil, errAt(n.off, "want a filter name")
	}
	f := &Filter{Off: n.off, X: x, Name: n.s}
	for e.accept(tOp, ".") {
		f.Name += "." + e.next().s
	}
	if e.accept(tOp, "(") {
		args, kw, err := e.args()
		if err != nil {
			return nil, err
		}
		f.Args, f.Kw = args, kw
	}
	return f, nil
}

func (e *exprParser) primary() (Expr, error) {
	t := e.next()
	switch t.kind {
	case tName:
		switch t.s {
		case "true", "True":
			return &Const{Off: t.off, V: true}, nil
		case "false", "False":
			return &Const{Off: t.off, V: false}, nil
		case "none", "None":
			return &Const{Off: t.off, V: nil}, nil
		}
		return &Name{Off: t.off, Name: t.s}, nil
	case tString:
		s, unknown := t.s, t.unknown
		for e.peek().kind == tString { // adjacent literals join
			n := e.next()
			s += n.s
			unknown = unknown || n.unknown
		}
		return &Const{Off: t.off, V: s, Unknown: unknown}, nil
	case tInt:
		v, err := strconv.ParseInt(t.s, 10, 64)
		if err != nil {
			f, _ := strconv.ParseFloat(t.s, 64)
			return &Const{Off: t.off, V: f}, nil
		}
		return &Const{Off: t.off, V: v}, nil
	case tFloat:
		v, err := strconv.ParseFloat(t.s, 64)
		if err != nil {
			return nil, errAt(t.off, "bad number %s", t.s)
		}
		return &Const{Off: t.off, V: v}, nil
	case tOp:
		switch t.s {
		case "(":
			if e.accept(tOp, ")") {
				return &List{Off: t.off, Tuple: true}, nil
			}
			x, err := e.tuple()
			if err != nil {
				return nil, err
			}
			if err := e.expect(")"); err != nil {
				return nil, err
			}
			if l, ok := x.(*List); ok && l.Tuple {
				l.Off = t.off
			}
			return x, nil
		case "[":
			l := &List{Off: t.off}
			for !e.accept(tOp, "]") {
				if len(l.Items) > 0 {
					if err := e.expect(","); err != nil {
						return nil, err
					}
					if e.accept(tOp, "]") {
						break
					}
				}
				x, err := e.condexpr(true)
				if err != nil {
					return nil, err
				}
				l.Items = append(l.Items, x)
			}
			return l, nil
		case "{":
			d := &Dict{Off: t.off}
			for !e.accept(tOp, "}") {
				if len(d.Keys) > 0 {
					if err := e.expect(","); err != nil {
						return nil, err
					}
					if e.accept(tOp, "}") {
						break
					}
				}
				k, err := e.condexpr(true)
				if err != nil {
					return nil, err
				}
				if err := e.expect(":"); err != nil {
					return nil, err
				}
				v, err := e.condexpr(true)
				if err != nil {
					return nil, err
				}
				d.Keys, d.Vals = append(d.Keys, k), append(d.Vals, v)
			}
			return d, nil
		}
	}
	if t.kind == tEOF {
		return nil, errAt(t.off, "unexpected end of expression")
	}
	return nil, errAt(t.off, "unexpected %q", t.s)
}
