"""The store's value cache: bounded, least recently used dropped first, and values of one owner
(a replay saved again or deleted) forgotten together."""

from __future__ import annotations

from workbench.storage.cache import StoreCache


def test_least_recently_used_is_dropped_and_a_hit_is_not_made_again():
    cache = StoreCache(maxsize=2)
    made: list[str] = []

    def maker(value: str):
        return lambda: made.append(value) or value

    assert cache.get_or_make(("r1", "a"), maker("A")) == "A"
    assert cache.get_or_make(("r1", "b"), maker("B")) == "B"
    assert cache.get_or_make(("r1", "a"), maker("A again")) == "A"  # a hit: not made again
    cache.get_or_make(("r2", "c"), maker("C"))  # over the size: b, the least recently used, goes
    assert len(cache) == 2
    assert cache.get_or_make(("r1", "b"), maker("B again")) == "B again"
    assert made == ["A", "B", "C", "B again"]


def test_forget_drops_every_value_of_one_owner():
    cache = StoreCache(maxsize=8)
    for key in (("r1", 1), ("r1", 2), ("r2", 1), "plain"):
        cache.get_or_make(key, lambda: object())
    cache.forget("r1")
    assert len(cache) == 2
    fresh = cache.get_or_make(("r1", 1), lambda: "new")
    assert fresh == "new"


def test_an_in_memory_store_leaves_no_lock_file(tmp_path, monkeypatch):
    """``Store(":memory:")`` has no folder and no other opener: opening it writes nothing in the
    current folder (a ``:memory:.lock`` was left in the checkout)."""
    from workbench.storage.store import Store

    monkeypatch.chdir(tmp_path)
    store = Store(":memory:")
    assert store.list_sessions() == []
    store.close()
    assert list(tmp_path.iterdir()) == []
