"""The token-count cache is bounded by the characters it holds, least recently used out first."""

from __future__ import annotations

import threading

from iris.tokens import DEFAULT_CACHE_CHARS, TokenEstimator, default_estimator


def test_r_tok_1_cache_holds_at_most_its_character_bound_and_drops_the_oldest():
    est = TokenEstimator(max_cached_chars=100)
    texts = [f"text number {i:02d} " * 2 for i in range(20)]  # 32 characters each
    counts = [est.count(t) for t in texts]
    assert est.cached_chars <= 100 and est.cache_size == 3
    calls = est.encode_calls
    assert est.count(texts[-1]) == counts[-1] and est.encode_calls == calls  # still cached
    assert est.count(texts[0]) == counts[0] and est.encode_calls == calls + 1  # dropped: encoded again


def test_r_tok_1_a_hit_keeps_a_text_from_being_dropped():
    est = TokenEstimator(max_cached_chars=100)
    a, b, c, d = ("a " * 16, "b " * 16, "c " * 16, "d " * 16)
    for t in (a, b, c):
        est.count(t)
    est.count(a)  # a is now the most recently used; b is the oldest
    est.count(d)
    calls = est.encode_calls
    est.count(a)
    assert est.encode_calls == calls
    est.count(b)
    assert est.encode_calls == calls + 1


def test_r_tok_1_batch_counts_equal_single_counts_under_a_small_bound():
    est, ref = TokenEstimator(max_cached_chars=50), TokenEstimator()
    texts = [f"line {i} of some tool output\n" * (i % 5 + 1) for i in range(40)] + ["", "line 1"]
    assert est.count_many(texts) == [ref.count(t) for t in texts]
    assert est.cached_chars <= 50 + max(map(len, texts))


def test_a_single_text_larger_than_the_bound_is_counted_and_not_kept_with_others():
    est = TokenEstimator(max_cached_chars=10)
    assert est.count("x" * 1000) == TokenEstimator().count("x" * 1000)
    est.count("hello")
    assert est.cache_size == 1 and est.cached_chars == 5


def test_concurrent_counts_stay_consistent_under_eviction():
    est, ref = TokenEstimator(max_cached_chars=200), TokenEstimator()
    texts = [f"word{i} " * (i % 7 + 1) for i in range(200)]
    expected = [ref.count(t) for t in texts]
    errors: list[str] = []

    def work() -> None:
        for _ in range(3):
            if [est.count(t) for t in texts] != expected:
                errors.append("mismatch")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and est.cached_chars <= 200 + max(map(len, texts))


def test_the_process_wide_estimator_is_bounded_by_default():
    assert default_estimator().max_cached_chars == DEFAULT_CACHE_CHARS
    est = TokenEstimator()
    est.count("hello world")
    est.clear()
    assert est.cache_size == 0 and est.cached_chars == 0
