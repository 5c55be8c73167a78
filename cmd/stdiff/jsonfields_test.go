package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stdiff/stdiff/canon/card"
	"github.com/stdiff/stdiff/canon/check"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/inspect"
	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/diff"
	"github.com/stdiff/stdiff/hash"
	"github.com/stdiff/stdiff/hash/dupes"
	"github.com/stdiff/stdiff/hash/dupes/act"
)

// The JSON field tables of docs/scripting.md ("JSON fields") are made from the Go types each command
// marshals: every field, its JSON type, when it is absent or null, and its doc comment. The test fails
// when the page's tables are not what the types give (a field added, removed, retyped or redocumented);
// `go test ./cmd/stdiff -run TestScriptingFields -update` writes them.

// fieldRoots are the documents the commands write, in the page's order.
var fieldRoots = []struct {
	title, schema string
	v             any
}{
	{"diff", "stdiff.diff/v1", diff.Report{}},
	{"check", "stdiff.check/v1", check.Report{}},
	{"inspect", "stdiff.inspect/v1", inspect.Card{}},
	{"inspect --short", "stdiff.inspect-short/v1", inspect.ShortReport{}},
	{"hash", "stdiff.hash/v1", hash.Report{}},
	{"hash --check", "stdiff.hash-check/v1", hash.VerifyReport{}},
	{"hash --xet --check hf://…", "stdiff.hash-hub/v1", hash.HubMatchReport{}},
	{"dupes", "stdiff.dupes/v1", dupes.Report{}},
	{"dupes --delete, --link", "stdiff.dupes-act/v1", act.Report{}},
}

// docField is one row of a table.
type docField struct {
	path, typ, absent, meaning string
}

var (
	marshalerType     = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	textMarshalerType = reflect.TypeOf((*interface{ MarshalText() ([]byte, error) })(nil)).Elem()
	timeType          = reflect.TypeOf(time.Time{})
	findingType       = reflect.TypeOf(finding.Finding{})
)

// customSamples are, for each type that writes its own JSON (a MarshalJSON method), values whose JSON
// shows every field it can write: the fields are read from what it writes, not from its Go fields.
// fill gives a value with every pointer, slice and map set; fillNaN the same with every float NaN (a
// field that is then null is "or null").
func customSamples(t reflect.Type) []any {
	switch t {
	case reflect.TypeOf(hash.File{}):
		f := hash.File{}
		fill(reflect.ValueOf(&f).Elem())
		none := hash.Hex("")
		bare := hash.File{Path: "p", Size: -1, Ecosystem: &hash.Ecosystem{}, Xet: &hash.Xet{}, ContentID: &none}
		return []any{f, bare, hash.File{Path: "p", Size: -1}, errorSample{hash.File{Path: "p", Err: errors.New("e")}}}
	case reflect.TypeOf(hash.VerifyResult{}):
		v := hash.VerifyResult{}
		fill(reflect.ValueOf(&v).Elem())
		return []any{v, hash.VerifyResult{Path: "p"}, errorSample{hash.VerifyResult{Path: "p", Err: errors.New("e")}}}
	case reflect.TypeOf(card.Count{}):
		return []any{card.Count{N: 1}, card.Count{PerLayer: []uint64{1}}}
	case reflect.TypeOf(lora.CivitAI{}):
		return []any{lora.CivitAI{ModelID: 1, VersionID: 2}, lora.CivitAI{}}
	case reflect.TypeOf(hash.Hex("")):
		return []any{hash.Hex("00"), hash.Hex("")}
	case reflect.TypeOf(inspect.Metadata{}):
		return []any{inspect.Metadata{{Key: "*", Value: "v"}}}
	case reflect.TypeOf(inspect.Params{}):
		return []any{inspect.Params{{DType: "*", Elements: 1}}}
	}
	a := reflect.New(t).Elem()
	fill(a)
	samples := []any{a.Interface(), reflect.Zero(t).Interface()}
	if a.Kind() == reflect.Struct { // each of the type's own floats NaN: those it writes as null when undefined
		for i := 0; i < a.NumField(); i++ {
			b := reflect.New(t).Elem()
			b.Set(a)
			if f := b.Field(i); f.CanSet() && f.Kind() == reflect.Float64 {
				f.SetFloat(math.NaN())
				if _, err := json.Marshal(b.Interface()); err == nil { // else it never is NaN
					samples = append(samples, b.Interface())
				}
			}
		}
	}
	return samples
}

// errorSample is a sample of a model that could not be read: its JSON is {path, error}, which says
// nothing of when the other fields are absent.
type errorSample struct{ v any }

// fill sets every exported field of v: pointers, slices (one element) and maps (key "*") made, numbers
// 1, strings "x", bools true.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.Type().Elem().Kind() != reflect.Interface {
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == timeType {
			v.Set(reflect.ValueOf(time.Unix(1, 0)))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		if k.Kind() == reflect.String {
			k.SetString("*")
		}
		fill(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	}
}

// shape is what samples of one type's JSON hold: each path (in the order first written) with its
// JSON types, how many objects each path was a key of, and how many of those had it.
type shape struct {
	order           []string
	types           map[string]map[string]bool
	objects, having map[string]int
}

// add adds the JSON document b, read in order.
func (sh *shape) add(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	return sh.value(dec, "")
}

func (sh *shape) typ(p, typ string) {
	if sh.types[p] == nil {
		sh.types[p] = map[string]bool{}
		sh.order = append(sh.order, p)
	}
	sh.types[p][typ] = true
}

func (sh *shape) value(dec *json.Decoder, p string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok := tok.(type) {
	case json.Delim:
		if tok == '[' {
			sh.typ(p, "array")
			for dec.More() {
				if err := sh.value(dec, p+"[]"); err != nil {
					return err
				}
			}
		} else {
			sh.typ(p, "object")
			sh.objects[p]++
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				sh.having[join(p, k.(string))]++
				if err := sh.value(dec, join(p, k.(string))); err != nil {
					return err
				}
			}
		}
		_, err := dec.Token() // the closing delimiter
		return err
	case string:
		sh.typ(p, "string")
	case float64:
		sh.typ(p, "number")
	case bool:
		sh.typ(p, "boolean")
	case nil:
		sh.typ(p, "null")
	}
	return nil
}

// parent is the path of the object p is a key of.
func parent(p string) string {
	if i := strings.LastIndex(p, "."); i >= 0 {
		return p[:i]
	}
	return ""
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// typeWords is how a set of JSON types reads: "number or null", "array or number".
func typeWords(set map[string]bool) string {
	var l []string
	for _, k := range []string{"string", "number", "boolean", "object", "array"} {
		if set[k] {
			l = append(l, k)
		}
	}
	if set["null"] {
		l = append(l, "null")
	}
	return strings.Join(l, " or ")
}

// docs are the doc comments of the struct fields of the repository's packages (tests aside): by
// "importpath.Type.GoName" and by "importpath.Type#jsonname"; and of named types, by "importpath.Type".
type docs map[string]string

func loadDocs(t *testing.T) docs {
	t.Helper()
	root := filepath.Join("..", "..")
	d := docs{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if e.IsDir() {
			if e.Name() == "testdata" || (strings.HasPrefix(e.Name(), ".") && rel != ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := "github.com/stdiff/stdiff/" + filepath.ToSlash(filepath.Dir(rel))
		pkg = strings.TrimSuffix(pkg, "/.")
		ast.Inspect(f, func(n ast.Node) bool {
			g, ok := n.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				return true
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				doc := ts.Doc.Text()
				if doc == "" && len(g.Specs) == 1 {
					doc = g.Doc.Text()
				}
				d[pkg+"."+ts.Name.Name] = doc
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				prev := ""
				for _, fl := range st.Fields.List {
					fdoc := fl.Doc.Text()
					if fdoc == "" {
						fdoc = fl.Comment.Text()
					}
					for _, n := range fl.Names {
						this := fdoc
						if this == "" && strings.Contains(prev, n.Name) {
							this = prev // "A and B say …" documents B too
						}
						d[pkg+"."+ts.Name.Name+"."+n.Name] = this
						if fl.Tag != nil {
							tag := reflect.StructTag(strings.Trim(fl.Tag.Value, "`")).Get("json")
							if name, _, _ := strings.Cut(tag, ","); name != "" && name != "-" {
								d[pkg+"."+ts.Name.Name+"#"+name] = this
								d[pkg+"."+ts.Name.Name+"@"+name] = n.Name
								d[pkg+"."+ts.Name.Name+":"+name] = typeIdent(fl.Type)
							}
						}
					}
					if fdoc != "" {
						prev = fdoc
					}
				}
			}
			return false
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// words makes a doc comment one line for a table cell.
func words(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// typeDoc is the doc comment of t (a named type), or "".
func (d docs) typeDoc(t reflect.Type) string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Name() == "" {
		return ""
	}
	return d[t.PkgPath()+"."+t.Name()]
}

// typeIdent is the name of the struct type a field's type expression leads to (*T, []T, []*T: T), or "".
func typeIdent(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.ArrayType:
			e = x.Elt
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// byJSON is the doc of the field at path (JSON names, "a.b[].c") of what custom type t writes: the
// field is looked up in t, then in the struct types of t's package that have a field of path's first
// name (the record t writes in its place), following each name's field type; a record's field with
// no doc has the doc of t's field of the same Go name.
func (d docs) byJSON(t reflect.Type, path string) string {
	names := strings.Split(strings.ReplaceAll(path, "[]", ""), ".")
	pkg := t.PkgPath() + "."
	starts := []string{t.Name()}
	var others []string
	for k := range d {
		if rest, ok := strings.CutPrefix(k, pkg); ok && strings.HasSuffix(rest, "#"+names[0]) && !strings.Contains(rest, "/") {
			others = append(others, strings.TrimSuffix(rest, "#"+names[0]))
		}
	}
	sort.Strings(others)
	for _, typ := range append(starts, others...) {
		for _, n := range names[:len(names)-1] {
			typ = d[pkg+typ+":"+n]
		}
		last := names[len(names)-1]
		if s := d[pkg+typ+"#"+last]; s != "" {
			return s
		}
		if len(names) == 1 {
			if s := d[pkg+t.Name()+"."+d[pkg+typ+"@"+last]]; s != "" {
				return s
			}
		}
	}
	return ""
}

// jsonFields lists the fields of the document of type t.
func jsonFields(t reflect.Type, d docs) []docField {
	var out []docField
	firstPath = map[reflect.Type]string{}
	walkFields(t, "", map[reflect.Type]bool{}, d, &out)
	return out
}

// firstPath is where, in the document being listed, each named struct type was first listed: its
// fields are listed there only.
var firstPath map[reflect.Type]string

// listedAt is where the fields of struct type t were listed already, or "" (then they are to be
// listed at path).
func listedAt(t reflect.Type, path string) string {
	if t.Name() == "" {
		return ""
	}
	if p, ok := firstPath[t]; ok {
		return p
	}
	firstPath[t] = path
	return ""
}

func walkFields(t reflect.Type, prefix string, seen map[reflect.Type]bool, d docs, out *[]docField) {
	walkFieldsShadowed(t, prefix, seen, map[string]bool{}, d, out)
}

// walkFieldsShadowed lists t's fields under prefix, but those named in shadowed: of fields of one
// name, encoding/json writes the one least deeply embedded.
func walkFieldsShadowed(t reflect.Type, prefix string, seen map[reflect.Type]bool, shadowed map[string]bool, d docs, out *[]docField) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	defer delete(seen, t)
	here := map[string]bool{}
	for k := range shadowed {
		here[k] = true
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !(f.Anonymous && name == "") {
			if name == "" {
				name = f.Name
			}
			here[name] = true
		}
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" {
			walkFieldsShadowed(f.Type, prefix, seen, here, d, out)
			continue
		}
		if name == "" {
			name = f.Name
		}
		if shadowed[name] {
			continue
		}
		meaning := d[t.PkgPath()+"."+t.Name()+"."+f.Name]
		if prefix == "" && name == "schema" {
			meaning = "the document's schema and its version (see [Formats](#formats))"
		}
		if meaning == "" {
			meaning = d.typeDoc(f.Type)
		}
		omit := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
		field(f.Type, join(prefix, name), omit, words(meaning), seen, d, out)
	}
}

// field adds the field at path of type ft (and what it holds).
func field(ft reflect.Type, path string, omit bool, meaning string, seen map[reflect.Type]bool, d docs, out *[]docField) {
	ptr := false
	for ft.Kind() == reflect.Pointer {
		ft, ptr = ft.Elem(), true
	}
	absent := "never"
	switch {
	case omit && (ptr || ft.Kind() == reflect.Struct):
		absent = "absent when none"
	case omit && ft.Kind() == reflect.Bool:
		absent = "absent when false"
	case omit && (ft.Kind() == reflect.Slice || ft.Kind() == reflect.Map || ft.Kind() == reflect.String):
		absent = "absent when empty"
	case omit:
		absent = "absent when 0"
	case ptr:
		absent = "null when none"
	case ft.Kind() == reflect.Slice || ft.Kind() == reflect.Map:
		absent = "may be null when empty"
	}
	row := func(typ string) { *out = append(*out, docField{path, typ, absent, meaning}) }
	switch {
	case ft == findingType:
		row("object: a finding (see [Findings](#findings))")
		return
	case ft == timeType:
		row("string (RFC 3339 time)")
		return
	case ft.Implements(marshalerType) || reflect.PointerTo(ft).Implements(marshalerType):
		sh := &shape{types: map[string]map[string]bool{}, objects: map[string]int{}, having: map[string]int{}}
		for _, s := range customSamples(ft) {
			objects, having := sh.objects, sh.having
			e, isErr := s.(errorSample)
			if isErr { // counted apart: its fields' absence says nothing
				s, sh.objects, sh.having = e.v, map[string]int{}, map[string]int{}
			}
			b, err := json.Marshal(s)
			if err == nil {
				err = sh.add(b)
			}
			if err != nil {
				panic(fmt.Sprintf("%s: %v", ft, err))
			}
			sh.objects, sh.having = objects, having
		}
		at := listedAt(ft, path)
		for _, p := range sh.order {
			if p == "" {
				if ptr && !omit {
					sh.types[p]["null"] = true
				}
				if at != "" && sh.types[p]["object"] {
					row(typeWords(sh.types[p]) + " (fields as `" + at + "`)")
					return
				}
				row(typeWords(sh.types[p]))
				continue
			}
			if strings.HasSuffix(p, "[]") || strings.Contains(p, "findings[]") {
				continue // an array's elements: the array's row says what they are
			}
			sub := path + p
			if !strings.HasPrefix(p, "[]") {
				sub = path + "." + p
			}
			last := p[strings.LastIndexAny(p, ".]")+1:]
			m := words(d.byJSON(ft, strings.TrimPrefix(p, "[].")))
			if last == "*" {
				m = "a key of the object above"
			}
			ab := "—"
			if sh.having[p] < sh.objects[parent(p)] {
				ab = "absent when none"
			}
			typ := typeWords(sh.types[p])
			if el := sh.types[p+"[]"]; el != nil {
				typ = strings.Replace(typ, "array", "array of "+plural(typeWords(el)), 1)
			}
			if last == "findings" {
				typ = strings.Replace(typ, "array of objects", "array of findings (see [Findings](#findings))", 1)
			}
			*out = append(*out, docField{sub, typ, ab, m})
		}
		return
	case ft.Implements(textMarshalerType):
		row("string")
		return
	}
	switch ft.Kind() {
	case reflect.String:
		row(nullable("string", ptr && !omit))
	case reflect.Bool:
		row(nullable("boolean", ptr && !omit))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		row(nullable("number", ptr && !omit))
	case reflect.Interface:
		row("any JSON value")
	case reflect.Slice, reflect.Array:
		et := ft.Elem()
		for et.Kind() == reflect.Pointer {
			et = et.Elem()
		}
		switch {
		case ft.Elem().Kind() == reflect.Uint8:
			row("string (base64)")
		case et == findingType:
			row("array of findings (see [Findings](#findings))")
		case et.Kind() == reflect.Struct && et != timeType && !et.Implements(marshalerType):
			if p := listedAt(et, path+"[]"); p != "" {
				row("array of objects (fields as `" + p + "`)")
				return
			}
			row("array of objects")
			walkFields(et, path+"[]", seen, d, out)
		default:
			var sub []docField
			field(et, path+"[]", false, "", seen, d, &sub)
			row("array of " + plural(sub[0].typ))
			*out = append(*out, sub[1:]...)
		}
	case reflect.Map:
		var sub []docField
		field(ft.Elem(), path+".*", false, "", seen, d, &sub)
		row("object of " + plural(sub[0].typ))
		*out = append(*out, sub[1:]...)
	case reflect.Struct:
		if p := listedAt(ft, path); p != "" {
			row(nullable("object", ptr && !omit) + " (fields as `" + p + "`)")
			return
		}
		row(nullable("object", ptr && !omit))
		walkFields(ft, path, seen, d, out)
	default:
		panic(fmt.Sprintf("%s: a %s", path, ft.Kind()))
	}
}

func nullable(typ string, null bool) string {
	if null {
		return typ + " or null"
	}
	return typ
}

func plural(typ string) string {
	switch typ {
	case "string", "number", "boolean", "object", "array":
		return typ + "s"
	}
	return typ
}

// fieldTables is the "JSON fields" part of the page.
func fieldTables(t *testing.T) string {
	d := loadDocs(t)
	var b strings.Builder
	for _, r := range fieldRoots {
		fmt.Fprintf(&b, "\n### %s (`%s`)\n\n| field | type | absent or null | meaning |\n|---|---|---|---|\n", r.title, r.schema)
		for _, f := range jsonFields(reflect.TypeOf(r.v), d) {
			absent := f.absent
			if absent == "" || absent == "never" {
				absent = "—"
			}
			meaning := f.meaning
			if meaning == "" {
				meaning = "—"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.path, f.typ, absent, meaning)
		}
	}
	return b.String()
}

const (
	fieldsBegin = "<!-- JSON fields: made by TestScriptingFields from the Go types; go test ./cmd/stdiff -run TestScriptingFields -update -->\n"
	fieldsEnd   = "<!-- end of JSON fields -->\n"
)

// TestScriptingFields: docs/scripting.md's JSON field tables list every field of every command's JSON
// document, with its type, when it is absent or null, and what it means, as the Go types say.
func TestScriptingFields(t *testing.T) {
	path := filepath.Join(docsDir, "scripting.md")
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := fieldTables(t)
	i := bytes.Index(page, []byte(fieldsBegin))
	j := bytes.Index(page, []byte(fieldsEnd))
	if *update {
		if i < 0 || j < i {
			t.Fatalf("%s: no %q … %q to write the tables between", path, fieldsBegin, fieldsEnd)
		}
		out := append(append(append([]byte{}, page[:i+len(fieldsBegin)]...), want...), page[j:]...)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if i < 0 || j < i {
		t.Fatalf("%s has no JSON field tables (run with -update)", path)
	}
	got := string(page[i+len(fieldsBegin) : j])
	if got == want {
		return
	}
	have := map[string]bool{}
	for _, l := range strings.Split(got, "\n") {
		have[l] = true
	}
	n := 0
	for _, l := range strings.Split(want, "\n") {
		if !have[l] && n < 20 {
			t.Errorf("docs/scripting.md lacks: %s", l)
			n++
		}
	}
	t.Errorf("docs/scripting.md's JSON field tables are not what the Go types give: run go test ./cmd/stdiff -run TestScriptingFields -update and review the diff")
}
