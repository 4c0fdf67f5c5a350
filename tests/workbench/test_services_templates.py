"""The Templates page's services (R-UI-4, R-PRM-1, R-PRM-3) on a real store and the real engine:
Save writes the workspace template (or refuses a linked target), the re-run plan carries only the
engine-rendered edits, and an edited whole re-run is saved only under its own session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from iris.errors import IrisError, StorageError
from iris.prompts import PromptSnapshot, PromptSource

from workbench.services.replay import BUDGET_REPLAY_NAME, ensure_default_replay
from workbench.services.rerun import ReplayComparison
from workbench.services.templates import (
    RerunTarget,
    rerun_plan,
    rerun_target,
    run_edited,
    save_edited_replay,
    save_template,
)
from workbench.storage.store import Store, open_store

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
EDIT = "\nALWAYS MENTION PENGUINS.\n"


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> Iterator[tuple[Store, str, str]]:
    """A store with the long sample (its ``budget 96k`` replay compacts) and the bug-fix sample
    (no replay of it compacts), each with its default replays: (store, long id, bug-fix id)."""
    store = open_store(tmp_path_factory.mktemp("templates") / "workbench.db")
    ids = [store.import_file(SAMPLES / name).session_id
           for name in ("long_session.jsonl", "bugfix.jsonl")]
    for session_id in ids:
        ensure_default_replay(store, session_id)
    yield store, ids[0], ids[1]
    store.close()


@pytest.fixture(scope="module")
def target(stored: tuple[Store, str, str]) -> RerunTarget:
    store, session_id, _ = stored
    replay = store.replays.find(session_id, BUDGET_REPLAY_NAME)
    assert replay is not None
    found = rerun_target(store, replay.id, session_id, None)
    assert isinstance(found, RerunTarget), found
    return found


def test_r_prm_1_save_template_writes_the_workspace_file_and_returns_the_saved_snapshot(tmp_path):
    source = PromptSource(tmp_path, ".iris/prompts")
    base = PromptSnapshot.defaults()
    path, saved = save_template(source, base, "goal_context", "GOAL: {{ objective }}")
    assert path == tmp_path / ".iris" / "prompts" / "goal_context.j2"
    assert path.read_text("utf-8") == "GOAL: {{ objective }}"
    assert saved.template_source("goal_context") == "GOAL: {{ objective }}"
    assert saved.edited_ids(base) == ("goal_context",)
    assert source.snapshot() == saved  # a fresh read sees what Save returned


def test_r_prm_3_save_template_refuses_a_linked_target(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me", "utf-8")
    folder = tmp_path / "ws" / ".iris" / "prompts"
    folder.mkdir(parents=True)
    (folder / "goal_context.j2").symlink_to(outside)
    with pytest.raises(IrisError, match="symbolic link"):
        save_template(PromptSource(tmp_path / "ws"), PromptSnapshot.defaults(), "goal_context", "x")
    assert outside.read_text("utf-8") == "keep me"


def test_r_ui_4_rerun_target_explains_a_missing_replay_or_compaction(
        stored: tuple[Store, str, str]):
    store, _, bugfix = stored
    reason = rerun_target(store, None, None, None)
    assert isinstance(reason, str) and "pick a replay in the sidebar" in reason
    replay = store.replays.list(bugfix)[0]
    reason = rerun_target(store, replay.id, bugfix, None)
    assert isinstance(reason, str) and reason.startswith(
        f"No compaction was planned in replay **{replay.name}**")


def test_r_ui_4_rerun_plan_takes_only_the_engine_rendered_edits(target: RerunTarget):
    own = target.inputs.snapshot
    same = rerun_plan(target, own, "extractive")
    assert same.changed == () and same.snapshot == own and same.kind == "extractive"
    assert same.key == (target.replay_id, target.step, own.snapshot_id, "extractive")
    other_id = rerun_plan(target, own.with_template("todo_reminder", "x"), "extractive")
    assert other_id.key == same.key  # the engine never renders todo_reminder in a replay
    edit = own.with_template("compaction", own.template_source("compaction") + EDIT)
    plan = rerun_plan(target, edit, "recorded")
    assert plan.changed == ("compaction",)
    assert plan.snapshot.template_source("compaction").endswith(EDIT)
    assert plan.key[:2] == same.key[:2] and plan.key[2] != own.snapshot_id
    assert plan.key[3] == "recorded"


def test_r_ui_4_edited_replay_is_saved_only_under_its_own_session(
        stored: tuple[Store, str, str], target: RerunTarget):
    """R-REAL-7: the edited side of a whole re-run is saved under the session it was computed for,
    with the edited template; another session refuses it and stores nothing."""
    own = target.inputs.snapshot
    edit = own.with_template("compaction", own.template_source("compaction") + EDIT)
    result = run_edited(target, edit, "extractive", "replay")
    assert isinstance(result, ReplayComparison)
    store, _, other = stored
    before = [r.name for r in store.replays.list(other)]
    with pytest.raises(StorageError, match="refusing to save it under session"):
        save_edited_replay(store, result, "mixed up", other)
    assert [r.name for r in store.replays.list(other)] == before
    info = save_edited_replay(store, result, "  penguins ", target.session_id)
    assert info.name == "penguins" and info.session_id == target.session_id
    sources = store.replays.open(info.id).template_sources()
    assert sources is not None and sources["compaction"].endswith(EDIT)
