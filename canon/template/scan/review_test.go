package scan

import (
	"strings"
	"testing"
	"time"
)

// TestReviewBudgetFailsSafe: a template that spends the fold budget first (self's name set to
// itself three times over, as TestAnalyzeBudget's) cannot hide a private attribute written as a
// literal behind it: |attr('__class__'), an item ['__globals__'], a literal joined with ~ are still
// errors, as they are without the padding; the analysis stays within the budget (about 2 s of CPU).
func TestReviewBudgetFailsSafe(t *testing.T) {
	pad := strings.Repeat("{% set x = x ~ x ~ x %}{% set x = x|replace('a', x) %}", 50) + strings.Repeat("{{ y[x] }}", 5000)
	for _, payload := range []string{
		"{{ ()|attr('__class__') }}",
		"{{ x['__globals__'] }}",
		"{{ x['__glo' ~ 'bals__'] }}",
		"{{ ()|attr('__cla' ~ 'ss__')|attr('__base__') }}",
		"{{ x|map(attribute='__class__')|list }}",
	} {
		for _, src := range []string{payload, pad + payload} {
			start := time.Now()
			issues := Analyze(src)
			el := time.Since(start)
			private := false
			for _, is := range issues {
				private = private || is.Code == CodePrivateAttribute && is.Error
			}
			if !private {
				t.Errorf("%s (padded %v): no private-attribute error, issues %+v", payload, len(src) > len(payload), issues)
			}
			if el > time.Minute { // about 2 s of CPU; the wall clock of a loaded machine is more
				t.Errorf("%s: %v to analyse", payload, el)
			}
		}
	}
}

// TestReviewLiteralItem: an item of a literal list or tuple taken by a constant index (or |first,
// |last; directly or through a name set to the literal) is that item, whatever the others are; a loop
// over a literal takes the items that fold; x or y, x and y are one of the two:
// ()|attr(('__class__', x)[0]) is a private attribute (an error, exit 1), as ()|attr('__class__') is;
// each was a computed attribute (a warning: "OK", exit 0) because x is data.
func TestReviewLiteralItem(t *testing.T) {
	for _, src := range []string{
		"{{ ()|attr(('__class__', x)[0]) }}",
		"{{ ()|attr([x, '__class__'][-1]) }}",
		"{{ ()|attr(['__class__', x|replace('a', x)][0]) }}",
		"{{ x[('__globals__', y)[0]] }}",
		"{{ ()|attr(('__class__', x)|first) }}",
		"{{ ()|attr([x, '__class__']|last) }}",
		"{{ ()|attr(x or '__class__') }}",
		"{{ ()|attr(x and '__class__') }}",
		"{% set t = ('__class__', x) %}{{ ()|attr(t[0]) }}",
		"{% for n in ['__class__', x] %}{{ ()|attr(n) }}{% endfor %}",
	} {
		private := false
		for _, is := range Analyze(src) {
			private = private || is.Code == CodePrivateAttribute && is.Error
		}
		if !private {
			t.Errorf("%s: no private-attribute error: %+v", src, Analyze(src))
		}
	}
	// the index past the literal, or of another item, is no private name
	for _, src := range []string{"{{ ()|attr(('__class__', x)[1]) }}", "{{ ()|attr(('__class__', x)[2]) }}"} {
		for _, is := range Analyze(src) {
			if is.Code == CodePrivateAttribute {
				t.Errorf("%s: %+v", src, is)
			}
		}
	}
}

// TestReviewPartialLists: lists with one item that does not fold (data) still give their other items
// to the filters that pass them on: each of these reaches __class__ whatever x is, and is a computed
// attribute, a warning (check: OK, exit 0). items() is all or nothing; giving it partial lists means
// checking every one of its callers (a join of a partial list must not fold to fewer values).
func TestReviewPartialLists(t *testing.T) {

	for _, src := range []string{
		"{{ ()|attr(('__class__', x)|join('')) }}",
		"{{ ()|attr(('__class__', x)|map('string')|first) }}",
		"{{ ()|attr(('__class__', x)|select|first) }}",
		"{{ ()|attr(['__class__', x]|reverse|last) }}",
		"{{ ()|attr({'k': '__class__'}.get(x, '__class__')) }}",
	} {
		private := false
		for _, is := range Analyze(src) {
			private = private || is.Code == CodePrivateAttribute && is.Error
		}
		if !private {
			t.Errorf("%s: no private-attribute error", src)
		}
	}
}

// TestPartialListsBounds: a list with a data item gives the names its known items build, with the
// filters the review named (join, map, select, reverse, sort; unique, str.join, a name set to the
// list, dict.get with a data key) as errors; a name the data item may start (it is first, select may
// keep it first, reject keeps only the empty string known), or that no known item makes private, is a computed
// name, a warning, never an error.
func TestPartialListsBounds(t *testing.T) {
	for _, src := range []string{
		"{{ ()|attr(['__cla', 'ss__', x]|join) }}",
		"{{ ()|attr(['__cla', 'ss__', x]|join('')) }}",
		"{{ ()|attr(''.join(['__cla', 'ss__', x])) }}",
		"{% set l = ['__cla', 'ss__', x] %}{{ ()|attr(l|join) }}",
		"{{ ()|attr(['__CLA', 'SS__', x]|map('lower')|join) }}",
		"{{ ()|attr(['', '__class__', x]|select|first) }}",
		"{{ ()|attr([x, 'ss__', '__cla']|reverse|join) }}",
		"{{ ()|attr(['ss__', '__cla', x]|sort|join) }}",
		"{{ ()|attr(['ss__', x, '__cla']|unique|join) }}",
		"{{ x[['__glo', 'bals__', y]|join] }}",
		"{{ ()|attr(x.get(y, '__class__')) }}",
	} {
		private := false
		for _, is := range Analyze(src) {
			private = private || is.Code == CodePrivateAttribute && is.Error
		}
		if !private {
			t.Errorf("%s: no private-attribute error: %+v", src, Analyze(src))
		}
	}
	for _, src := range []string{
		"{{ ()|attr([x, '__class__']|join) }}",
		"{{ ()|attr([x, 'ss__']|join) }}",
		"{{ ()|attr(['a', x]|join) }}",
		"{{ ()|attr([x, '__class__']|select|first) }}",
		"{{ ()|attr([0, '__class__']|select|first) }}",
		"{{ ()|attr(['__class__', x]|map('string')|last) }}",
		"{{ ()|attr([x, y]|join) }}",
		"{{ ()|attr(['__class__', '', x]|reject|first) }}",
		"{{ ()|attr({'k': 'a'}.get(x, 'b')) }}",
	} {
		issues := Analyze(src)
		computed := false
		for _, is := range issues {
			if is.Code == CodePrivateAttribute {
				t.Errorf("%s: %+v", src, is)
			}
			computed = computed || is.Code == CodeComputedAttribute && !is.Error
		}
		if !computed {
			t.Errorf("%s: no computed-attribute warning: %+v", src, issues)
		}
	}
}
