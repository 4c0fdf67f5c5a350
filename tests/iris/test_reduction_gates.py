"""A kept result is decided again only at the age gates where the rules could decide it otherwise.

The rules compare a result's age only with the configured gates; between two of them the verdict
cannot change. A result the rules keep whatever its age (a read that is still the current view of
its file) is therefore not decided again as it ages, while one whose category gate lies ahead (a
shell output) is decided again exactly when its age reaches that gate. Its decision still carries
the new age at every request.
"""

from __future__ import annotations

from iris.context.policy import ContextPolicy
from iris.reduction import ReductionConfig, ReductionMemory, ReductionState, reduce_request
from iris.reduction.engine import classified_count
from reduction_builders import decision, lines, padding

POLICY = ContextPolicy(enabled=False)


def _ages(config: ReductionConfig, turns: int, call: tuple[str, dict[str, str], str]
          ) -> tuple[list[int], list[tuple[str, str, int]]]:
    """Per request after the call: results classified, and the call's (action, rule, age)."""
    c = padding(8)  # above min_tool_results_prune: the generic rule's activation is settled
    cid = c.call(*call)
    memory, state = ReductionMemory(), ReductionState()
    classified: list[int] = []
    seen: list[tuple[str, str, int]] = []
    for _ in range(turns):
        before = classified_count(memory)
        result = reduce_request(c.messages, config=config, policy=POLICY, state=state, memory=memory)
        classified.append(classified_count(memory) - before)
        d = decision(result, cid)
        seen.append((d.action, d.rule, d.age))
        # from scratch, the same request decides the same
        scratch = decision(reduce_request(c.messages, config=config, policy=POLICY, state=state), cid)
        assert scratch == d
        state = result.state
        c.turns(1)
    return classified, seen


def test_r_red_6_a_current_read_is_not_decided_again_as_it_ages():
    """R-RED-6: a read that is still the current view of its file is never reduced, at any age,
    so crossing the age gates decides nothing again; its decision's age still moves."""
    config = ReductionConfig()
    classified, seen = _ages(config, 25, ("Read", {"file_path": "/repo/src/app.py"},
                                          lines(200, "{i:>6}\tprint('line {i}')")))
    assert {rule for _, rule, _ in seen} == {"current_read"}
    assert [age for _, _, age in seen] == list(range(1, 26))
    # from the third request on nothing is classified (before: 1–3 per request up to age 12, at
    # every gate the read crossed); the second one still settles the padding's confirmations
    assert sum(classified[2:]) == 0


def test_r_red_3_a_shell_output_is_decided_again_at_its_category_gate():
    """R-RED-3: a long shell output is kept below shell_success_age_turns and summarised from that
    age on; it is decided again at that gate (not at the others before it)."""
    config = ReductionConfig(shell_success_age_turns=6)
    classified, seen = _ages(config, 8, ("Bash", {"command": "make"}, lines(300)))
    assert [action for action, _, _ in seen] == ["kept"] * 5 + ["reduced"] * 3
    assert seen[5][1:] == ("shell_success_age_turns", 6)
    assert classified[5] >= 1  # decided again when its age reached the gate
    assert classified[2:5] == [0, 0, 0]  # and not at the gates crossed before it


def test_r_red_2_every_age_field_is_a_gate_and_defaults_are_the_fields():
    """R-RED-2: a kept verdict is looked at again when a result crosses any age rule: with every
    ``*_age_turns`` field at its own value, each value is a gate and the cap is the largest; the
    defaults table is the fields' own defaults (one place to write a new rule)."""
    from iris.reduction.config import AGE_FIELDS, REDUCTION_DEFAULTS, ReductionConfig
    from iris.reduction.engine import _age_cap, _gates

    assert set(AGE_FIELDS) == {n for n in ReductionConfig.model_fields if n.endswith("_age_turns")}
    values = {name: 20 + i for i, name in enumerate(AGE_FIELDS)}
    cfg = ReductionConfig.model_validate(values)
    assert set(values.values()) | {1} == set(_gates(cfg))
    assert _age_cap(cfg) == max(values.values())
    assert REDUCTION_DEFAULTS == ReductionConfig().model_dump(exclude={"enabled"})
