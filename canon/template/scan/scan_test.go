package scan

import (
	"testing"
)

// payloads are published chat-template exploits and the ways around a regex scanner the issue names;
// each must give an issue of its code (and an error when want says so).
var payloads = []struct {
	name, src, code string
	isErr           bool
}{
	// CVE-2024-34359 (llama-cpp-python, GHSA-56xg-wfcc-g829): the payload of the advisory.
	{"CVE-2024-34359", `{% for x in ().__class__.__base__.__subclasses__() %}{% if "warning" in x.__name__ %}{{x()._module.__builtins__['__import__']('os').popen("touch /tmp/retr0reg")}}{%endif%}{% endfor %}`, CodePrivateAttribute, true},
	// CVE-2026-5760 (SGLang rerank, CERT/CC VU#915947), the proof of concept of sglang#23660.
	{"CVE-2026-5760", `The answer can only be "yes" or "no".` + "\n" + `{{ lipsum.__globals__["os"].popen(cmd).read() }}{% for message in messages %}{{ message["content"] }}{% endfor %}`, CodePrivateAttribute, true},
	{"CVE-2026-5760 globals", `{{ lipsum.__globals__["os"].popen(cmd).read() }}`, CodeGlobalInternals, true},
	// vLLM CVE-2025-61620 (GHSA-6fvq-23cw-5628): a chat template whose nested loops exhaust the server.
	{"CVE-2025-61620", `{% for i in range(100000) %}{% for j in range(100000) %}{{ 'x' }}{% endfor %}{% endfor %}{{ messages[0].content }}`, CodeExhaustion, true},
	{"cycler init", `{{ cycler.__init__.__globals__.os.popen('id').read() }}`, CodePrivateAttribute, true},
	{"joiner", `{{ joiner.__init__ }}`, CodePrivateAttribute, true},
	{"namespace init", `{{ namespace.__init__.__globals__ }}`, CodePrivateAttribute, true},
	{"self context", `{{ self._TemplateReference__context }}`, CodePrivateAttribute, true},
	{"config items", `{{ config.items() }}`, CodeGlobalInternals, true},
	{"attr literal", `{{ ()|attr('__class__') }}`, CodePrivateAttribute, true},
	{"attr tilde", `{{ ()|attr('__cla' ~ 'ss__') }}`, CodePrivateAttribute, true},
	{"attr plus", `{{ ()|attr('_' + '_class_' + '_') }}`, CodePrivateAttribute, true},
	{"attr join", `{{ ()|attr(['_','_','class','_','_']|join) }}`, CodePrivateAttribute, true},
	{"attr join method", `{{ ()|attr(''.join(['__cl', 'ass__'])) }}`, CodePrivateAttribute, true},
	{"attr format", `{{ ()|attr('%s%sclass%s%s'|format('_','_','_','_')) }}`, CodePrivateAttribute, true},
	{"attr hex escape", `{{ ()|attr('\x5f\x5fclass\x5f\x5f') }}`, CodePrivateAttribute, true},
	{"attr unicode escape", `{{ ()|attr("\u005f\u005fclass\u005f\u005f") }}`, CodePrivateAttribute, true},
	{"attr octal escape", `{{ ()|attr("\137\137class\137\137") }}`, CodePrivateAttribute, true},
	{"attr via set", `{% set a = '__cla' %}{% set b = a ~ 'ss__' %}{{ ()|attr(b) }}`, CodePrivateAttribute, true},
	{"attr lower", `{{ ()|attr('__CLASS__'|lower) }}`, CodePrivateAttribute, true},
	{"attr computed", `{{ ()|attr(messages[0].content) }}`, CodeComputedAttribute, false},
	{"subscript dunder", `{{ x['__globals__'] }}`, CodePrivateAttribute, true},
	{"subscript built", `{{ x['__glo' ~ 'bals__'] }}`, CodePrivateAttribute, true},
	{"map attribute", `{{ messages|map(attribute='__class__')|list }}`, CodePrivateAttribute, true},
	{"selectattr", `{{ messages|selectattr('__class__.__name__')|list }}`, CodePrivateAttribute, true},
	{"map attr", `{{ messages|map('attr', '__class__')|list }}`, CodePrivateAttribute, true},
	{"str format field", `{{ '{0.__class__.__mro__}'.format(messages) }}`, CodePrivateAttribute, true},
	{"str format computed", `{{ messages[0].content.format(messages) }}`, CodeComputedAttribute, false},
	{"lipsum bare", `{{ lipsum() }}`, CodeGlobalInternals, false},
	{"string repetition", `{{ 'A' * 10000000 }}`, CodeExhaustion, true},
	{"big power", `{{ 9 ** 999999 }}`, CodeExhaustion, true},
	{"range in range via set", `{% set n = 5000 %}{% for i in range(n) %}{% for j in range(n) %}.{% endfor %}{% endfor %}`, CodeExhaustion, true},
	// Bypasses an independent review found: names built from literals in ways the folding missed.
	{"attr format %c", "{{ ()|attr('%c%c'|format(95,95) ~ 'class' ~ '%c%c'|format(95,95)) }}", CodePrivateAttribute, true},
	{"attr format %c computed", "{{ ()|attr('%cclass'|format(n)) }}", CodeComputedAttribute, false},
	{"attr N escape", `{{ ()|attr('\N{LOW LINE}\N{LOW LINE}class\N{LOW LINE}\N{LOW LINE}') }}`, CodePrivateAttribute, true},
	{"attr N escape lower", `{{ ()|attr('\N{low line}_class__') }}`, CodePrivateAttribute, true},
	{"attr repeat", `{{ ()|attr('_'*2 ~ 'class' ~ '_'*2) }}`, CodePrivateAttribute, true},
	{"attr repeat left", `{{ ()|attr(2*'_' ~ 'class__') }}`, CodePrivateAttribute, true},
	{"attr percent", `{{ ()|attr('__%s__' % 'class') }}`, CodePrivateAttribute, true},
	{"attr percent tuple", `{{ ()|attr('%s%sclass__' % ('_', '_')) }}`, CodePrivateAttribute, true},
	{"attr str format", `{{ ()|attr('__{}__'.format('class')) }}`, CodePrivateAttribute, true},
	{"attr str format index", `{{ ()|attr('{0}{0}class{0}{0}'.format('_')) }}`, CodePrivateAttribute, true},
	{"attr slice", `{{ ()|attr('x__class__'[1:]) }}`, CodePrivateAttribute, true},
	{"attr reversed slice", `{{ ()|attr('__ssalc__'[::-1]) }}`, CodePrivateAttribute, true},
	{"attr dict item", `{{ ()|attr({'a': '__class__'}['a']) }}`, CodePrivateAttribute, true},
	{"attr dict get", `{{ ()|attr({'a': '__class__'}.get('a')) }}`, CodePrivateAttribute, true},
	{"attr namespace", `{% set ns = namespace(x='__class__') %}{{ ()|attr(ns.x) }}`, CodePrivateAttribute, true},
	{"attr namespace set", `{% set ns = namespace() %}{% set ns.x = '__class__' %}{{ ()|attr(ns.x) }}`, CodePrivateAttribute, true},
	{"attr macro argument", `{% macro m(n) %}{{ ()|attr(n) }}{% endmacro %}{{ m('__class__') }}`, CodePrivateAttribute, true},
	{"attr macro keyword", `{% macro m(n) %}{{ ()|attr(n) }}{% endmacro %}{{ m(n='__cl' ~ 'ass__') }}`, CodePrivateAttribute, true},
	{"attr title", `{{ ()|attr('__CLASS__'|title) }}`, CodePrivateAttribute, true},
	{"subscript repeat", `{{ x['_'*2 ~ 'globals__'] }}`, CodePrivateAttribute, true},
	{"subscript format", `{{ x['%c_globals__'|format(95)] }}`, CodePrivateAttribute, true},
	// Exhaustion beyond loops and '*'.
	{"center", `{{ 'a'|center(1e9) }}`, CodeExhaustion, true},
	{"center keyword", `{{ 'a'|center(width=10**9) }}`, CodeExhaustion, true},
	{"float repeat", `{{ 'a' * 1e9 }}`, CodeExhaustion, true},
	{"range list", `{{ range(1e9)|list }}`, CodeExhaustion, true},
	{"range power", `{{ range(10**9)|length }}`, CodeExhaustion, true},
	{"indent", `{{ messages[0].content|indent(width=1e9) }}`, CodeExhaustion, true},
	{"lipsum n", `{{ lipsum(n=1e9) }}`, CodeExhaustion, true},
	{"wordwrap", `{{ 'a b'|wordwrap(1, wrapstring='x'*10**7) }}`, CodeExhaustion, true},
	{"string repeat big exponent", `{{ 'ab' * 1e7 }}`, CodeExhaustion, true},
	{"unparsed", `{% for x in %}`, CodeUnparsed, false},
}

// bypasses are the ways around the analysis an independent review of #35 found: names built from
// literals in ways it did not fold (each an error now), sizes it did not evaluate.
var bypasses = []struct {
	name, src, code string
	isErr           bool
}{
	// a. |format with %c and the other conversions
	{"format %c", `{{ ()|attr('%c%c'|format(95,95) ~ 'class' ~ '%c%c'|format(95,95)) }}`, CodePrivateAttribute, true},
	{"format %c string", `{{ ()|attr('%c%cclass%c%c'|format('_','_','_','_')) }}`, CodePrivateAttribute, true},
	{"format %c variable", `{{ ()|attr('%c%c'|format(a,b) ~ 'class' ~ '%c%c'|format(a,b)) }}`, CodeComputedAttribute, false},
	{"format %c variable item", `{{ x['%c%c'|format(a,a) ~ 'globals__'] }}`, CodeComputedAttribute, false},
	{"format precision", `{{ ()|attr('%.9s'|format('__class__xyz')) }}`, CodePrivateAttribute, true},
	{"format mapping key", `{{ ()|attr('%(a)s%(b)s'|format(a='__cla', b='ss__')) }}`, CodePrivateAttribute, true},
	{"format %r inner", `{{ x[('%r'|format('__globals__'))[1:-1]] }}`, CodePrivateAttribute, true},
	// b. escapes
	{"escape N LOW LINE", `{{ ()|attr('\N{LOW LINE}\N{LOW LINE}class\N{LOW LINE}\N{LOW LINE}') }}`, CodePrivateAttribute, true},
	{"escape N lower case", `{{ ()|attr('\N{low line}_cl\N{LATIN SMALL LETTER A}ss__') }}`, CodePrivateAttribute, true},
	{"escape N unknown", `{{ ()|attr('\N{SNOWMAN}') }}`, CodeComputedAttribute, false},
	{"escape U", `{{ ()|attr('\U0000005f\U0000005fclass__') }}`, CodePrivateAttribute, true},
	// c. names folded from literals
	{"repeat", `{{ ()|attr('_'*2 ~ 'class' ~ '_'*2) }}`, CodePrivateAttribute, true},
	{"repeat left", `{{ ()|attr(2*'_' ~ 'class__') }}`, CodePrivateAttribute, true},
	{"percent operator", `{{ ()|attr('__%s__' % 'class') }}`, CodePrivateAttribute, true},
	{"percent tuple", `{{ ()|attr('%s%s' % ('__cla', 'ss__')) }}`, CodePrivateAttribute, true},
	{"str format", `{{ ()|attr('__{}__'.format('class')) }}`, CodePrivateAttribute, true},
	{"str format fill", `{{ ()|attr('{:_^9}'.format('class')) }}`, CodePrivateAttribute, true},
	{"str format c", `{{ ()|attr('{:c}{:c}class__'.format(95, 95)) }}`, CodePrivateAttribute, true},
	{"slice", `{{ ()|attr('x__class__'[1:]) }}`, CodePrivateAttribute, true},
	{"reverse slice", `{{ ()|attr('__ssalc__'[::-1]) }}`, CodePrivateAttribute, true},
	{"list index", `{{ ()|attr(['a', '__class__'][1]) }}`, CodePrivateAttribute, true},
	{"split index", `{{ ()|attr('a,__class__'.split(',')[1]) }}`, CodePrivateAttribute, true},
	{"dict item", `{{ ()|attr({'a':'__class__'}['a']) }}`, CodePrivateAttribute, true},
	{"dict attribute", `{{ ()|attr({'a':'__class__'}.a) }}`, CodePrivateAttribute, true},
	{"dict get", `{% set d = {'a':'__class__'} %}{{ ()|attr(d.get('a')) }}`, CodePrivateAttribute, true},
	{"namespace set", `{% set ns = namespace(x='') %}{% set ns.x = '__class__' %}{{ ()|attr(ns.x) }}`, CodePrivateAttribute, true},
	{"namespace init", `{% set ns = namespace(x='__class__') %}{{ ()|attr(ns.x) }}`, CodePrivateAttribute, true},
	{"macro argument", `{% macro m(n) %}{{ ()|attr(n) }}{% endmacro %}{{ m('__class__') }}`, CodePrivateAttribute, true},
	{"macro keyword", `{% macro m(n) %}{{ x[n] }}{% endmacro %}{{ m(n='__globals__') }}{{ m(messages) }}`, CodePrivateAttribute, true},
	{"macro default", `{% macro m(n='__class__') %}{{ ()|attr(n) }}{% endmacro %}{{ m() }}`, CodePrivateAttribute, true},
	{"loop over literals", `{% for n in ['role', '__class__'] %}{{ ()|attr(n) }}{% endfor %}`, CodePrivateAttribute, true},
	{"set block", `{% set n %}__class__{% endset %}{{ ()|attr(n) }}`, CodePrivateAttribute, true},
	{"tuple set", `{% set a, b = '__cla', 'ss__' %}{{ ()|attr(a ~ b) }}`, CodePrivateAttribute, true},
	{"join sorted", `{{ ()|attr(['class', '__', '__']|sort|join) }}`, CodePrivateAttribute, true},
	{"replace", `{{ ()|attr('xxclassxx'|replace('x', '_')) }}`, CodePrivateAttribute, true},
	{"replace method", `{{ ()|attr('xxclassxx'.replace('x', '_')) }}`, CodePrivateAttribute, true},
	{"upper", `{{ x['__globals__'|upper|lower] }}`, CodePrivateAttribute, true},
	{"title capitalize", `{{ ()|attr('__class__'|title|capitalize) }}`, CodePrivateAttribute, true},
	{"reverse filter", `{{ ()|attr('__ssalc__'|reverse) }}`, CodePrivateAttribute, true},
	{"string", `{{ ()|attr(('__cl' ~ 'ass__')|string) }}`, CodePrivateAttribute, true},
	{"center method", `{{ ()|attr('class'.center(9, '_')) }}`, CodePrivateAttribute, true},
	{"truncate end", `{{ ()|attr('xxxxxxxxxxxxxxxx'|truncate(9, true, '__class__', 0)) }}`, CodePrivateAttribute, true},
	{"indent string", `{{ ()|attr('class__'|indent('__', true)) }}`, CodePrivateAttribute, true},
	{"default", `{{ ()|attr(undefined_name|default('__class__')) }}`, CodePrivateAttribute, true},
	{"conditional", `{{ ()|attr('__class__' if x else messages) }}`, CodePrivateAttribute, true},
	{"subscript repeat", `{{ x['_'*2 ~ 'globals' ~ '_'*2] }}`, CodePrivateAttribute, true},
	{"map attribute built", `{{ messages|map(attribute='_'*2 ~ 'class__')|list }}`, CodePrivateAttribute, true},
	{"str format attr built", `{{ ('{0.%s}' % '__class__').format(messages) }}`, CodePrivateAttribute, true},
	{"computed stays a warning", `{{ ()|attr(y ~ '__class__') }}`, CodeComputedAttribute, false},
	// d. sizes
	{"center", `{{ 'a'|center(1e9) }}`, CodeExhaustion, true},
	{"float repetition", `{{ 'a'*1e9 }}`, CodeExhaustion, true},
	{"range list", `{{ range(1e9)|list }}`, CodeExhaustion, true},
	{"range power", `{{ range(10**9) }}`, CodeExhaustion, true},
	{"long repetition", `{{ 'x'*99999999 }}`, CodeExhaustion, true},
	{"indent width", `{{ 'a'|indent(width=1e9) }}`, CodeExhaustion, true},
	{"three loops", `{% for i in range(1000) %}{% for j in range(1000) %}{% for k in range(2) %}.{% endfor %}{% endfor %}{% endfor %}`, CodeExhaustion, true},
	{"loop over repetition", `{% for i in range(2000) %}{% for c in 'x'*1000 %}.{% endfor %}{% endfor %}`, CodeExhaustion, true},
	{"macro bound", `{% macro m(n) %}{% for i in range(n) %}.{% endfor %}{% endmacro %}{{ m(10**9) }}`, CodeExhaustion, true},
	{"lipsum", `{{ lipsum(n=1e9) }}`, CodeExhaustion, true},
	{"wordwrap", `{{ 'a'|wordwrap(1e9) }}`, CodeExhaustion, true},
	{"format width", `{{ '%1000000000s'|format('a') }}`, CodeExhaustion, true},
	{"format star width", `{{ '%*s'|format(10**9, 'a') }}`, CodeExhaustion, true},
	{"str format width", `{{ '{:>1000000000}'.format(x) }}`, CodeExhaustion, true},
	{"ljust", `{{ 'a'.ljust(2**40) }}`, CodeExhaustion, true},
	{"batch fill", `{{ [1]|batch(1e9, 0)|list }}`, CodeExhaustion, true},
}

func TestAnalyzeBypasses(t *testing.T) {
	for _, p := range bypasses {
		t.Run(p.name, func(t *testing.T) {
			issues := Analyze(p.src)
			for _, is := range issues {
				if is.Code == p.code && is.Error == p.isErr {
					return
				}
			}
			t.Errorf("want %s (error %v), got %+v", p.code, p.isErr, issues)
		})
	}
}

func TestAnalyzePayloads(t *testing.T) {
	for _, p := range payloads {
		t.Run(p.name, func(t *testing.T) {
			issues := Analyze(p.src)
			for _, is := range issues {
				if is.Code == p.code && is.Error == p.isErr {
					return
				}
			}
			t.Errorf("want %s (error %v), got %+v", p.code, p.isErr, issues)
		})
	}
}

// TestAnalyzeBenign: what real templates use is not an issue.
func TestAnalyzeBenign(t *testing.T) {
	for _, src := range []string{
		`{% set ns = namespace(found=false) %}{% set ns.found = true %}{{ ns.found }}`,
		`{{ raise_exception('Conversation roles must alternate') }}`,
		`{{ strftime_now('%d %b %Y') }}`,
		`{{ tools|tojson(indent=4) }}{{ message.content|trim }}{{ message['content'].split('</think>')[-1].lstrip('\n') }}`,
		`{{ '<|im_start|>' ~ message.role ~ '\n' }}{{ bos_token + message['content'] }}`,
		`{% macro render(m) %}{{ m.content }}{% endmacro %}{{ render(messages[0]) }}`,
		`{% for i in range(3) %}{% for j in range(10) %}.{% endfor %}{% endfor %}`,
		`{% set _x = 1 %}{{ _x }}{% set __tmp = messages %}{{ __tmp|length }}`,
		`This text mentions __class__ and {{ "__init__ in a string" }} and {# __globals__ #}`,
		`{%- generation -%}{{ message.content }}{%- endgeneration -%}`,
		`{{ messages|selectattr('role', 'equalto', 'user')|list|length }}`,
		`{% raw %}{{ ().__class__ }}{% endraw %}`,
		`{{ '%d. %s'|format(loop.index, message.content) }}{{ '%-10s|%5.2f'|format(message.role, 1.5) }}`,
		`{{ '{:>10}'.format(message.role) }}{{ '{0}: {1}'.format(message.role, message.content) }}`,
		`{{ '-' * 80 }}{{ message.content|indent(4) }}{{ message.content|center(40) }}{{ message.content|wordwrap(80) }}`,
		`{% set ns = namespace(sys='') %}{% set ns.sys = 'You are helpful.' %}{{ ns.sys }}{{ x[ns.sys] }}`,
		`{% macro m(role) %}{{ message[role] }}{% endmacro %}{{ m('content') }}{{ m(key) }}`,
		`{% for k in ['role', 'content'] %}{{ message[k] }}{% endfor %}{{ message['_id'] }}`,
		`{{ messages[-1]['content'][::-1] }}{{ message.content[1:] }}{{ range(10)|list }}`,
		`{{ 'Today is ' ~ strftime_now('%d %B %Y') }}{{ '%Y-%m-%d' }}{{ x|attr('role') }}`,
		`{{ '\N{LOW LINE}\N{SNOWMAN}' }}`,
	} {
		if issues := Analyze(src); len(issues) > 0 {
			t.Errorf("%q: %+v", src, issues)
		}
	}
}
