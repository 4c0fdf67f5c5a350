"""Hostile templates end with a named TemplateError inside a CPU and memory limit (R-BOUND-1).

Each template runs in a child process under ``RLIMIT_CPU`` (20 s) and ``RLIMIT_AS`` (2 GiB), so
a render that is not bounded kills the child (the test fails) instead of hanging the suite or
filling the machine's memory. The same templates run as an edited prompt template (``--prompts
DIR``: :func:`workbench.services.summarisers.load_prompts`) and as a context.yaml section template.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # starts a process per template

#: Templates that ran for minutes of CPU or filled gigabytes before products, ``translate`` and
#: collected generators were sized; each with the error it now ends with.
HOSTILE = {
    "squared integer": (("{% set ns = namespace(x=7**20000) %}{% for i in range(40) %}"
                        "{% set ns.x = ns.x * ns.x %}{% endfor %}"),
                        "integer product larger than 65,536 bits"),
    "translate": ("{{ ('a'*1000000).translate({97: 'b'*1000000}) }}",
                  "str.translate would have more than 16,000,000 characters"),
    "map center list": ("{{ range(100000)|map('center',1000000)|list }}",
                        "a generated sequence would hold more than 16,000,000 characters"),
    "map center join": ("{{ ''.join(range(100000)|map('center',1000000)) }}",
                        "a generated sequence would hold more than 16,000,000 characters"),
    "map center dict": ("{{ dict(range(100000)|map('center',1000000)|batch(2)) }}",
                        "a generated sequence would hold more than 16,000,000 characters"),
    "map center star args": ("{{ namespace(*(range(100000)|map('center',1000000))) }}",
                             "a generated sequence would hold more than 16,000,000 characters"),
    "map center loop.length": (("{% for x in range(100000)|map('center',1000000) %}"
                               "{{ loop.length }}{% endfor %}"),
                               "a generated sequence would hold more than 16,000,000 characters"),
}

_LIMITS = """
import resource, sys, json
resource.setrlimit(resource.RLIMIT_CPU, (20, 20))
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from iris.errors import TemplateError
"""

_PROMPTS = _LIMITS + """
from workbench.services.summarisers import load_prompts
snapshot = load_prompts(sys.argv[1])
try:
    snapshot.render("compaction", {"required_sections": [], "summary_max_tokens": 100,
                                  "profile": "continuation", "session_constraints": []})
except TemplateError as exc:
    print(json.dumps({"error": str(exc), "template": exc.template, "line": exc.line}))
"""

_CONTEXT = _LIMITS + """
from iris.context.build import ContextBuilder
from iris.context.load import load_context_build_input
try:
    ContextBuilder().build(load_context_build_input(sys.argv[1]))
except TemplateError as exc:
    print(json.dumps({"error": str(exc), "template": exc.template, "line": exc.line}))
"""


def _run(script: str, target: Path) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", script, str(target)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, f"child ended with {done.returncode}: {done.stderr[-2000:]}"
    assert done.stdout.strip(), f"the render ended without a TemplateError: {done.stderr[-2000:]}"
    return json.loads(done.stdout)


@pytest.mark.parametrize(("source", "message"), HOSTILE.values(), ids=HOSTILE.keys())
def test_r_bound_1_hostile_prompt_template_ends_within_cpu_and_memory_limits(
        tmp_path: Path, source: str, message: str):
    """R-BOUND-1: a hostile compaction.j2 given with ``--prompts`` ends with a TemplateError
    naming the template and line, inside 20 s of CPU and 2 GiB of address space."""
    (tmp_path / "compaction.j2").write_text("Summary:\n" + source + "\n", "utf-8")
    result = _run(_PROMPTS, tmp_path)
    assert message in str(result["error"])
    assert result["template"] == "compaction" and result["line"] == 2


@pytest.mark.parametrize(("source", "message"), HOSTILE.values(), ids=HOSTILE.keys())
def test_r_bound_1_hostile_context_yaml_template_ends_within_cpu_and_memory_limits(
        tmp_path: Path, source: str, message: str):
    """R-BOUND-1: the same templates as a context.yaml section template end with a TemplateError
    naming the template file and line, inside the same limits."""
    (tmp_path / "system.j2").write_text("Notes:\n" + source + "\n", "utf-8")
    (tmp_path / "context.yaml").write_text(
        "system:\n  template: system.j2\n  slots:\n    - {name: a, content: x}\n", "utf-8")
    result = _run(_CONTEXT, tmp_path / "context.yaml")
    assert message in str(result["error"])
    assert result["template"] == str(tmp_path / "system.j2") and result["line"] == 2


def test_r_bound_1_generators_products_and_translate_still_work_within_the_limits():
    """R-BOUND-1: the new bounds leave ordinary uses alone: mapped and selected sequences
    joined, listed, sorted, passed to calls and read with ``loop``; integer products and
    ``translate`` within their limits."""
    from iris.prompts.render import compile_template, render_template

    src = ("{{ items|map('upper')|join(',') }}|{{ items|select('ne', 'b')|list }}|"
           "{% for x in items|reject('eq', 'a') %}{{ loop.index }}/{{ loop.length }}{{ x }} "
           "{% endfor %}|{{ '-'.join(items|map('upper')) }}|{{ items|map('upper')|sort|first }}|"
           "{{ (2**1000 * 3**600) % 1000 }}|{{ 'abc'.translate({97: 'xy'}) }}")
    out = render_template(compile_template(src, "ok.j2"), {"items": ["a", "b", "c"]}, "ok.j2")
    assert out == f"A,B,C|['a', 'c']|1/2b 2/2c |A-B-C|A|{(2**1000 * 3**600) % 1000}|xybc"
