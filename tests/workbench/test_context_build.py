"""Static context: context.yaml loading, validation, XML rendering, templates (R-BUILD-1…5)."""

from __future__ import annotations

import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import iris.context as ctx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from iris.context import (
    ContextBuilder,
    ContextBuildInput,
    ContextSection,
    ContextSlot,
    ContextValidationError,
    load_context_build_input,
)
from iris.errors import ConfigError, TemplateError
from pydantic import ValidationError

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str, name: str = "context.yaml") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), "utf-8")
    return path


def build(tmp_path: Path, text: str, **kwargs):
    return ContextBuilder().build(load_context_build_input(write(tmp_path, text)), **kwargs)


def problems(tmp_path: Path, text: str) -> dict[str | None, ConfigError]:
    with pytest.raises(ContextValidationError) as err:
        load_context_build_input(write(tmp_path, text))
    return {issue.field: issue for issue in err.value.issues}


def child(element: ET.Element, path: str) -> ET.Element:
    found = element.find(path)
    assert found is not None, f"no <{path}> in <{element.tag}>"
    return found


def test_r_build_5_public_types_import_from_iris_context():
    """R-BUILD-5."""
    for name in ("ContextSlot", "ContextSection", "ContextBuildInput", "ContextBuildOutput",
                 "ContextBuilder", "load_context_build_input", "ContextPolicy"):
        assert name in ctx.__all__
    assert ctx.__all__ == sorted(ctx.__all__)


def test_r_build_1_only_three_top_level_keys(tmp_path):
    found = problems(tmp_path, """
        system: {slots: [{name: a, content: x}]}
        tools: []
        """)
    assert "unknown top-level key 'tools'" in found["tools"].problem
    path = found["tools"].path
    assert found["tools"].line == 3 and path is not None and path.endswith("context.yaml")


def test_r_build_1_system_required_with_an_enabled_slot(tmp_path):
    found = problems(tmp_path, "memory: {slots: [{name: a, content: x}]}\n")
    assert "system" in found and "Field required" in found["system"].problem
    found = problems(tmp_path, "system: {slots: [{name: a, content: x, enabled: false}]}\n")
    assert any("at least one enabled slot" in i.problem for i in found.values())


def test_r_build_1_optional_sections_may_be_omitted(tmp_path):
    out = build(tmp_path, "system: {slots: [{name: a, content: x}]}\n")
    assert [m.position for m in out.messages] == ["system"]
    assert out.memory is None and out.before_current_input is None


def test_r_build_1_yaml_syntax_error_names_file_and_line(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_context_build_input(write(tmp_path, "system:\n  slots: [\n    {name: a\n"))
    path = err.value.path
    assert path is not None and path.endswith("context.yaml") and err.value.line is not None


def test_r_build_3_invalid_names_report_field_paths_and_lines(tmp_path):
    """R-BUILD-3."""
    found = problems(tmp_path, """
        system:
          slots:
            - name: ok
              content: x
            - name: ok2
              content: y
            - name: "1bad name"
              content: z
              attributes: {"bad attr": v, good: 3}
        """)
    assert "not a valid XML tag name" in found["system.slots[2].name"].problem
    assert found["system.slots[2].name"].line == 8
    attr = found["system.slots[2].attributes"]
    assert "attribute name 'bad attr' is not a valid XML name" in attr.problem
    assert "attribute 'good' must be a string, got int 3" in attr.problem  # string values only


@pytest.mark.parametrize("name,ok", [("a", True), ("_x", True), ("ns-1.b", True), ("größe", True),
                                     ("1a", False), ("a b", False), ("a:b", False), ("", False),
                                     ("-a", False)])
def test_r_build_3_xml_name_rule(name, ok):
    """R-BUILD-3."""
    assert ctx.is_xml_name(name) is ok


def test_r_build_3_yaml_boolean_names_get_a_hint(tmp_path):
    """R-BUILD-3."""
    found = problems(tmp_path, "system: {slots: [{name: off, content: x}]}\n")
    assert "quote the value" in found["system.slots[0].name"].problem


def test_r_build_2_max_chars_must_be_positive(tmp_path):
    found = problems(tmp_path, """
        system: {slots: [{name: a, content: x}]}
        memory: {max_chars: 0, slots: [{name: b, content: y}]}
        """)
    assert "greater than 0" in found["memory.max_chars"].problem


def test_r_build_2_max_chars_overflow_is_an_error_not_a_truncation(tmp_path):
    path = write(tmp_path, """
        system:
          max_chars: 20
          slots: [{name: a, content: "twenty-five characters.."}]
        """)
    with pytest.raises(ConfigError) as err:
        ContextBuilder().build(load_context_build_input(path))
    assert err.value.field == "system.max_chars" and "more than max_chars 20" in str(err.value)
    assert str(path) in str(err.value)
    fits = ContextBuilder().build(ContextBuildInput(system=ContextSection(
        max_chars=33, slots=(ContextSlot(name="a", content="twenty-five characters.."),))))
    assert fits.system.text == "<a>twenty-five characters..</a>"  # exactly 33, not cut


def test_r_build_3_sort_by_order_then_name_and_skip_disabled(tmp_path):
    """R-BUILD-3."""
    out = build(tmp_path, """
        system:
          slots:
            - {name: zeta, content: "1"}
            - {name: beta, content: "2", order: 5}
            - {name: alpha, content: "3"}
            - {name: hidden, content: "4", order: 1, enabled: false}
            - {name: gamma, content: "5", order: 5}
        """)
    assert out.system.text.splitlines() == ["<beta>2</beta>", "<gamma>5</gamma>", "<alpha>3</alpha>",
                                            "<zeta>1</zeta>"]
    assert "hidden" not in out.system.text


def test_r_build_4_xml_escaping_in_text_and_attributes(tmp_path):
    out = build(tmp_path, """
        system:
          slots:
            - name: note
              attributes: {title: 'say "hi" & <bye>', multi: "a\\nb"}
              content: 'if a < b && c > d: print("ok") # it''s'
        """)
    text = out.system.text
    assert '&amp;&amp;' in text and "&lt; b" in text and 'print("ok")' in text
    assert 'title="say &quot;hi&quot; &amp; &lt;bye&gt;"' in text and 'multi="a&#10;b"' in text
    element = ET.fromstring(text)  # well-formed, and round-trips to the original values
    assert element.attrib == {"title": 'say "hi" & <bye>', "multi": "a\nb"}
    assert element.text == "if a < b && c > d: print(\"ok\") # it's"


def test_r_build_4_lists_mappings_and_scalars(tmp_path):
    out = build(tmp_path, """
        system:
          slots:
            - name: data
              content:
                files: [a.py, b.py]
                count: 2
                strict: true
                empty: null
                nested: {deep: [{k: v}]}
            - name: block
              content: |
                line 1
                line 2
        """)
    root = ET.fromstring(f"<r>{out.system.text}</r>")
    data = child(root, "data")
    assert [i.text for i in child(data, "files")] == ["a.py", "b.py"]
    assert child(data, "count").text == "2" and child(data, "strict").text == "true"
    assert child(data, "empty").text is None and child(data, "nested/deep/item/k").text == "v"
    assert "<block>\nline 1\nline 2\n</block>" in out.system.text


def test_r_build_4_mapping_keys_in_content_must_be_xml_names(tmp_path):
    found = problems(tmp_path, 'system: {slots: [{name: a, content: {"bad key": 1}}]}\n')
    assert "mapping key 'bad key'" in found["system.slots[0].content"].problem


def test_r_build_2_relative_template_resolves_next_to_the_yaml(tmp_path):
    write(tmp_path, "{% for s in slots %}{{ s.name }}={{ s.content }}|{{ s.order }}\n{% endfor %}",
          "conf/tpl/mem.j2")
    path = write(tmp_path, """
        system: {slots: [{name: a, content: x}]}
        memory:
          template: tpl/mem.j2
          slots: [{name: z, content: "<raw & plain>"}, {name: y, content: q, order: 1},
                  {name: hid, content: no, enabled: false}]
        """, "conf/context.yaml")
    data = load_context_build_input(path)
    assert data.memory is not None
    assert data.memory.template == str((tmp_path / "conf/tpl/mem.j2").resolve())
    out = ContextBuilder().build(data)
    # sorted, enabled only, dicts, and plain text (no autoescape)
    assert out.memory is not None and out.memory.text == "y=q|1\nz=<raw & plain>|100"


def test_r_build_2_missing_template_file_is_reported(tmp_path):
    found = problems(tmp_path, """
        system: {slots: [{name: a, content: x}]}
        memory: {template: nowhere.j2}
        """)
    assert "template file not found" in found["memory.template"].problem
    assert found["memory.template"].line == 3


def test_r_build_2_directly_constructed_template_must_be_absolute(tmp_path):
    with pytest.raises(ValidationError, match="absolute path"):
        ContextSection(template="relative.j2")
    tpl = write(tmp_path, "{{ slots | length }} slots", "t.j2")
    section = ContextSection(template=str(tpl), slots=(ContextSlot(name="a", content=1),))
    out = ContextBuilder().build(ContextBuildInput(system=section))
    assert out.system.text == "1 slots"


def test_r_build_4_template_sandbox_refuses_python_internals(tmp_path):
    write(tmp_path, "ok\n{{ slots.__class__.__mro__[1].__subclasses__() }}", "evil.j2")
    path = write(tmp_path, "system: {template: evil.j2, slots: [{name: a, content: x}]}\n")
    with pytest.raises(TemplateError) as err:
        ContextBuilder().build(load_context_build_input(path))
    assert "sandbox" in str(err.value) and err.value.line == 2
    assert err.value.template is not None and err.value.template.endswith("evil.j2")


def test_r_build_4_template_errors_name_template_and_line(tmp_path):
    write(tmp_path, "a\nb\n{% for s in slots %}{{ s.nme }}{% endfor %}", "typo.j2")
    path = write(tmp_path, "system: {template: typo.j2, slots: [{name: a, content: x}]}\n")
    with pytest.raises(TemplateError) as err:
        ContextBuilder().build(load_context_build_input(path))
    assert err.value.line == 3 and "nme" in str(err.value)  # StrictUndefined
    write(tmp_path, "a\n{% if %}", "syntax.j2")
    path = write(tmp_path, "system: {template: syntax.j2, slots: [{name: a, content: x}]}\n")
    with pytest.raises(TemplateError) as err:
        ContextBuilder().build(load_context_build_input(path))
    assert err.value.line == 2 and "syntax error" in str(err.value)


def test_r_build_5_roles_senders_and_system_addendum(tmp_path):
    """R-BUILD-5."""
    out = build(tmp_path, """
        system: {slots: [{name: a, content: x}]}
        memory: {slots: [{name: m, content: y}]}
        before_current_input: {slots: [{name: b, content: z}]}
        """, system_addendum="Tools: bash")
    assert [(m.position, m.role, m.sender) for m in out.messages] == [
        ("system", "system", "system"), ("memory", "user", "context"),
        ("before_current_input", "user", "context")]
    assert out.system.text == "<a>x</a>\n\nTools: bash"
    assert out.memory is not None
    assert out.memory.to_message().role == "user" and out.memory.to_message().text == "<m>y</m>"


def test_r_build_5_empty_optional_section_gives_no_message(tmp_path):
    """R-BUILD-5."""
    write(tmp_path, "{% for s in slots %}{{ s.content }}{% endfor %}\n\n", "blank.j2")
    out = build(tmp_path, """
        system: {slots: [{name: a, content: x}]}
        memory: {slots: [{name: m, content: y, enabled: false}]}
        before_current_input: {template: blank.j2}
        """)
    assert out.memory is None and out.before_current_input is None and len(out.messages) == 1


def test_r_build_1_every_problem_is_reported_in_document_order(tmp_path):
    with pytest.raises(ContextValidationError) as err:
        load_context_build_input(write(tmp_path, """
            system:
              slots:
                - {name: "a b", content: x}
                - {name: c, content: y, order: "1"}
            extra: 1
            """))
    lines = [i.line for i in err.value.issues if i.line is not None]
    assert lines == sorted(lines) and len(lines) == len(err.value.issues) == 3
    assert "(+2 more)" in str(err.value)


@pytest.mark.parametrize("name", ["bugfix", "long_session", "unanswered"])
def test_r_build_bundled_examples_build_and_match_sample_copies(name):
    bundled = ContextBuilder().build(
        load_context_build_input(ROOT / "workbench" / "examples" / f"{name}.context.yaml"))
    sample = ContextBuilder().build(
        load_context_build_input(ROOT / "sample_sessions" / f"{name}.context.yaml"))
    assert bundled == sample and bundled.system.text.startswith("<identity")


_XML_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\r")
                    | st.sampled_from(["\n", "\t", "&", "<", ">", '"', "'"]), max_size=60)


@settings(max_examples=200, deadline=None)
@given(text=_XML_TEXT, value=_XML_TEXT)
def test_r_build_4_xml_renderer_round_trips_any_text(text, value):
    """Property: whatever the text and attribute value, the element parses back to them exactly."""
    from iris.context.xml import render_element

    element = ET.fromstring(render_element("a", text, {"v": value}))
    assert element.attrib["v"] == value
    body = text.removesuffix("\n")  # one trailing newline is layout (documented)
    expected = None if body == "" else (f"\n{body}\n" if "\n" in body else body)
    assert element.text == expected
