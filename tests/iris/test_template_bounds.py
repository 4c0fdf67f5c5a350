"""Every template render is bounded in time and output size (R-BOUND-1): loops, recursion,
``lipsum``, format widths, padding and growing strings end with a TemplateError naming the template,
for prompt templates and context.yaml templates alike; ``{% include %}`` is refused by name."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from iris.context.build import ContextBuilder
from iris.context.model import ContextSection
from iris.errors import TemplateError
from iris.prompts import PromptSnapshot
from iris.prompts import render as render_module
from iris.prompts.render import RenderLimits, compile_template, render_template

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

#: Templates that ran for more than 20 s or built gigabytes before renders were bounded.
ATTACKS = {
    "nested ranges": "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}",
    "lipsum huge": "{{ lipsum(10**8) }}",
    "lipsum 100000": "{{ lipsum(100000) }}",
    "exponential macro": ("{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}"
                          "{% endmacro %}{{ f(60) }}"),
    "doubling ~": ("{% set ns = namespace(s='x' * 1000000) %}{% for i in range(40) %}"
                   "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}"),
    "doubling +": ("{% set ns = namespace(s='x' * 1000000) %}{% for i in range(40) %}"
                   "{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s | length }}"),
    "doubling list": ("{% set ns = namespace(a=['x' * 100000]) %}{% for i in range(40) %}"
                      "{% set ns.a = [ns.a, ns.a] %}{% endfor %}{{ ns.a | string | length }}"),
    "indent": "{{ ('x\\n' * 300000) | indent(999999) }}",
    "nested format width": "{{ '{:>{}}'.format('a', 2000000000) }}",
    "printf mapping width": "{{ '%(a)999999999s' % {'a': 'x'} }}",
    "format fields": "{{ ('{0}' * 300000).format('y' * 1000000) }}",
    "printf fields": "{{ ('%(a)s' * 200000) % {'a': 'y' * 1000000} }}",
    "replace": "{{ ('x' * 1000000).replace('x', 'y' * 1000000) }}",
    "replace filter": "{{ ('x' * 1000000) | replace('x', 'y' * 1000000) }}",
    "expandtabs": "{{ ('\\t' * 1000000).expandtabs(1000000) }}",
    "join": "{{ ('x' * 100000) | join('y' * 1000000) }}",
    "str join": "{{ ('y' * 1000000).join('x' * 100000) }}",
    "output": "{% for i in range(99999) %}{{ 'x' * 100000 }}{% endfor %}",
    "captured output": ("{% set y %}{% for i in range(99999) %}{{ 'x' * 100000 }}{% endfor %}"
                        "{% endset %}{{ y | length }}"),
    "infinite recursion": "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}",
    "heavy steps": ("{% set ns = namespace(s='x' * 1000000) %}{% for i in range(100000) %}"
                    "{% set ns.t = ns.s + ns.s %}{% endfor %}"),
    "quadratic sum": "{{ ([['x'] * 1000] * 16000) | sum(start=[]) | length }}",
}

FAST = RenderLimits(seconds=1.0, output_chars=16_000_000)


def _render(source: str, variables: dict | None = None) -> str:
    return render_template(compile_template(source, "user.j2"), variables or {}, "user.j2")


@pytest.mark.parametrize("source", ATTACKS.values(), ids=ATTACKS.keys())
def test_r_bound_1_an_unbounded_template_ends_with_a_template_error(source, monkeypatch):
    """R-BOUND-1: each attack ends within the time limit (1 s here) plus a margin with a
    TemplateError naming the template, never a hang, a MemoryError or a RecursionError."""
    monkeypatch.setattr(render_module, "LIMITS", FAST)
    started = time.monotonic()
    with pytest.raises(TemplateError) as err:
        _render(source)
    assert time.monotonic() - started < 4
    assert err.value.template == "user.j2"


def test_r_bound_1_the_limits_have_documented_defaults():
    """R-BOUND-1: 10 s and 16,000,000 characters per render unless changed."""
    assert render_module.LIMITS == RenderLimits(seconds=10.0, output_chars=16_000_000)


def test_r_bound_1_time_and_size_errors_say_which_limit(monkeypatch):
    """R-BOUND-1: the error names the limit that ended the render."""
    monkeypatch.setattr(render_module, "LIMITS", RenderLimits(seconds=0.3, output_chars=1000))
    with pytest.raises(TemplateError, match=r"took longer than 0.3 s"):
        _render(ATTACKS["nested ranges"])
    with pytest.raises(TemplateError, match=r"more than 1,000 characters"):
        _render("{% for i in range(2000) %}x{% endfor %}")


def test_r_bound_1_sum_of_numbers_still_works():
    """R-BOUND-1: only a list or string start of |sum is refused; numbers add as before."""
    assert _render("{{ [1, 2.5, 3] | sum }}|{{ [{'n': 2}, {'n': 3}] | sum(attribute='n') }}") == "6.5|5"


def test_r_bound_1_memory_error_in_a_value_becomes_a_template_error():
    """R-BOUND-1: a MemoryError while rendering is a TemplateError naming the template."""
    class Huge:
        def __str__(self) -> str:
            raise MemoryError

    with pytest.raises(TemplateError, match="out of memory") as err:
        _render("{{ x }}", {"x": Huge()})
    assert err.value.template == "user.j2"


def test_r_bound_1_ordinary_templates_render_unchanged():
    """R-BOUND-1: the bounds leave ordinary templates alone: loops with loop variables, else
    branches, recursion over a tree, macros, set blocks, joins and formats."""
    src = ("{% for x in items %}{{ loop.index }}{{ x }}{% if not loop.last %},{% endif %}"
           "{% else %}none{% endfor %}|{% for x in [] %}x{% else %}empty{% endfor %}|"
           "{% macro m(a) %}<{{ a }}>{% endmacro %}{{ m(1) }}|{% set b %}{{ 'q' * 3 }}{% endset %}"
           "{{ b }}|{{ items | join('-') }}|{{ '{:>3}'.format(1) }}|{{ lipsum(1, html=False) | wordcount >= 20 }}|"
           "{% for n in tree recursive %}{{ n.name }}{% if n.kids %}({{ loop(n.kids) }}){% endif %}"
           "{% endfor %}|{{ range(3) | list }}")
    tree = [{"name": "a", "kids": [{"name": "b", "kids": []}]}]
    assert _render(src, {"items": ["x", "y"], "tree": tree}) == \
        "1x,2y|empty|<1>|qqq|x-y|  1|True|a(b)|[0, 1, 2]"


def test_r_bound_1_prompt_snapshot_renders_are_bounded(monkeypatch):
    """R-BOUND-1: an edited prompt template (Templates page, re-runs, CLI) gets the same limits."""
    monkeypatch.setattr(render_module, "LIMITS", FAST)
    snap = PromptSnapshot.defaults().with_template("todo_reminder", ATTACKS["nested ranges"])
    started = time.monotonic()
    with pytest.raises(TemplateError, match="todo_reminder"):
        snap.render("todo_reminder", {"todos": [], "turns_since_update": 3})
    assert time.monotonic() - started < 4


def test_r_bound_1_context_yaml_templates_are_bounded(tmp_path: Path, monkeypatch):
    """R-BOUND-1: a context.yaml section template gets the same limits, named by its path."""
    monkeypatch.setattr(render_module, "LIMITS", FAST)
    template = tmp_path / "system.j2"
    template.write_text(ATTACKS["lipsum huge"], "utf-8")
    section = ContextSection(template=str(template))
    with pytest.raises(TemplateError, match="lipsum") as err:
        ContextBuilder().render_section(section, "system")
    assert err.value.template == str(template)


@pytest.mark.parametrize("tag", ["{% include 'other.j2' %}", "{% import 'm.j2' as m %}",
                                 "{% from 'm.j2' import x %}", "{% extends 'base.j2' %}"])
def test_r_bound_1_includes_are_refused_when_compiled(tag):
    """R-BOUND-1: include, import and extends name the template and line and say they are not
    supported (they used to fail with "TypeError: no loader for this environment specified")."""
    with pytest.raises(TemplateError, match=r"not supported") as err:
        compile_template(f"first line\n{tag}", "context.j2")
    assert err.value.template == "context.j2" and err.value.line == 2


def test_r_bound_1_include_in_a_context_yaml_template_names_the_file_and_line(tmp_path: Path):
    """R-BOUND-1: a context.yaml whose section template uses {% include %} fails, when the context
    is built, with a TemplateError naming the template file and line and saying includes are not
    supported (it used to be "TypeError: no loader for this environment specified")."""
    from iris.context.load import load_context_build_input

    (tmp_path / "system.j2").write_text("Notes:\n{% include 'other.j2' %}\n", "utf-8")
    (tmp_path / "context.yaml").write_text(
        "system:\n  template: system.j2\n  slots:\n    - {name: a, content: x}\n", "utf-8")
    built = load_context_build_input(tmp_path / "context.yaml")
    with pytest.raises(TemplateError, match=r"include %\} is not supported") as err:
        ContextBuilder().build(built)
    assert err.value.template == str(tmp_path / "system.j2") and err.value.line == 2
