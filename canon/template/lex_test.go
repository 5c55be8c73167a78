package template

import "testing"

// TestStringEscapes: string literals decode as Jinja decodes them (Python's unicode-escape codec):
// the expected values are what jinja2 3.1.2 renders for the same literals.
func TestStringEscapes(t *testing.T) {
	for _, c := range []struct {
		src, want string
		unknown   bool
	}{
		{`'\N{LOW LINE}\N{low line}class\N{Low Line}\N{LOW LINE}'`, "__class__", false},
		{`'\N{LATIN SMALL LETTER A}\N{LATIN CAPITAL LETTER Z}\N{DIGIT SEVEN}\N{FULL STOP}'`, "aZ7.", false},
		{`'\x5f\u005f\U0000005f\137'`, "____", false},
		{`'\060\0\01x'`, "0\x00\x01x", false},
		{`'a\qb'`, `a\qb`, false},
		{`'\N{SNOWMAN}x'`, "\uFFFDx", true},
		{`'ok' '\N{SNOWMAN}'`, "ok\uFFFD", true},
	} {
		tpl, err := Parse("{{ " + c.src + " }}")
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		k, ok := tpl.Nodes[0].(*Output).X.(*Const)
		if !ok || k.V != c.want || k.Unknown != c.unknown {
			t.Errorf("%s: got %#v, want %q (unknown %v)", c.src, tpl.Nodes[0].(*Output).X, c.want, c.unknown)
		}
	}
	for _, src := range []string{`'\N{LOW LINE'`, `'\N'`, `'\Nx'`} {
		if _, err := Parse("{{ " + src + " }}"); err == nil {
			t.Errorf("%s: parsed, want a syntax error (Python: malformed \\N character escape)", src)
		}
	}
}
