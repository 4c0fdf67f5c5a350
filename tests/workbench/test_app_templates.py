"""AppTest for the Templates page: live render, diff, edited vs saved snapshot, Save (R-UI-4, R-PRM-3)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from iris.prompts import PromptSnapshot
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "templates.py")


def page(workspace: Path) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=30)
    at.run()
    at.text_input(key="tpl_workspace").input(str(workspace)).run()
    return at


def test_r_ui_4_default_workspace_is_under_workbench_home(workbench_home):
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    assert not at.exception
    assert at.text_input(key="tpl_workspace").value == str(workbench_home / "workspace")
    assert "saved snapshot" in at.success[0].value
    assert at.selectbox(key="tpl_id").value == "compaction"
    assert "## Goal" in at.code[0].value  # rendered with the example variables


def test_r_prm_3_edit_renders_live_shows_diff_and_writes_nothing(tmp_path):
    at = page(tmp_path)
    at.selectbox(key="tpl_id").select("todo_reminder").run()
    at.text_area(key="tpl_src_todo_reminder").input(
        "Stale for {{ turns_since_update }} turns: {{ todos | length }} items").run()
    assert not at.exception and not at.error
    assert at.code[0].value.strip() == "Stale for 4 turns: 3 items"
    assert "+Stale for {{ turns_since_update }} turns" in at.code[1].value
    assert "-Reminder:" in at.code[1].value
    assert "edited snapshot" in at.warning[0].value and "todo_reminder" in at.warning[0].value
    assert not (tmp_path / ".iris").exists()  # nothing on disk until Save
    edited = at.session_state["tpl_edited"]
    assert edited.template_source("todo_reminder").startswith("Stale for")
    assert at.session_state["tpl_base"] == PromptSnapshot.defaults()


def test_r_prm_3_syntax_error_shown_with_line_and_previous_snapshot_kept(tmp_path):
    at = page(tmp_path)
    at.text_area(key="tpl_src_compaction").input("ok\n{% if %}").run()
    assert not at.exception
    assert "line 2" in at.error[0].value and "compaction" in at.error[0].value
    assert at.session_state["tpl_edited"] == PromptSnapshot.defaults()
    assert at.button(key="tpl_save").disabled


def test_r_prm_1_save_writes_workspace_prompts_root(tmp_path):
    at = page(tmp_path)
    at.selectbox(key="tpl_id").select("goal_context").run()
    at.text_area(key="tpl_src_goal_context").input("GOAL: {{ objective }}").run()
    at.button(key="tpl_save").click().run()
    saved = tmp_path / ".iris" / "prompts" / "goal_context.j2"
    assert saved.read_text("utf-8") == "GOAL: {{ objective }}"
    assert [p.name for p in saved.parent.iterdir()] == ["goal_context.j2"]
    assert "saved snapshot" in at.success[0].value
    assert at.session_state["tpl_base"].template_source("goal_context") == "GOAL: {{ objective }}"
    digest = hashlib.sha256(saved.read_bytes()).hexdigest()
    fresh = page(tmp_path)  # a new session reads the saved template
    fresh.selectbox(key="tpl_id").select("goal_context").run()
    assert fresh.code[0].value.startswith("GOAL: The March report")
    assert hashlib.sha256(saved.read_bytes()).hexdigest() == digest


def test_r_ui_4_discard_restores_saved_template(tmp_path):
    at = page(tmp_path)
    at.text_area(key="tpl_src_compaction").input("X {{ profile }}").run()
    assert at.code[0].value.strip() == "X continuation"
    at.button(key="tpl_discard").click().run()
    assert "saved snapshot" in at.success[0].value
    assert at.text_area(key="tpl_src_compaction").value == PromptSnapshot.defaults().template_source(
        "compaction")


def test_r_ui_4_pages_run_inside_the_app_shell():
    """Both pages work under workbench/ui/app.py's navigation (when the shell exists)."""
    import pytest

    app = Path(__file__).resolve().parents[2] / "workbench" / "ui" / "app.py"
    if not app.exists():
        pytest.skip("workbench/ui/app.py not present")
    at = AppTest.from_file(str(app), default_timeout=30).run()
    at.switch_page("../pages/templates.py").run()
    assert not at.exception and any("saved snapshot" in s.value for s in at.success)
    at.switch_page("../pages/context.py").run()
    assert not at.exception and at.subheader[0].value == "system · system"


def test_r_prm_3_broken_saved_template_is_an_error_not_a_crash(tmp_path):
    prompts = tmp_path / ".iris" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "todo_context.j2").write_text("fine\n{% for %}\n", "utf-8")
    at = page(tmp_path)
    assert not at.exception
    assert "todo_context" in at.error[0].value and "line 2" in at.error[0].value
