"""R-TRUTH-1 / R-TWIN-6: one saved replay has one cost. The command that saved it
(``--summary-json``) and the Usage page (``services.costs``, what the page calls) state the same
record, and the page's sentences say each figure with its sign in words."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from iris.session import Usage

from workbench.cli import main
from workbench.pricing import CostStep, ReplayCost, cost_lines, tally
from workbench.services.costs import saved_cost, saved_cost_lines
from workbench.storage.store import open_store

pytestmark = pytest.mark.slow  # replays a real session per summariser

SESSION = "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl.gz"


@pytest.mark.parametrize("summariser", ["recorded", "offline"])
def test_r_truth_1_the_cli_and_the_usage_page_state_one_cost(real_sessions, tmp_path, summariser):
    """R-TRUTH-1: the cost ``workbench replay … --name N --summary-json OUT`` writes is the cost the
    Usage page computes for the saved replay N, field by field, and the page's lines are those
    of that record."""
    out = tmp_path / "summary.json"
    path = real_sessions / "claude_code" / SESSION
    assert main(["replay", str(path), "--config", "claude-code", "--summariser", summariser,
                 "--name", f"one-{summariser}", "--summary-json", str(out), "--allow-failed"]) == 0
    cli = json.loads(out.read_text(encoding="utf-8"))["cost"]
    with open_store() as store:
        info = next(r for r in store.replays.list() if r.name == f"one-{summariser}")
        page = saved_cost(store, info.session_id, info.id)
        lines = saved_cost_lines(store, info.session_id, info.id)
    assert page.model_dump(mode="json") == cli
    unsaved = tmp_path / "unsaved.json"  # the same replay, not saved: priced alike
    assert main(["replay", str(path), "--config", "claude-code", "--summariser", summariser,
                 "--summary-json", str(unsaved), "--allow-failed"]) == 0
    assert json.loads(unsaved.read_text(encoding="utf-8"))["cost"] == cli
    assert lines == cost_lines(ReplayCost.model_validate(cli))
    if summariser == "offline":  # an estimated summary call is priced the same on both
        assert cli["summaries_usd"] and cli["summaries_estimated"]
    assert not any("no price known" in line for line in lines)


def _step(k: int, whole: int | None, *, output: int = 100) -> CostStep:
    usage = Usage(input_tokens=2, cache_read_tokens=50_000, cache_write_tokens=1_000,
                  output_tokens=output, model="claude-opus-4-6")
    return CostStep(k, "claude-opus-4-6", whole, usage, datetime(2026, 1, 1, tzinfo=UTC))


def test_r_truth_1_a_failed_step_is_not_a_model_without_a_price():
    """R-TRUTH-1: a step that sent no request (failed) is counted, and the note says so; "no price
    known" names only a model without a price."""
    cost = tally([_step(0, 51_002), _step(1, None)])
    assert cost.price_known and cost.unpriced_models == () and cost.steps_unpriced == 1
    assert "no price known" not in cost.note and "1 step sent no request" in cost.note
    unknown = tally([CostStep(0, "my-local-model", 1_000, None)])
    assert unknown.note == "no price known for 'my-local-model'"


def test_r_truth_1_the_cost_lines_say_signs_in_words():
    """R-TRUTH-1: a part of the saving that costs more is said so ("cost $x more", never
    "save −$x"); every amount from $1 on has cents, below four decimals."""
    cost = tally([_step(0, 80_000, output=10)])  # larger than the recorded request
    assert cost.savings is not None and (cost.savings.smaller_requests_usd or 0) < 0
    words = " ".join(cost_lines(cost))
    assert "the smaller requests cost $" in words and " more" in words
    assert "save −" not in words and "cost −" not in words
    assert "Costs $" in words
    big = cost.model_copy(update={"recorded_billed_usd": 11.2444, "replay_usd": 7.77531})
    text = " ".join(cost_lines(big))
    assert "$11.24" in text and "$7.78" in text and "$7.7753" not in text


def test_r_truth_1_the_agents_own_summary_is_named_beside_the_compared_ones():
    """R-TRUTH-1: when the agent's own summary is left out of the saving, the line says what it
    cost instead of stating "its summaries $0" under "summaries $0.1084"."""
    cost = tally([_step(0, 51_002)])
    assert cost.savings is not None
    shown = cost.model_copy(update={"summaries_usd": 0.1084, "savings": cost.savings.model_copy(
        update={"summaries_usd": 0.0})})
    text = " ".join(cost_lines(shown))
    assert "summaries $0.1084" in text
    assert "the agent's own summary, $0.1084, is left out on both sides" in text
