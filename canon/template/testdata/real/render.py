#!/usr/bin/env python3
"""Records what transformers' chat-template renderer gives for each template here on the fixed
conversation of template.Conversation: NAME.prompt beside NAME.jinja, or, when the template raises
(a raise_exception call or an error), NAME.raises holding the message.

The environment is transformers' (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, the
generation tag, raise_exception, strftime_now, its tojson), strftime_now at the fixed date Render uses.
Run with Python's jinja2: python3 render.py
"""
import glob, json, os, sys
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.exceptions import TemplateError

class Generation(Extension):
    tags = {"generation"}
    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.Scope(body, lineno=lineno)

def raise_exception(message):
    raise TemplateError(message)

def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

def strftime_now(fmt):
    import datetime
    return datetime.datetime(2024, 7, 26).strftime(fmt)

env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[Generation, "jinja2.ext.loopcontrols"])
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception
env.globals["strftime_now"] = strftime_now

data = dict(
    messages=[
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "What is the capital of France?"},
        {"role": "assistant", "content": "The capital of France is Paris."},
        {"role": "user", "content": "And of Italy?"},
    ],
    add_generation_prompt=True, bos_token="<BOS>", eos_token="<EOS>", unk_token="<UNK>", pad_token="<PAD>",
)

here = os.path.dirname(os.path.abspath(__file__))
for path in sorted(glob.glob(os.path.join(here, "*.jinja"))):
    out = path[:-len(".jinja")] + ".prompt"
    raises = path[:-len(".jinja")] + ".raises"
    for stale in (out, raises):
        if os.path.exists(stale):
            os.remove(stale)
    try:
        with open(path, encoding="utf-8") as f:
            prompt = env.from_string(f.read()).render(**data)
    except Exception as e:
        print("%s: %s" % (os.path.basename(path), e), file=sys.stderr)
        with open(raises, "w", encoding="utf-8", newline="") as f:
            f.write(str(e))
        continue
    with open(out, "w", encoding="utf-8", newline="") as f:
        f.write(prompt)
