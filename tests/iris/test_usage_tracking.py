"""Usage tracking and the trigger decision (R-TOK-3…6, R-CMP-10/11, grace of R-CMP-12)."""

from __future__ import annotations

from iris.compaction import (
    PressureWindow,
    UsageTracker,
    context_bytes,
    decide_trigger,
    should_trigger,
    thresholds,
)
from iris.config import parse_config
from iris.session import Message, TextBlock, ThinkingBlock, ToolCallBlock, Usage

T = thresholds(parse_config({"compaction": {"input_budget_tokens": 100000}}))  # line 80000


def _usage(n, out=0):
    return Usage(input_tokens=n, output_tokens=out)


def test_r_tok_3_prompt_size_includes_cache_writes_and_reads():
    """R-TOK-3: prompt-side usage is input + cache writes (+ reads outside input)."""
    tr = UsageTracker().observe_response(Usage(input_tokens=100, cache_write_tokens=50,
                                               cache_read_tokens=20), context_bytes=1000)
    assert tr.reading.tokens == 170 and tr.reading.kind == "observed"
    openai = Usage(input_tokens=100, cache_read_tokens=20, cache_read_in_input=True)
    assert UsageTracker().observe_response(openai, context_bytes=1).reading.tokens == 100


def test_r_tok_4_context_bytes_counts_text_args_and_thinking():
    """R-TOK-4: bytes of text, replayed tool-call arguments and thinking."""
    m = Message(role="assistant", content=(TextBlock(text="héllo"), ThinkingBlock(text="abc"),
                                           ToolCallBlock(id="c", name="rd", arguments={"a": 1})))
    assert context_bytes([m]) == 6 + 3 + len('{"a": 1}') + 2


def test_r_tok_4_byte_calibrated_estimate_is_frozen():
    """R-TOK-4: a response without usage scales the last trusted sample by bytes, marked ≈, and the
    estimate stays frozen until the next response replaces it."""
    tr = UsageTracker().observe_response(_usage(10000), context_bytes=40000)
    tr = tr.observe_response(None, context_bytes=60000)
    assert (tr.reading.tokens, tr.reading.kind, tr.reading.approximate) == (15000, "estimated", True)
    assert tr.reading.label == "≈15,000"
    frozen = tr.reading
    assert tr.reading == frozen  # nothing but an observation changes it
    tr = tr.observe_response(_usage(0), context_bytes=80000)  # 0 counts as missing
    assert tr.reading.tokens == 20000 and tr.sample is not None and tr.sample.prompt_tokens == 10000
    tr = tr.observe_response(_usage(30000), context_bytes=90000)
    assert (tr.reading.tokens, tr.reading.approximate) == (30000, False)


def test_r_tok_4_no_sample_shows_zero_and_never_triggers():
    """R-TOK-4: with no trusted sample the reading is 0 and never triggers."""
    tr = UsageTracker().observe_response(None, context_bytes=10**9)
    assert tr.reading.tokens == 0 and tr.reading.kind == "none"
    d = should_trigger(tr.reading, T, local_estimate=10**6)
    assert not d.trigger and d.basis == "no_sample"


def test_r_tok_4_estimate_triggers_early_compaction():
    """R-TOK-4: a ≈ estimate at the line triggers (early compaction)."""
    tr = UsageTracker().observe_response(_usage(40000), context_bytes=40000)
    tr = tr.observe_response(None, context_bytes=80000)
    d = should_trigger(tr.reading, T)
    assert d.trigger and d.basis == "estimate" and d.tokens == 80000


def test_r_cmp_10_trigger_boundary_one_below_and_at_line():
    """R-CMP-10: one token below the line does not trigger; at the line it does."""
    below = UsageTracker().observe_response(_usage(79999), context_bytes=1).reading
    at = UsageTracker().observe_response(_usage(79990, out=10), context_bytes=1).reading
    assert not should_trigger(below, T).trigger
    assert should_trigger(at, T).trigger and should_trigger(at, T).basis == "provider"


def test_r_tok_3_lower_local_estimate_never_cancels_provider_trigger():
    """R-TOK-3: provider usage is authoritative; a lower local estimate never cancels it."""
    reading = UsageTracker().observe_response(_usage(85000), context_bytes=1).reading
    d = should_trigger(reading, T, local_estimate=20000)
    assert d.trigger and d.local_estimate == 20000


def test_r_tok_5_model_switch_reading_display_only_until_response():
    """R-TOK-5: after a switch the old reading stays (≈) and triggers nothing; a new response or
    a new byte estimate replaces it; the switch never resets the gauge to 0."""
    tr = UsageTracker(model="a").observe_response(_usage(90000), context_bytes=90000)
    tr = tr.observe_switch("b")
    assert (tr.reading.tokens, tr.reading.approximate, tr.model) == (90000, True, "b")
    assert not should_trigger(tr.reading, T).trigger
    tr2 = tr.observe_response(None, context_bytes=95000)
    assert tr2.reading.tokens == 95000 and should_trigger(tr2.reading, T).trigger
    tr3 = tr.observe_response(_usage(81000), context_bytes=1, model="b")
    assert should_trigger(tr3.reading, T).trigger and not tr3.reading.approximate


def test_r_tok_5_restored_reading_triggers_nothing():
    """R-TOK-5: a restored snapshot reading is shown with ≈ and triggers nothing."""
    tr = UsageTracker.restored(99000, model="m")
    assert tr.reading.label == "≈99,000"
    step = decide_trigger(tr.reading, T)
    assert not step.compact and step.notice is None


def test_r_tok_6_compaction_usage_counted_apart():
    """R-TOK-6: summary usage goes to RunUsage.compaction, main usage apart."""
    tr = UsageTracker().observe_response(_usage(1000, 10), context_bytes=1)
    tr = tr.observe_compaction(400, Usage(input_tokens=5000, output_tokens=300))
    assert (tr.totals.main.prompt_tokens, tr.totals.main.calls) == (1000, 1)
    assert (tr.totals.compaction.prompt_tokens, tr.totals.compaction.output_tokens) == (5000, 300)
    assert tr.reading.tokens == 400 and tr.reading.approximate and not tr.reading.can_trigger


def _reading(n):
    return UsageTracker().observe_response(_usage(n), context_bytes=1).reading


def test_r_cmp_11_notices_once_each_and_highest_only():
    """R-CMP-11: one durable notice per line, never duplicated; the highest applicable only."""
    w = PressureWindow()
    s1 = decide_trigger(_reading(50000), T, window=w)
    assert s1.notice is None
    s2 = decide_trigger(_reading(60000), T, window=s1.window)
    assert s2.notice is not None
    assert s2.notice.kind == "reminder" and "<system-reminder>" in s2.notice.text
    s3 = decide_trigger(_reading(65000), T, window=s2.window)
    assert s3.notice is None  # no duplicate reminder
    s4 = decide_trigger(_reading(85000), T, window=s3.window)
    assert s4.compact and s4.notice is not None and s4.notice.kind == "threshold"
    s5 = decide_trigger(_reading(86000), T, window=s4.window)
    assert s5.notice is None and s5.compact
    manual = decide_trigger(_reading(86000), T, window=s4.window, manual=True)
    assert manual.compact and manual.trigger == "manual"
    assert manual.notice is not None and manual.notice.kind == "manual"


def test_r_cmp_11_jump_over_both_lines_gives_only_threshold_warning():
    """R-CMP-11: crossing both lines in one step injects only the threshold warning."""
    s = decide_trigger(_reading(90000), T)
    assert s.compact and s.notice is not None
    assert s.notice.kind == "threshold" and not s.window.reminder_delivered


def test_r_cmp_12_grace_defers_two_requests_only_after_reminder():
    """R-CMP-12: with model_driven, the first crossing defers by two main requests only if the
    reminder was delivered earlier in the window."""
    w = decide_trigger(_reading(61000), T, model_driven=True).window
    assert w.reminder_delivered
    s1 = decide_trigger(_reading(80000), T, window=w, model_driven=True)
    assert not s1.compact and s1.notice is not None and s1.notice.kind == "threshold"
    s2 = decide_trigger(_reading(81000), T, window=s1.window, model_driven=True)
    assert not s2.compact and s2.notice is None
    s3 = decide_trigger(_reading(82000), T, window=s2.window, model_driven=True)
    assert s3.compact
    direct = decide_trigger(_reading(80000), T, model_driven=True)
    assert direct.compact  # no earlier reminder: abrupt jump, compact at once


def test_r_cmp_12_grace_ends_at_95_percent():
    """R-CMP-12: at 95% of the budget the grace ends at once."""
    w = decide_trigger(_reading(61000), T, model_driven=True).window
    s1 = decide_trigger(_reading(80000), T, window=w, model_driven=True)
    assert not s1.compact
    assert not decide_trigger(_reading(94999), T, window=s1.window, model_driven=True).compact
    assert decide_trigger(_reading(95000), T, window=s1.window, model_driven=True).compact


def test_r_cmp_10_oversize_recovery_and_disabled_error():
    """R-CMP-10: oversize forces compaction when automatic compaction is on, else a clear error."""
    assert decide_trigger(_reading(0), T, oversize=True).trigger == "oversize"
    off = thresholds(parse_config({"compaction": {"threshold": 0}}))
    step = decide_trigger(_reading(0), off, oversize=True)
    assert not step.compact and step.error is not None and "disabled" in step.error
    assert decide_trigger(_reading(10**6), off).compact is False
