package scan

import (
	"strings"
	"testing"
)

// TestAnalyzeBudget: templates built to make folding explode (a name set to itself three times
// over, a hundred times; wide products of long strings) are analysed within foldBudget: the names
// written out are still reported, and the analysis says when it stopped following built ones.
func TestAnalyzeBudget(t *testing.T) {
	big := strings.Repeat("y", 4000)
	var wide strings.Builder
	for i := 0; i < 16; i++ {
		wide.WriteString("{% set a = '" + big + "' %}{% set a = a ~ a %}{% set b = b ~ a %}")
	}
	wide.WriteString(strings.Repeat("{{ x[a~b~a~b~a] }}{{ x|attr(a ~ b|join) }}", 3000))
	self := strings.Repeat("{% set x = x ~ x ~ x %}{% set x = x|replace('a', x) %}", 50) + strings.Repeat("{{ y[x] }}", 5000)
	for name, src := range map[string]string{"wide": wide.String(), "self": self} {
		issues := Analyze(src + "{{ ().__class__ }}")
		var budget, private bool
		for _, is := range issues {
			budget = budget || is.Code == CodeExhaustion && !is.Error && is.Pos == 0
			private = private || is.Code == CodePrivateAttribute && is.Error
		}
		if !budget || !private {
			t.Errorf("%s: budget warning %v, private attribute %v; want both", name, budget, private)
		}
	}
}
