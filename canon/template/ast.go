package template

// Node is a statement of a template: text, an output, a block.
type Node interface{ pos() int }

// Expr is an expression.
type Expr interface{ pos() int }

type (
	// Text is literal text.
	Text struct {
		Off int
		S   string
	}
	// Output is {{ X }}.
	Output struct {
		Off int
		X   Expr
	}
	// If is {% if %}…{% elif %}…{% else %}…{% endif %}: Conds[i] guards Bodies[i]; Else may be nil.
	If struct {
		Off    int
		Conds  []Expr
		Bodies [][]Node
		Else   []Node
	}
	// For is {% for Vars in Iter [if Cond] [recursive] %}Body{% else %}Else{% endfor %}.
	For struct {
		Off       int
		Vars      []string
		Iter      Expr
		Cond      Expr
		Recursive bool
		Body      []Node
		Else      []Node
	}
	// Set is {% set Vars = X %} or {% set Vars.Attr = X %} (a namespace attribute when Attr != "").
	Set struct {
		Off  int
		Vars []string
		Attr string
		X    Expr
	}
	// SetBlock is {% set Var [| filters] %}Body{% endset %}.
	SetBlock struct {
		Off     int
		Var     string
		Filters []*Filter
		Body    []Node
	}
	// Macro is {% macro Name(Params) %}Body{% endmacro %}; Defaults[i] is nil for a parameter without one.
	Macro struct {
		Off      int
		Name     string
		Params   []string
		Defaults []Expr
		Body     []Node
	}
	// CallBlock is {% call(Params) Call %}Body{% endcall %}.
	CallBlock struct {
		Off    int
		Params []string
		Call   Expr
		Body   []Node
	}
	// FilterBlock is {% filter F %}Body{% endfilter %}.
	FilterBlock struct {
		Off     int
		Filters []*Filter
		Body    []Node
	}
	// Block is a body rendered as it is: transformers' {% generation %}, {% block %}.
	Block struct {
		Off  int
		Name string
		Body []Node
	}
	// Do is {% do X %}.
	Do struct {
		Off int
		X   Expr
	}
	// Loop is {% break %} or {% continue %}.
	Loop struct {
		Off   int
		Break bool
	}
)

type (
	// Const is a literal: a string, int64, float64, bool or nil (none).
	Const struct {
		Off int
		V   any
		// Unknown: a string literal with a \N{NAME} escape this package cannot name (V holds U+FFFD
		// in its place), so its value is not known exactly.
		Unknown bool
	}
	// Name is a variable.
	Name struct {
		Off  int
		Name string
	}
	// Attr is X.Name.
	Attr struct {
		Off  int
		X    Expr
		Name string
	}
	// Index is X[Key].
	Index struct {
		Off    int
		X, Key Expr
	}
	// Slice is X[Lo:Hi:Step], each part possibly nil.
	Slice struct {
		Off          int
		X            Expr
		Lo, Hi, Step Expr
	}
	// Call is Fn(Args, Kw).
	Call struct {
		Off  int
		Fn   Expr
		Args []Expr
		Kw   []Kwarg
	}
	// Filter is X | Name(Args, Kw); X is nil inside a filter block or a set block.
	Filter struct {
		Off  int
		X    Expr
		Name string
		Args []Expr
		Kw   []Kwarg
	}
	// Test is X is [not] Name(Args).
	Test struct {
		Off  int
		X    Expr
		Name string
		Args []Expr
		Not  bool
	}
	// Binary is L Op R (arithmetic, comparison, and, or, in, not in, ~).
	Binary struct {
		Off  int
		Op   string
		L, R Expr
	}
	// Unary is Op X (not, -, +).
	Unary struct {
		Off int
		Op  string
		X   Expr
	}
	// Cond is Then if Test else Else (Else nil when absent).
	Cond struct {
		Off              int
		Then, Test, Else Expr
	}
	// List is [Items] or, with Tuple, (Items).
	List struct {
		Off   int
		Items []Expr
		Tuple bool
	}
	// Dict is {Keys: Vals}.
	Dict struct {
		Off  int
		Keys []Expr
		Vals []Expr
	}
)

// Kwarg is a keyword argument of a call.
type Kwarg struct {
	Name string
	X    Expr
}

func (n *Text) pos() int        { return n.Off }
func (n *Output) pos() int      { return n.Off }
func (n *If) pos() int          { return n.Off }
func (n *For) pos() int         { return n.Off }
func (n *Set) pos() int         { return n.Off }
func (n *SetBlock) pos() int    { return n.Off }
func (n *Macro) pos() int       { return n.Off }
func (n *CallBlock) pos() int   { return n.Off }
func (n *FilterBlock) pos() int { return n.Off }
func (n *Block) pos() int       { return n.Off }
func (n *Do) pos() int          { return n.Off }
func (n *Loop) pos() int        { return n.Off }
func (n *Const) pos() int       { return n.Off }
func (n *Name) pos() int        { return n.Off }
func (n *Attr) pos() int        { return n.Off }
func (n *Index) pos() int       { return n.Off }
func (n *Slice) pos() int       { return n.Off }
func (n *Call) pos() int        { return n.Off }
func (n *Filter) pos() int      { return n.Off }
func (n *Test) pos() int        { return n.Off }
func (n *Binary) pos() int      { return n.Off }
func (n *Unary) pos() int       { return n.Off }
func (n *Cond) pos() int        { return n.Off }
func (n *List) pos() int        { return n.Off }
func (n *Dict) pos() int        { return n.Off }

// Offset is the byte offset in the template source of a Node or an Expr (-1 for anything else).
func Offset(x any) int {
	if p, ok := x.(interface{ pos() int }); ok {
		return p.pos()
	}
	return -1
}
