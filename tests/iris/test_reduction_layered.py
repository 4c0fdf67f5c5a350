"""The reduction state's frozen renderings grow by a few entries per request without being copied
in full: a :class:`~iris.reduction.layered.LayeredMap` reads like the dict it stands for, and
every earlier version keeps exactly its own entries."""

from __future__ import annotations

import random
from collections.abc import Mapping

from iris.reduction.layered import LayeredMap, with_added


def test_layered_map_reads_like_the_merged_dict_and_keeps_old_versions():
    """R-RED-9: frozen renderings are reused byte for byte from the state of the request that
    made them; a state built later never changes what an earlier state holds."""
    rng = random.Random(3)
    versions: list[tuple[Mapping[str, int], dict[str, int]]] = [({}, {})]
    current: Mapping[str, int] = {}
    expected: dict[str, int] = {}
    for step in range(600):
        added = {f"k{rng.randrange(900)}": step * 10 + j for j in range(rng.randrange(4))}
        current = with_added(current, dict(added))
        expected = {**expected, **added}
        versions.append((current, expected))
    for mapping, want in versions[::37] + versions[-3:]:
        assert dict(mapping) == want
        assert list(mapping) == list(want)  # a replaced key keeps its place, as in a dict
        assert len(mapping) == len(want)
        assert mapping == want
        for key in ("k1", "k450", "nope"):
            assert (key in mapping) == (key in want)
            assert mapping.get(key) == want.get(key)


def test_nothing_added_is_the_same_object_and_additions_fold_into_a_new_base():
    """R-BOUND-1: a request that freezes nothing shares the map as it is, and the additions kept
    apart stay small, so a step's work does not grow with the session."""
    base = {f"k{i}": i for i in range(10_000)}
    assert with_added(base, {}) is base
    current = with_added(base, {"new0": 0})
    assert isinstance(current, LayeredMap)
    tops: list[int] = []
    for i in range(1, 1_000):
        current = with_added(current, {f"new{i}": i})
        assert isinstance(current, LayeredMap)
        tops.append(len(current._top))  # pyright: ignore[reportPrivateUsage, reportUnknownMemberType, reportUnknownArgumentType]
    assert max(tops) <= 105  # about √(its size) additions at most before they fold into the base
    assert min(tops) <= 2  # and they did fold
    assert len(current) == 11_000
    assert base == {f"k{i}": i for i in range(10_000)}  # the first map is untouched
