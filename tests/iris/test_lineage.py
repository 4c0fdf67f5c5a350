"""R-BOUND-1: the shared-prefix length a replay step carries forward (``iris.lineage``).

A history that only grew must cost no pass over what it shares with the one before; the answer
must be the full comparison's whatever was noted."""

from __future__ import annotations

import random
from operator import is_

from iris import lineage


def _full(old, new) -> int:
    n = min(len(old), len(new))
    return next((i for i in range(n) if old[i] is not new[i]), n)


class _Counted(tuple):
    """A tuple that counts the slices taken of it (a pass over its items)."""

    slices = 0

    def __getitem__(self, key):  # type: ignore[override]
        if isinstance(key, slice):
            type(self).slices += 1
        return super().__getitem__(key)


def test_r_bound_1_noted_growth_costs_no_pass():
    lineage.forget()
    base = _Counted(object() for _ in range(1000))
    grown = _Counted(base + (object(), object()))
    lineage.note(grown, base, len(base))
    _Counted.slices = 0
    assert lineage.shared_prefix(base, grown) == 1000
    assert _Counted.slices == 0
    # through a chain of notes too: grown → base, then a copy of grown with its last part replaced
    replaced = _Counted(grown[:1001] + (object(),))
    lineage.note(replaced, grown, 1001)
    _Counted.slices = 0
    assert lineage.shared_prefix(base, replaced) == 1000
    assert _Counted.slices == 0


def test_r_bound_1_shared_prefix_equals_the_full_comparison():
    rng = random.Random(3)
    pool = [object() for _ in range(50)]
    for _ in range(300):
        lineage.forget() if rng.random() < 0.2 else None
        old = tuple(rng.choice(pool) for _ in range(rng.randint(0, 40)))
        cut = rng.randint(0, len(old))
        new = old[:cut] + tuple(rng.choice(pool) for _ in range(rng.randint(0, 40)))
        if rng.random() < 0.7:  # what the maker knows (at most what is really shared)
            lineage.note(new, old, rng.randint(0, cut))
        assert lineage.shared_prefix(old, new) == _full(old, new)
        assert lineage.known(old, new) <= _full(old, new)
    lineage.forget()


def test_r_bound_1_notes_are_few_and_checked_by_identity():
    lineage.forget()
    a = tuple(object() for _ in range(10))
    for _ in range(100):  # many notes: only the latest are kept
        lineage.note(a + (object(),), a, 10)
    assert len(lineage._notes) <= lineage._LIMIT  # pyright: ignore[reportPrivateUsage]
    other = tuple(a)  # an equal tuple that was never noted: nothing known
    b = a[:5] + tuple(object() for _ in range(5))
    assert lineage.known(other, b) == 0 or other is a
    assert lineage.shared_prefix(a, b) == 5 == _full(a, b)
    assert all(map(is_, a[:5], b[:5]))
    lineage.forget()


def _session(turns: int):
    from iris.session import Message, Session, SessionHeader, TextBlock, ToolCallBlock, ToolResultBlock, Usage

    msgs = [Message(role="system", content=(TextBlock(text="Be brief."),))]
    for i in range(turns):
        msgs += [Message(role="user", content=(TextBlock(text=f"go {i}"),)),
                 Message(role="assistant", model="tiny-model",
                         usage=Usage(input_tokens=20 + 14 * i, output_tokens=5, model="tiny-model"),
                         content=(TextBlock(text="ok"),
                                  ToolCallBlock(id=f"c{i}", name="Bash", arguments={"command": "ls"}))),
                 Message(role="tool", content=(ToolResultBlock(call_id=f"c{i}", text="done"),))]
    return Session(header=SessionHeader(session_id="lineage", title="t", model="tiny-model"),
                   messages=tuple(msgs))


def test_r_bound_1_a_replay_notes_while_it_runs_and_keeps_nothing_after():
    """The notes hold a replay's latest histories: they are there while it runs (its steps use
    them) and dropped when it ends, so nothing of the session stays alive through them."""
    from iris.replay import ReplayObservers, replay

    lineage.forget()
    during: list[int] = []
    replay(_session(12), observers=ReplayObservers(
        progress=lambda done, total: during.append(len(lineage._notes))))  # pyright: ignore[reportPrivateUsage]
    assert max(during) > 0
    assert not lineage._notes  # pyright: ignore[reportPrivateUsage]
