package template

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Map is an ordered mapping: a message, a namespace, a dict literal. Keys keep the order they were
// first set in (as a Python dict does).
type Map struct {
	keys []string
	vals map[string]any
	orig map[string]any // a key that is not a string (an int of a dict literal), as it was written
}

// NewMap returns a Map of the key-value pairs kv (key, value, key, value, …).
func NewMap(kv ...any) *Map {
	m := &Map{vals: map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		m.Set(fmt.Sprint(kv[i]), kv[i+1])
	}
	return m
}

// Set sets key to v.
func (m *Map) Set(key string, v any) {
	if _, ok := m.vals[key]; !ok {
		m.keys = append(m.keys, key)
	}
	m.vals[key] = v
}

// setKey sets the key k (any value; looked up by its text) to v, keeping k as it is for iteration.
func (m *Map) setKey(k, v any) {
	key := str(k)
	if _, isStr := k.(string); !isStr {
		if m.orig == nil {
			m.orig = map[string]any{}
		}
		m.orig[key] = k
	}
	m.Set(key, v)
}

// key is the key named key as it was written.
func (m *Map) key(key string) any {
	if k, ok := m.orig[key]; ok {
		return k
	}
	return key
}

// Get returns the value of key.
func (m *Map) Get(key string) (any, bool) {
	v, ok := m.vals[key]
	return v, ok
}

// Len is the number of keys.
func (m *Map) Len() int { return len(m.keys) }

// undefined is a name or key that is not there.
type undefined struct{}

// namespace is what namespace() makes: attributes that a loop's body can set.
type namespace struct{ m *Map }

// fn is a callable: a global, a bound method, a macro.
type fn func(r *renderer, args []any, kw *Map) (any, error)

func truthy(v any) bool {
	switch v := v.(type) {
	case nil, undefined:
		return false
	case bool:
		return v
	case int64:
		return v != 0
	case float64:
		return v != 0
	case string:
		return v != ""
	case []any:
		return len(v) > 0
	case *Map:
		return v.Len() > 0
	}
	return true
}

// str is v as Python's str() writes it.
func str(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return "None"
	case undefined:
		return ""
	}
	return repr(v)
}

// repr is v as Python's repr() writes it.
func repr(v any) string {
	switch v := v.(type) {
	case nil:
		return "None"
	case undefined:
		return ""
	case bool:
		if v {
			return "True"
		}
		return "False"
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return map[bool]string{true: "inf", false: "nan"}[math.IsInf(v, 1)]
		}
		if v == math.Trunc(v) && math.Abs(v) < 1e16 {
			return strconv.FormatFloat(v, 'f', 1, 64)
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	case string:
		if strings.Contains(v, "'") && !strings.Contains(v, `"`) {
			return `"` + v + `"`
		}
		return "'" + strings.ReplaceAll(strings.ReplaceAll(v, `\`, `\\`), "'", `\'`) + "'"
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = repr(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *Map:
		parts := make([]string, len(v.keys))
		for i, k := range v.keys {
			parts[i] = repr(k) + ": " + repr(v.vals[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case *namespace:
		return "<Namespace " + repr(v.m) + ">"
	}
	return fmt.Sprintf("<%T>", v)
}

// toJSON writes v as Python's json.dumps(v, ensure_ascii=False, indent=indent) does (transformers'
// tojson), keys sorted when sortKeys.
func toJSON(v any, indent int, sortKeys bool) string {
	var b strings.Builder
	writeJSON(&b, v, indent, sortKeys, 0)
	return b.String()
}

func writeJSON(b *strings.Builder, v any, indent int, sortKeys bool, depth int) {
	nl := func(d int) {
		if indent > 0 {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(" ", indent*d))
		}
	}
	sep := ", "
	if indent > 0 {
		sep = ","
	}
	switch v := v.(type) {
	case nil, undefined:
		b.WriteString("null")
	case bool:
		b.WriteString(map[bool]string{true: "true", false: "false"}[v])
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case float64:
		b.WriteString(repr(v))
	case string:
		q, _ := json.Marshal(v)
		s := string(q)
		s = strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(s)
		b.WriteString(s)
	case []any:
		if len(v) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteString(sep)
			}
			nl(depth + 1)
			writeJSON(b, x, indent, sortKeys, depth+1)
		}
		nl(depth)
		b.WriteByte(']')
	case *Map:
		if v.Len() == 0 {
			b.WriteString("{}")
			return
		}
		keys := v.keys
		if sortKeys {
			keys = append([]string{}, keys...)
			sort.Strings(keys)
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(sep)
			}
			nl(depth + 1)
			writeJSON(b, k, indent, sortKeys, depth+1)
			b.WriteString(": ")
			writeJSON(b, v.vals[k], indent, sortKeys, depth+1)
		}
		nl(depth)
		b.WriteByte('}')
	default:
		writeJSON(b, repr(v), indent, sortKeys, depth)
	}
}

func num(v any) (float64, bool) {
	switch v := v.(type) {
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
	return 0, false
}

func equal(a, b any) bool {
	if x, ok := num(a); ok {
		if y, ok := num(b); ok {
			return x == y
		}
		return false
	}
	switch a := a.(type) {
	case string:
		s, ok := b.(string)
		return ok && a == s
	case nil:
		return b == nil
	case undefined:
		_, ok := b.(undefined)
		return ok
	case []any:
		l, ok := b.([]any)
		if !ok || len(l) != len(a) {
			return false
		}
		for i := range a {
			if !equal(a[i], l[i]) {
				return false
			}
		}
		return true
	case *Map:
		m, ok := b.(*Map)
		if !ok || m.Len() != a.Len() {
			return false
		}
		for _, k := range a.keys {
			if y, ok := m.vals[k]; !ok || !equal(a.vals[k], y) {
				return false
			}
		}
		return true
	}
	return a == b
}

// items is what iterating v gives.
func items(v any) ([]any, error) {
	switch v := v.(type) {
	case []any:
		return v, nil
	case *Map:
		out := make([]any, len(v.keys))
		for i, k := range v.keys {
			out[i] = v.key(k)
		}
		return out, nil
	case string:
		out := []any{}
		for _, r := range v {
			out = append(out, string(r))
		}
		return out, nil
	case nil, undefined:
		return nil, nil
	}
	return nil, fmt.Errorf("%s is not iterable", typeName(v))
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "None"
	case undefined:
		return "undefined"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case *Map:
		return "dict"
	case fn:
		return "function"
	}
	return fmt.Sprintf("%T", v)
}
