"""AppTest for the Context page: examples, path, upload and validation errors (R-BUILD)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "context.py")


def page() -> AppTest:
    return AppTest.from_file(PAGE, default_timeout=30)


def test_r_build_5_bundled_example_shows_three_messages_with_sizes():
    """R-BUILD-5."""
    at = page().run()
    assert not at.exception and not at.error
    assert at.selectbox(key="ctx_example").value == "bugfix.context.yaml"
    assert [s.value for s in at.subheader] == [
        "system · system", "memory · user (context sender)",
        "before_current_input · user (context sender)"]
    frame = at.table[0].value
    assert list(frame["position"]) == ["system", "memory", "before_current_input"]
    assert bool((frame["characters"] > 0).all()) and bool((frame["tokens (local estimate)"] > 0).all())
    assert at.code[0].value.startswith("<identity>")


def test_r_build_5_empty_optional_sections_and_addendum():
    """R-BUILD-5."""
    at = page().run()
    at.selectbox(key="ctx_example").select("unanswered.context.yaml").run()
    assert [s.value for s in at.subheader] == ["system · system"]
    at.text_input(key="ctx_addendum").input("Tools: bash, read").run()
    assert at.code[0].value.endswith("\n\nTools: bash, read")


def test_r_build_1_path_with_errors_lists_field_paths_without_traceback(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("system:\n  slots:\n    - name: 'a b'\n      content: x\nextra: 1\n", "utf-8")
    at = page().run()
    at.radio(key="ctx_mode").set_value("Path").run()
    assert at.info  # empty state tells the user what to do
    at.text_input(key="ctx_path").input(str(bad)).run()
    assert not at.exception
    message = at.error[0].value
    assert "2 problem(s)" in message and "`system.slots[0].name` (line 3)" in message
    assert "`extra` (line 5)" in message and "Traceback" not in message
    assert list(at.table[0].value["field"]) == ["system.slots[0].name", "extra"]


def test_r_build_2_max_chars_overflow_shown_as_error(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("system:\n  max_chars: 5\n  slots: [{name: a, content: too long}]\n", "utf-8")
    at = page().run()
    at.radio(key="ctx_mode").set_value("Path").run()
    at.text_input(key="ctx_path").input(str(path)).run()
    assert "system.max_chars" in at.error[0].value and "never truncated" in at.error[0].value


def test_r_build_1_missing_file_is_a_clear_error(tmp_path):
    at = page().run()
    at.radio(key="ctx_mode").set_value("Path").run()
    at.text_input(key="ctx_path").input(str(tmp_path / "nope.yaml")).run()
    assert not at.exception and "cannot read file" in at.error[0].value


def test_r_build_2_uploaded_text_resolves_templates_against_the_given_dir(tmp_path):
    """The upload branch: YAML text without a file; relative templates use ``base_dir``."""
    from workbench.services.context import context_view
    from workbench.views.context import messages_frame

    (tmp_path / "t.j2").write_text("{% for s in slots %}{{ s.name }}{% endfor %}", "utf-8")
    view = context_view("system: {template: t.j2, slots: [{name: a, content: x}]}\n",
                        base_dir=tmp_path, source="upload.yaml")
    assert view.ok and view.messages[0].message.text == "a"
    assert messages_frame(view)["characters"].tolist() == [1]
    broken = context_view("system: {template: t.j2, slots: [{name: a, content: x}]}\n",
                          base_dir=tmp_path / "elsewhere", source="upload.yaml")
    assert broken.problems[0].field == "system.template" and broken.problems[0].source == "upload.yaml"
