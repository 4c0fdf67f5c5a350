"""The estimate error leaves out the responses after a drop of the agent's context the transcript
does not record (R-TOK-3, R-TWIN-5): the provider's count fell below 80 % of the previous one while
the as-recorded request did not shrink (Claude Code before 2.1.21 cleared old tool results without
recording it). Those responses measured a request the transcript does not hold; the figure says
how many it left out and from which step, up to the next recorded compaction."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.analysis.figures import error_words, estimate_error, unrecorded_drops


@dataclass
class Step:
    step_index: int
    provider_prompt_tokens: int | None
    recorded_request_whole: int | None
    provider_usage_kind: str = "trusted"
    overhead_measured_at: int | None = None


def _steps(provider: list[int], recorded: list[int]) -> list[Step]:
    return [Step(k, p, r) for k, (p, r) in enumerate(zip(provider, recorded, strict=True))]


def test_r_tok_3_responses_after_an_unrecorded_drop_are_left_out_and_counted():
    provider = [10000, 20000, 30000, 40000, 20000, 21000, 22000, 9000, 10500]
    recorded = [10000, 20100, 30100, 40100, 41000, 42000, 43000, 9100, 10400]
    steps = _steps(provider, recorded)
    assert unrecorded_drops(steps, [7]) == {4: 3}
    error = estimate_error(steps, [7])
    assert (error.unrecorded_drops, error.left_out) == ((4,), 3)
    assert error.responses == 4  # steps 1, 2, 3 and 8: 0 is the first, 7 a recorded compaction
    assert error.p90_abs_pct is not None and error.p90_abs_pct < 2
    assert error_words(error).endswith(
        "; 3 responses left out after the agent's context fell without a record (from step 4)")


def test_r_tok_3_a_drop_with_the_recorded_history_is_no_unrecorded_drop():
    """The as-recorded request shrank too (a recorded clearing the walk applied): scored."""
    steps = _steps([10000, 40000, 20000, 21000], [10000, 40000, 20100, 21100])
    assert unrecorded_drops(steps) == {}
    error = estimate_error(steps)
    assert error.responses == 3 and error.left_out == 0 and error.unrecorded_drops == ()
    assert "left out" not in error_words(error)
