"""Prices of a replay (R-TOK-6): requests and summaries priced with genai-prices
offline, saved money against the recorded session, "no price known" for other models."""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from iris.replay import replay
from iris.session import Message, Session, SessionHeader, TextBlock, Usage
from record_access import all_present

from workbench.importers import load_session
from workbench.pricing import CostStep, SummaryCallCost, cost_lines, price, replay_cost, tally
from workbench.services.costs import stored_replay_cost
from workbench.services.replay import open_saved, replay_and_save, replay_session
from workbench.storage.store import open_store

ROOT = Path(__file__).resolve().parents[2]
OPUS = "claude-opus-4-6"


def test_price_of_one_call_follows_the_list_price():
    """Claude Opus 4.6 lists $5 per input MTok and $25 per output MTok; cache reads are cheaper."""
    assert price(OPUS, input_tokens=100_000, output_tokens=2_000) == Decimal("0.55")
    cached = price(OPUS, input_tokens=100_000, output_tokens=2_000, cache_read_tokens=50_000)
    assert cached is not None and cached < Decimal("0.55")
    assert price("my-local-model", input_tokens=10) is None
    assert price(None, input_tokens=10) is None


@pytest.mark.slow  # starts a process
def test_prices_work_with_the_network_blocked():
    """The bundled price data is used: a process whose sockets cannot connect still prices."""
    code = ("import socket\n"
            "def refuse(*a, **k): raise OSError('network blocked in this test')\n"
            "socket.socket.connect = refuse\nsocket.create_connection = refuse\n"
            "from workbench.pricing import price\n"
            "print(price('gpt-5-codex', input_tokens=1_000_000))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=ROOT, check=True)
    assert Decimal(out.stdout.strip()) > 0


def test_tally_saved_is_recorded_minus_replay_and_summaries():
    steps = [CostStep(0, OPUS, 40_000, Usage(input_tokens=100_000, output_tokens=1_000)),
             CostStep(1, OPUS, 50_000, Usage(input_tokens=120_000, output_tokens=1_000))]
    cost = tally(steps, [SummaryCallCost(1, OPUS, 20_000, 2_000, measured=False)])
    assert cost.price_known and cost.steps_priced == 2 == cost.steps_compared
    assert cost.requests_usd == pytest.approx(0.45 + 0.05)      # 90k in, 2k out
    assert cost.summaries_usd == pytest.approx(0.10 + 0.05)     # 20k in, 2k out
    assert cost.recorded_usd == pytest.approx(1.10 + 0.05)      # 220k in, 2k out
    assert cost.saved_usd == pytest.approx(1.15 - 0.50 - 0.15)
    assert cost.summaries_estimated is True
    assert cost.models == {OPUS: "Anthropic Claude Opus 4.6"}
    assert "Saved $0.5000" in " ".join(cost_lines(cost))


def test_no_price_known_for_an_unknown_model():
    steps = [CostStep(0, "my-local-model", 1_000, Usage(input_tokens=2_000, output_tokens=10))]
    cost = tally(steps)
    assert cost.price_known is False and cost.note == "no price known for 'my-local-model'"
    assert cost.requests_usd is None and cost.saved_usd is None
    assert cost_lines(cost)[0] == "Cost: no price known for 'my-local-model'."


def _tiny_session(model: str) -> Session:
    msgs = []
    for i in range(3):
        msgs.append(Message(role="user", content=(TextBlock(text=f"question {i} " * 50),)))
        msgs.append(Message(role="assistant", content=(TextBlock(text=f"answer {i}"),),
                            model=model, usage=Usage(input_tokens=5_000 * (i + 1),
                                                     output_tokens=100, model=model)))
    return Session(header=SessionHeader(session_id="tiny", model=model), messages=tuple(msgs))


def test_replay_cost_prices_every_step_of_a_replay():
    session = _tiny_session(OPUS)
    result = replay(session)
    cost = replay_cost(session, result)
    assert cost.steps_priced == 3 == len(result.preparations)
    # a request before the first response measured the overhead carries it all the same
    first = next(p.unrecorded_overhead_tokens for p in result.preparations
                 if p.overhead_measured_at is not None)
    tokens = [p.whole_request_tokens + (first if p.overhead_measured_at is None
                                        and not p.unrecorded_overhead_tokens else 0)
              if p.whole_request_tokens is not None else p.final_input_tokens
              for p in result.preparations]
    assert tokens[0] > (result.preparations[0].whole_request_tokens or 0)
    expected = sum(all_present(price(OPUS, input_tokens=t, output_tokens=100) for t in tokens))
    assert cost.requests_usd == pytest.approx(float(expected))
    recorded = price(OPUS, input_tokens=30_000, output_tokens=300)
    assert recorded is not None and cost.recorded_usd == pytest.approx(float(recorded))
    other = replay_cost(_tiny_session("my-local-model"), replay(_tiny_session("my-local-model")))
    assert other.note == "no price known for 'my-local-model'"


def test_stored_replay_cost_matches_the_live_replay_for_requests():
    """A replay saved in a real SQLite store prices its requests like the live one."""
    with open_store() as store:
        sid = store.import_file(ROOT / "sample_sessions" / "bugfix.jsonl").session_id
        info, _ = replay_and_save(store, sid)
        session = store.session(sid)
        stored = stored_replay_cost(session, open_saved(store, info.id))
    expected = replay_cost(session, replay_session(session)[0])  # request bodies kept
    assert stored.price_known and stored.requests_usd == expected.requests_usd
    assert stored.recorded_usd == expected.recorded_usd


def test_real_claude_session_cost_and_savings(real_sessions):
    path = real_sessions / "claude_code" / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl.gz"
    session = load_session(path).session
    result = replay(session)
    cost = replay_cost(session, result)
    assert cost.steps_priced == len(result.preparations) and not cost.unpriced_models
    billed, recorded, requests, summaries = all_present(
        (cost.recorded_billed_usd, cost.recorded_usd, cost.requests_usd, cost.summaries_usd))
    assert cost.uncached is not None
    assert billed < all_present([cost.uncached.recorded_usd])[0]  # cache reads were cheaper
    assert cost.saved_usd == pytest.approx(recorded - requests - summaries, abs=1e-5)
    json.dumps(cost.model_dump())  # JSON-ready for --summary-json


def test_usage_page_shows_the_cost_of_the_selected_replay(workbench_home, long_store):
    """The Usage page names what the replay costs and saves (the long sample is Claude Sonnet)."""
    from store_helpers import copy_store
    from streamlit.testing.v1 import AppTest

    from workbench.services.costs import saved_cost_lines

    copy_store(long_store, workbench_home)
    at = AppTest.from_file(str(ROOT / "workbench" / "ui" / "app.py"), default_timeout=120).run()
    at.switch_page("../pages/usage.py").run()
    assert not at.exception, at.exception
    captions = [c.value.replace("\\", "") for c in at.caption]  # markdown escapes dropped
    assert any(c.startswith("Replay as billed: requests $") for c in captions)
    assert any("Prices: genai-prices" in c for c in captions)
    with open_store() as store:
        (row,) = [r for r in store.replays.list() if r.name == "default"]
        lines = saved_cost_lines(store, row.session_id, row.id)
    assert all(line in captions for line in lines)
    assert any(line.startswith("Saved $") for line in lines)
