"""Tests for iris.prompts: ids, defaults, snapshots, with_template, the sandbox (R-PRM-1…4)."""

from __future__ import annotations

import hashlib
import os
import re

import pytest
from iris import prompts
from iris.errors import TemplateError
from iris.prompts import PROMPT_IDS, PROMPT_VARIABLES, PromptConfig, PromptSnapshot, PromptSource

SECTIONS = ["Goal", "Progress", "Key Decisions", "File Evidence", "Constraints", "Open Issues",
            "Next Step"]


def example(prompt_id: str) -> dict:
    from workbench.views.templates import example_variables
    return example_variables(prompt_id)


def _fingerprint(directory):
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(directory.iterdir())}


def test_r_prm_3_public_surface_sorted_all():
    assert prompts.__all__ == sorted(prompts.__all__)
    for name in ("PROMPT_IDS", "PromptConfig", "PromptSource", "PromptSnapshot"):
        assert hasattr(prompts, name)


def test_r_prm_2_fifteen_fixed_ids_each_with_a_packaged_default():
    """R-PRM-2."""
    assert len(PROMPT_IDS) == 15 and len(set(PROMPT_IDS)) == 15
    assert set(PROMPT_IDS) == set(PROMPT_VARIABLES)
    snap = PromptSnapshot.defaults()
    for pid in PROMPT_IDS:
        assert len(snap.template_source(pid)) > 200 or pid in {"memory_overview"}, pid


@pytest.mark.parametrize("prompt_id", PROMPT_IDS)
def test_r_prm_2_every_default_renders_with_its_declared_variables(prompt_id):
    """R-PRM-2."""
    text = PromptSnapshot.defaults().render(prompt_id, example(prompt_id))
    assert text.strip() and "{{" not in text and "{%" not in text


def test_r_prm_2_compaction_contract_sections_in_order_and_no_reasoning():
    """R-PRM-2."""
    text = PromptSnapshot.defaults().render("compaction", {
        "required_sections": SECTIONS, "summary_max_tokens": 4800, "profile": "continuation",
        "session_constraints": ["Never push to main", "Keep Python 3.11 support"]})
    headings = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    assert headings == SECTIONS
    assert "<think>" in text and "reasoning" in text  # forbids leakage explicitly
    assert "next step" in text.lower() and "4800" in text
    assert "- Never push to main" in text and "- Keep Python 3.11 support" in text
    archival = PromptSnapshot.defaults().render("compaction", {
        "required_sections": SECTIONS, "summary_max_tokens": 10, "profile": "archival",
        "session_constraints": []})
    assert "archival" in archival and "Standing session constraints" not in archival


def test_r_prm_2_compaction_input_renders_messages_and_previous_checkpoint():
    """R-PRM-2."""
    variables = {"messages": [
        {"index": 0, "role": "user", "text": "Fix the failing parser test", "tool_name": None},
        {"index": 2, "role": "tool", "text": "1 failed", "tool_name": "bash"}],
        "previous_checkpoint": "## Goal\nFix parser", "omitted_note": "", "current_request": ""}
    text = PromptSnapshot.defaults().render("compaction_input", variables)
    assert "## Previous Checkpoint" in text and "## Goal\nFix parser" in text
    assert "### [0] user" in text and "### [2] tool (bash)" in text and "1 failed" in text
    assert text.index("## Previous Checkpoint") < text.index("### [0] user")
    without = PromptSnapshot.defaults().render("compaction_input", {**variables,
                                               "previous_checkpoint": ""})
    assert "Previous Checkpoint" not in without


def test_r_prm_4_missing_and_unexpected_variables_are_clear_errors():
    snap = PromptSnapshot.defaults()
    with pytest.raises(TemplateError) as err:
        snap.render("compaction", {"required_sections": SECTIONS})
    assert err.value.template == "compaction"
    assert "summary_max_tokens" in str(err.value) and "session_constraints" in str(err.value)
    with pytest.raises(TemplateError, match="unexpected variables: bogus"):
        snap.render("todo_context", {"todos": [], "bogus": 1})


def test_r_prm_4_edited_template_cannot_use_undeclared_variables():
    with pytest.raises(TemplateError, match="not provided for this id: secret_schema"):
        PromptSnapshot.defaults().with_template("todo_context", "{{ secret_schema }}")


def test_r_prm_3_unknown_id_is_an_error():
    snap = PromptSnapshot.defaults()
    with pytest.raises(TemplateError, match="unknown prompt id 'nope'"):
        snap.render("nope", {})
    with pytest.raises(TemplateError, match="unknown prompt id"):
        snap.with_template("nope", "x")


def test_r_prm_3_syntax_error_names_id_and_line():
    with pytest.raises(TemplateError) as err:
        PromptSnapshot.defaults().with_template("todo_reminder", "line one\nline two\n{% if %}\n")
    assert err.value.template == "todo_reminder" and err.value.line == 3
    assert "todo_reminder" in str(err.value) and "line 3" in str(err.value)


def test_r_prm_3_sandbox_refuses_python_internals():
    snap = PromptSnapshot.defaults().with_template(
        "goal_context", "ok\n{{ objective.__class__.__mro__ }}")
    with pytest.raises(TemplateError) as err:
        snap.render("goal_context", example("goal_context"))
    assert "sandbox" in str(err.value) and err.value.line == 2
    fmt = PromptSnapshot.defaults().with_template("goal_context", "{{ status.format.__globals__ }}")
    with pytest.raises(TemplateError, match="sandbox"):
        fmt.render("goal_context", example("goal_context"))


def test_r_prm_3_with_template_returns_new_snapshot_and_leaves_original(tmp_path):
    source = PromptSource.initialize(tmp_path)
    before = _fingerprint(source.directory)
    original = source.snapshot()
    original_text = original.template_source("todo_reminder")
    edited = original.with_template("todo_reminder", "EDITED {{ turns_since_update }}")
    assert edited is not original and edited.snapshot_id != original.snapshot_id
    assert original.template_source("todo_reminder") == original_text
    assert edited.render("todo_reminder", example("todo_reminder")).startswith("EDITED")
    assert original.render("todo_reminder", example("todo_reminder")).startswith("Reminder")
    assert _fingerprint(source.directory) == before  # hashes and mtimes unchanged
    assert edited.edited_ids(original) == ("todo_reminder",)
    with pytest.raises(TypeError):
        original.sources["todo_reminder"] = "x"  # pyright: ignore[reportIndexIssue]  # read-only mapping: the write must fail


def test_r_prm_3_snapshot_freezes_sources_against_later_disk_edits(tmp_path):
    source = PromptSource.initialize(tmp_path)
    snap = source.snapshot()
    source.path_of("goal_context").write_text("changed {{ objective }}", "utf-8")
    assert snap.template_source("goal_context") == PromptSnapshot.defaults().template_source(
        "goal_context")
    assert source.snapshot().template_source("goal_context") == "changed {{ objective }}"


def test_r_prm_3_snapshot_id_is_a_content_hash():
    a = PromptSnapshot.defaults()
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", a.snapshot_id)
    b = a.with_template("todo_context", "x {{ todos }}").with_template(
        "todo_context", a.template_source("todo_context"))
    assert b.snapshot_id == a.snapshot_id and b == a


def test_r_prm_1_default_root_and_initialize_writes_all_missing(tmp_path):
    assert PromptConfig().root == ".iris/prompts"
    source = PromptSource.initialize(tmp_path)
    assert source.directory == tmp_path / ".iris" / "prompts"
    assert sorted(p.stem for p in source.directory.glob("*.j2")) == sorted(PROMPT_IDS)
    assert source.snapshot() == PromptSnapshot.defaults()


def test_r_prm_1_initialize_never_overwrites_an_edited_file(tmp_path):
    directory = tmp_path / "custom" / "prompts"
    directory.mkdir(parents=True)
    edited = directory / "compaction.j2"
    edited.write_text("MY CHECKPOINT {{ profile }}", "utf-8")
    os.utime(edited, ns=(1_000_000_000, 1_000_000_000))
    stamp = (hashlib.sha256(edited.read_bytes()).hexdigest(), edited.stat().st_mtime_ns)
    source = PromptSource.initialize(tmp_path, "custom/prompts")
    assert (hashlib.sha256(edited.read_bytes()).hexdigest(), edited.stat().st_mtime_ns) == stamp
    assert len(list(directory.glob("*.j2"))) == 15
    again = _fingerprint(directory)
    PromptSource.initialize(tmp_path, "custom/prompts")
    assert _fingerprint(directory) == again
    assert source.snapshot().template_source("compaction") == "MY CHECKPOINT {{ profile }}"


def test_r_prm_1_missing_file_falls_back_to_default_and_save_writes(tmp_path):
    source = PromptSource(tmp_path)
    assert source.saved_ids() == ()
    assert source.snapshot() == PromptSnapshot.defaults()
    path = source.save("todo_context", "T {{ todos | length }}")
    assert path == tmp_path / ".iris" / "prompts" / "todo_context.j2"
    assert source.saved_ids() == ("todo_context",)
    assert source.snapshot().render("todo_context", {"todos": [1, 2]}) == "T 2\n"
    with pytest.raises(TemplateError):
        source.save("todo_context", "{% for %}")
    assert path.read_text("utf-8") == "T {{ todos | length }}"


def test_r_prm_4_snapshot_is_safe_to_share_between_threads():
    from concurrent.futures import ThreadPoolExecutor
    snap = PromptSnapshot.defaults()
    variables = example("compaction")
    with ThreadPoolExecutor(8) as pool:
        out = list(pool.map(lambda _: snap.render("compaction", variables), range(32)))
    assert len(set(out)) == 1


def test_r_prm_3_with_template_recompiles_only_the_replaced_id():
    """Live editing stays fast: the other 14 compiled templates are shared, not rebuilt."""
    base = PromptSnapshot.defaults()
    edited = base.with_template("todo_context", "n={{ todos | length }}")
    assert edited._compiled["compaction"] is base._compiled["compaction"]
    assert edited._compiled["todo_context"] is not base._compiled["todo_context"]


def test_r_prm_3_snapshot_pickles_as_its_sources():
    import pickle

    edited = PromptSnapshot.defaults().with_template("todo_context", "n={{ todos | length }}")
    copy = pickle.loads(pickle.dumps(edited))
    assert copy == edited and copy.render("todo_context", {"todos": [1]}) == "n=1\n"
