"""A replay streamed into the store step by step (the CLI's ``replay --name``, ``replay
--defaults`` and the app's default replays) is the replay a whole in-memory replay saved: every
value read back is the same, the stored chunks are the same bytes, the ``--summary-json`` text is
the same byte for byte, and the process keeps only each step's figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from iris.config import ContextConfig
from iris.replay_options import Baseline

from workbench.analysis.replay_report import replay_report
from workbench.cli import main
from workbench.records import EvidenceBundle
from workbench.services.replay import (
    BUDGET_REPLAY_NAME,
    DEFAULT_REPLAY_NAME,
    RECORDED_REPLAY_NAME,
    StepFigures,
    budget_96k_config,
    ensure_default_replay,
    replay_and_save,
    replay_session,
    stream_replay,
)
from workbench.storage.migrations import STEP_FIGURE_COLUMNS
from workbench.storage.store import Store

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_sessions"
REAL = ("claude_code/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl.gz",
        "claude_code/spotter_subagent_session.jsonl",
        "codex_rollout/rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl",
        "openai_chat/pvlib__pvlib-python-1707.deepseek_reasoner.traj.json")
SAVINGS = ("assembly", "fold_repeats", "drop_optional", "trim_old_bodies", "compaction",
           "final_selection")
_CONFIGS: dict[str, tuple[ContextConfig | None, Baseline]] = {
    DEFAULT_REPLAY_NAME: (None, "engine"), RECORDED_REPLAY_NAME: (None, "recorded"),
    BUDGET_REPLAY_NAME: (budget_96k_config(), "engine")}


def _reads(store: Store, replay_id: str) -> dict[str, Any]:
    """Every value a reader gets from a stored replay (the replay's own id, name and save time
    left out)."""
    stored = store.replays.open(replay_id)
    steps = stored.steps
    parts = stored.request_parts()
    kinds = sorted({d.kind for s in steps for st in stored.preparation(s.step_index).stages
                    for d in st.decisions})
    return {
        "info": stored.info.model_dump(exclude={"id", "name", "created_at"}),
        "facts": stored.facts, "steps": steps,
        "records": [stored.preparation(s.step_index) for s in steps],
        "by_id": [store.replays.preparation_by_id(s.preparation_id) for s in steps],
        "requests": {s.final_request_ref: stored.request(s.final_request_ref)
                     for s in steps if s.final_request_ref},
        "parts": parts,
        "messages": stored.part_messages(sorted({i for ids, _ in parts.values() for i in ids})),
        "decisions": {k: stored.decisions_of_kind(k) for k in kinds},
        "all_decisions": stored.decisions_of_kind(*kinds),
        "repository_decisions": store.replays.decisions_of_kind(replay_id, kinds),
        "figures": stored.step_figures([n for n, _ in STEP_FIGURE_COLUMNS]),
        "savings": stored.stage_savings(SAVINGS), "archives": stored.archives(),
        "yaml": stored.configuration_yaml(), "templates": stored.template_sources(),
    }


def _chunks(store: Store, replay_id: str) -> list[tuple[Any, ...]]:
    """The stored chunk rows of a replay, as bytes."""
    return store.db.execute(
        "SELECT c.c, c.steps, c.marks, c.records, c.requests FROM step_chunks c JOIN replays r "
        "ON r.n = c.replay_n WHERE r.id = ? ORDER BY c.c", [replay_id]).fetchall()


def _old_save(store: Store, session_id: str, name: str) -> tuple[str, EvidenceBundle]:
    """The previous path: the whole replay in memory, then saved in one piece."""
    config, baseline = _CONFIGS[name]
    _, bundle = replay_session(store.session(session_id), config=config, baseline=baseline)
    return store.replays.save(bundle, session_id=session_id, name=f"old {name}").id, bundle


def _assert_same_saves(path: Path, tmp_path: Path) -> int:
    """Each default replay of ``path`` saved whole and streamed: the same reads, the same chunk
    bytes; returns the steps compared."""
    compared = 0
    with Store(tmp_path / f"{path.name}.db") as store:
        session_id = store.import_file(path).session_id
        for name, (config, baseline) in _CONFIGS.items():
            old_id, bundle = _old_save(store, session_id, name)
            info, result = replay_and_save(store, session_id, name=name, config=config,
                                           baseline=baseline)
            old, new = _reads(store, old_id), _reads(store, info.id)
            for key in old:
                assert new[key] == old[key], (path.name, name, key)
            assert _chunks(store, info.id) == _chunks(store, old_id)
            assert info.model_dump(exclude={"id", "name", "created_at"}) == \
                old["info"] == new["info"]
            assert len(result.preparations) == len(bundle.preparations) == len(new["steps"])
            assert not result.requests and not result.archives
            compared += len(new["steps"])
    return compared


@pytest.mark.slow
def test_r_prep_5_streamed_default_replays_of_the_samples_read_back_as_whole_saves(tmp_path):
    """R-PREP-5: the three default replays of every sample session, streamed step by step,
    read back exactly as the same replays saved whole (every step, record, request, part,
    decision query, figure, saving, archive and the chunk bytes)."""
    compared = sum(_assert_same_saves(path, tmp_path)
                   for path in sorted(SAMPLES.glob("*.jsonl")))
    assert compared > 100


@pytest.mark.slow
@pytest.mark.parametrize("relative", REAL)
def test_r_prep_5_streamed_default_replays_of_real_sessions_read_back_as_whole_saves(
        tmp_path, real_sessions, relative):
    """R-PREP-5: the same on each real session (Claude Code, its sub-agent, Codex, OpenAI chat)."""
    assert _assert_same_saves(real_sessions / relative, tmp_path) > 0


def _old_summary(path: Path, home: Path, *, saved: bool) -> str:
    """``--summary-json`` as the previous command made it: the whole replay in memory, with its
    request bodies (the command prices a replay from each step's cache prefix whether it saves it
    or not, ``saved``), and the summary of that result."""
    from workbench.importers.claude_progress import subagent_sessions

    with Store(home / "old.db") as store:
        session_id = store.import_file(path).session_id
        session = store.session(session_id)
        result, bundle = replay_session(session)  # priced from its request bodies, saved or not
    # what the command states beside the replay: the transcript's sub-agents, billed with it, and
    # the template snapshot the replay rendered with
    main_transcript = (session.header.source_format == "claude_code"
                       and session.header.parent_id is None)
    summary: Any = replay_report(session, result,
                                 subagents=subagent_sessions(path) if main_transcript else (),
                                 template_snapshot_id=bundle.template_snapshot_id)
    if hasattr(summary, "json_text"):
        return summary.json_text()
    return json.dumps(summary, indent=2, ensure_ascii=False) + "\n"


@pytest.mark.slow
@pytest.mark.parametrize("relative", [None, *REAL])
def test_r_ui_9_summary_json_of_a_streamed_replay_is_the_same_text(
        tmp_path, monkeypatch, real_sessions, relative):
    """R-UI-9: ``workbench replay FILE --summary-json`` writes byte for byte the text the whole
    in-memory replay gave, saved with ``--name`` (priced from the request bodies) and not."""
    path = SAMPLES / "bugfix.jsonl" if relative is None else real_sessions / relative
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    for saved in (True, False):
        out = tmp_path / f"summary-{saved}.json"
        assert main(["replay", str(path), "--summary-json", str(out),
                     *(["--name", "streamed"] if saved else [])]) == 0
        assert out.read_text(encoding="utf-8") == _old_summary(path, tmp_path, saved=saved)


def test_r_ui_9_summary_json_of_the_sample_is_the_same_text(tmp_path, monkeypatch):
    """R-UI-9: the same on a sample session, in the fast loop."""
    path = SAMPLES / "bugfix.jsonl"
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    out = tmp_path / "summary.json"
    assert main(["replay", str(path), "--summary-json", str(out), "--name", "streamed"]) == 0
    assert out.read_text(encoding="utf-8") == _old_summary(path, tmp_path, saved=True)


def test_r_prep_5_a_replay_that_fails_midway_keeps_the_replay_it_would_replace(tmp_path):
    """R-PREP-5: the streamed replay is one transaction: when it stops with an error after some
    steps were written, the replay of that name reads back as before and nothing else is left."""
    with Store(tmp_path / "wb.db") as store:
        session_id = store.import_file(SAMPLES / "bugfix.jsonl").session_id
        info, _ = replay_and_save(store, session_id, name="x", config=budget_96k_config())
        before = _reads(store, info.id)
        listed = store.replays.list(session_id)

        def stop(fraction: float, label: str) -> None:
            if label.startswith("step 20 "):
                raise KeyboardInterrupt  # what Ctrl-C does in the middle of the replay

        with pytest.raises(KeyboardInterrupt):
            replay_and_save(store, session_id, name="x", progress=stop)
        assert _reads(store, info.id) == before
        assert store.replays.list(session_id) == listed


@pytest.mark.slow
def test_r_prep_5_the_streamed_result_keeps_figures_not_decisions(tmp_path):
    """R-PREP-5: the result of a streamed replay keeps no request or archive body and, of a step
    that applied no compaction, only its figures: every scalar field and stage's tokens equal the
    record's; a compacting step keeps its record; ``keep_records`` keeps every record whole, as
    the engine made it."""
    with Store(tmp_path / "wb.db") as store:
        session_id = store.import_file(SAMPLES / "long_session.jsonl").session_id
        session = store.session(session_id)
        whole, _ = replay_session(session, config=budget_96k_config())
        light = stream_replay(session, store=store, session_id=session_id, name="s",
                              config=budget_96k_config()).result
        kept = stream_replay(session, config=budget_96k_config(), keep_records=True).result
    assert kept == whole.model_copy(update={"requests": {}, "archives": {}})
    assert light.checkpoints == whole.checkpoints and light.checkpoints
    assert not light.requests and not light.archives
    compacting = 0
    for a, b in zip(light.preparations, whole.preparations, strict=True):
        if b.compaction_applied:
            assert a is b or a == b
            compacting += 1
            continue
        assert isinstance(a, StepFigures)
        for name, value in b:
            if name != "stages" and hasattr(a, name):
                assert getattr(a, name) == value, name
        assert [(s.name, s.status, s.before_input_tokens, s.after_input_tokens, s.decisions)
                for s in a.stages] == [(s.name, s.status, s.before_input_tokens,
                                        s.after_input_tokens, ()) for s in b.stages]
        assert a.stage("trim_old_bodies") == next(
            (s for s in a.stages if s.name == "trim_old_bodies"), None)
    assert compacting == len(whole.checkpoints)


def test_r_ui_1_default_replays_are_streamed(tmp_path):
    """R-UI-1: the app's default replays (made on a session's first open) read back as the same
    replays saved whole."""
    with Store(tmp_path / "wb.db") as store:
        session_id = store.import_file(SAMPLES / "bugfix.jsonl").session_id
        info = ensure_default_replay(store, session_id)
        old_id, _ = _old_save(store, session_id, DEFAULT_REPLAY_NAME)
        assert _reads(store, info.id) == _reads(store, old_id)
        assert {r.name for r in store.replays.list(session_id)} >= {DEFAULT_REPLAY_NAME,
                                                                    RECORDED_REPLAY_NAME}


def test_r_ui_9_json_lines_of_a_streamed_replay_are_the_records(tmp_path, monkeypatch):
    """R-UI-9: ``workbench replay FILE --json OUT`` writes every preparation as the whole
    in-memory replay did, saved with ``--name`` (streamed) and not."""
    path = SAMPLES / "bugfix.jsonl"
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    with Store(tmp_path / "old.db") as store:
        session = store.session(store.import_file(path).session_id)
    result, _ = replay_session(session)
    expected = "".join(p.model_dump_json() + "\n" for p in result.preparations)
    for saved in (True, False):
        out = tmp_path / f"records-{saved}.jsonl"
        assert main(["replay", str(path), "--json", str(out),
                     *(["--name", "streamed"] if saved else [])]) == 0
        assert out.read_text(encoding="utf-8") == expected
