"""AppTest for the Reduction page and its view (R-UI-2): the replay's own
decisions at the selected step, the same records as Step-through, with the rule and numbers of
each, and the earlier decisions still shaping the request. Nothing is reduced again."""

from __future__ import annotations

from pathlib import Path

import pytest
from iris.replay import ReplayOptions, replay
from store_helpers import copy_store
from streamlit.testing.v1 import AppTest

from workbench.importers import load_session
from workbench.views.reduction import (
    COLUMNS,
    REDUCTION_STAGES,
    decisions_in_effect,
    earlier_records,
    reduction_totals,
    stage_notes,
    step_decisions,
)
from workbench.views.step_through import plain

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "workbench" / "ui" / "app.py")
PAGE = "../pages/reduction.py"
STEP_PAGE = "../pages/step_through.py"
SAMPLE = ROOT / "sample_sessions" / "long_session.jsonl"
STEP = 31
"""A step of the long sample whose replay records folds, reductions and kept results (10)."""


def _live():
    session = load_session(SAMPLE).session
    return session, replay(session)


def test_step_decisions_are_the_replays_records_with_rule_and_numbers():
    _, result = _live()
    prep = result.preparations[STEP]
    table = step_decisions(prep)
    records = [d for s in prep.stages if s.name in REDUCTION_STAGES for d in s.decisions]
    assert list(table.columns) == COLUMNS
    assert list(table["reason"]) == [d.reason for d in records] and len(records) == 10
    assert list(table["kind"]) == [d.kind for d in records]
    reduced = table[table["kind"] == "reduced"]
    assert len(reduced) and bool((reduced["rule"] != "").all())
    assert bool((reduced["saved tokens"] == reduced["tokens before"] - reduced["tokens after"]).all())
    assert bool((reduced["saved tokens"] > 0).all())
    totals = reduction_totals(table)
    assert bool(totals["results"].sum() == len(table))


def test_earlier_decisions_in_effect_explain_every_shortened_message():
    """Each history message the step's request marks as shortened has its earlier decision."""
    _, result = _live()
    prep = result.preparations[STEP]
    request = result.request(prep)
    assert request is not None
    earlier = [(p.step_index, s.name, d) for p in result.preparations for s in p.stages
               for d in s.decisions if d.kind in ("reduced", "trimmed", "folded-repeat",
                                                  "kept-recent")]
    table = decisions_in_effect(prep, request, earlier)
    marked = {m.history_index for m in request.marks
              if m.history_index is not None and {"reduced", "trimmed", "folded"} & set(m.marks)}
    now = set(step_decisions(prep)["message"].dropna())
    assert len(table) and bool((table["step"] < STEP).all())
    assert set(table["message"]) | now >= marked


def test_reduction_page_empty_store_tells_the_user_what_to_do():
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page(PAGE).run()
    assert not at.exception and "Sessions page" in at.info[0].value


def _page(page: str, step: int) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["step"] = str(step)
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def test_reduction_and_step_through_show_the_same_decisions_at_the_same_step(workbench_home,
                                                                               long_store):
    """At step 31 of the saved default replay, every decision the Reduction page lists is shown
    by Step-through (kind, what it did, reason), and the counts per stage agree."""
    copy_store(long_store, workbench_home)
    red = _page(PAGE, STEP)
    table = red.dataframe[0].value
    assert f"Step {STEP} of" in red.caption[0].value
    assert len(table) == 10 and list(table.columns) == COLUMNS
    assert red.dataframe[1].value.shape[0] > 0  # earlier decisions still in effect
    step = _page(STEP_PAGE, STEP)
    shown = "\n".join(m.value for m in step.markdown)
    for kind, what, reason in zip(table["kind"], table["what"], table["reason"], strict=True):
        assert f"**{plain(kind)}**: {plain(what)} — {plain(reason)}" in shown
    for stage in REDUCTION_STAGES:
        n = list(table["stage"]).count(stage)
        labels = [e.label for e in step.expander if e.label.startswith(stage + " —")]
        assert len(labels) == 1 and labels[0].endswith(f"· {n} decision" + ("" if n == 1 else "s")), labels


def test_reduction_page_follows_the_sidebar_step(workbench_home, long_store):
    copy_store(long_store, workbench_home)
    at = _page(PAGE, 0)
    assert "no reduction decision at this step" in at.info[0].value
    at.sidebar.number_input(key="_wb_step_number").set_value(STEP).run()
    assert not at.exception, at.exception
    assert len(at.dataframe[0].value) == 10


def test_saved_replay_earlier_records_give_the_live_answer(workbench_home, long_store):
    """One indexed query on the saved replay gives the same in-effect rows as the live records."""
    from workbench.services.replay import open_saved
    from workbench.storage.store import open_store

    copy_store(long_store, workbench_home)
    _, result = _live()
    prep = result.preparations[STEP]
    live = [(p.step_index, s.name, d) for p in result.preparations for s in p.stages
            for d in s.decisions]
    with open_store() as store:
        (rid,) = [r.id for r in store.replays.list() if r.name == "default"]
        stored = open_saved(store, rid)
        saved_prep = stored.preparation(STEP)
        request = stored.request(saved_prep.final_request_ref)
        from_db = decisions_in_effect(saved_prep, request,
                                      earlier_records(stored, saved_prep, request))
    expected = decisions_in_effect(prep, result.request(prep), live)
    assert len(from_db) > 0
    assert list(from_db["reason"]) == list(expected["reason"])
    assert list(from_db["step"]) == list(expected["step"])


def test_as_recorded_baseline_says_why_nothing_was_reduced():
    session = load_session(SAMPLE).session
    result = replay(session, options=ReplayOptions(baseline="recorded"))
    prep = result.preparations[STEP]
    assert step_decisions(prep).empty
    notes = stage_notes(prep)
    assert len(notes) == 3 and all("as-recorded baseline" in n for n in notes)
