"""Seed 000 records and knobs: RunUsage.compaction, final_request_ref, old_result_preview_chars and
strict context_policy fields (R-TOK-6, R-PREP-1, R-POL-1/2).

Seed 000 "压缩预算": 压缩 token 记入 RunUsage.compaction，主模型计数另存. "观察真实准备过程":
final_request_ref 尚未建立外部证据引用时为 None.
"""

from __future__ import annotations

from pathlib import Path

from iris.compaction.remote import SummaryCallFailed
from iris.compaction.summarisers import SummaryResult
from iris.config import parse_config
from iris.replay import ReplayObservers, replay
from iris.session import Usage

from workbench.importers.native import load_native

ROOT = Path(__file__).resolve().parents[2]
LONG = ROOT / "sample_sessions" / "long_session.jsonl"
BUDGET = {"compaction": {"input_budget_tokens": 96000}}


class ShortAnswer:
    """A summariser whose answer is billed but too short to be a checkpoint (rejected)."""

    kind = "remote"

    def summarise(self, request, *, timeout_seconds):
        return SummaryResult(text="done.", usage=Usage(input_tokens=1000, output_tokens=7),
                             kind="remote", model="m")


class FailsAfterBilling:
    """A summariser whose call failed after attempts that reported usage."""

    kind = "remote"

    def summarise(self, request, *, timeout_seconds):
        raise SummaryCallFailed("junk answer", usage=Usage(input_tokens=400, output_tokens=3),
                                attempts=2)


def _rejected(result):
    return [d for p in result.preparations for s in p.stages if s.name == "compaction"
            and s.status == "rejected" for d in s.decisions if d.kind == "compaction-rejected"]


def test_r_tok_6_rejected_summary_usage_is_counted_in_run_usage_compaction():
    """R-TOK-6 (seed 000 压缩预算): every summary call that reported usage counts in
    RunUsage.compaction, applied or not; the rejected record says what was billed."""
    session = load_native(LONG)
    for summariser, per_call in ((ShortAnswer(), (1000, 7)), (FailsAfterBilling(), (400, 3))):
        result = replay(session, parse_config(BUDGET), summariser=summariser)
        rejected = _rejected(result)
        assert rejected, type(summariser).__name__
        assert all(d.summary_usage is not None and
                   (d.summary_usage.input_tokens, d.summary_usage.output_tokens) == per_call
                   for d in rejected)
        totals = result.run_usage.compaction
        assert totals.calls == len(rejected)
        assert (totals.input_tokens, totals.output_tokens) == (per_call[0] * len(rejected),
                                                               per_call[1] * len(rejected))
        assert result.run_usage.main.calls > 0  # the main model is counted apart


def test_r_prep_1_final_request_ref_is_none_until_an_evidence_reference_exists(tmp_path):
    """R-PREP-1 (seed 000 观察真实准备过程): final_request_ref is None while no external evidence
    reference exists (no sink); a sink's reference, or the workbench store filing the request,
    sets it, and the preparation id does not depend on it."""
    from iris.preparation.publisher import ListSink

    from workbench.services.replay import replay_and_save
    from workbench.storage.store import Store

    session = load_native(LONG)
    bare = replay(session)
    assert all(p.final_request_ref is None for p in bare.preparations)
    assert all(bare.request(p) is not None for p in bare.preparations if p.phase == "ready")

    sink = ListSink()
    sunk = replay(session, observers=ReplayObservers(sink=sink))
    assert [p.final_request_ref for p in sunk.preparations] == [
        p.preparation_id for p in bare.preparations]  # ListSink's reference; ids unchanged
    assert all(saved.final_request_ref is None for saved, _ in sink.saved)

    with Store(tmp_path / "wb.db") as store:
        session_id = store.import_file(LONG).session_id
        info, _ = replay_and_save(store, session_id, name="r")
        saved = store.replays.open(info.id)
        last = saved.preparation(len(saved) - 1)
        final = bare.request(bare.preparations[-1])
        assert final is not None and last.final_request_ref == final.ref
        assert saved.request(last.final_request_ref) == final


# ------------------------------------------------------- old_result_preview_chars (R-POL-1/2)

def _kinds_conversation():
    from reduction_builders import Conv

    c = Conv()
    numbered = "\n".join(f"{i:6}\tdef function_{i}(value):  # body line" for i in range(1, 80))
    hits = "\n".join(f"src/m{i}.py:{i}:    result = needle(compute(value_{i}))" for i in range(60))
    doc = "{" + ", ".join(f'"key_{i}": "value number {i} of the document"' for i in range(60)) + "}"
    diff = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,40 +1,40 @@\n" + "\n".join(
        f"-old line {i}\n+new line {i}" for i in range(40))
    tests = "\n".join(f"tests/test_{i}.py::test_case PASSED [{i}%]" for i in range(70)) + \
        "\n===== 70 passed in 3.2s ====="
    skill = ("<name>deploy</name>\n<path>/skills/deploy/SKILL.md</path>\n<root>/skills/deploy</root>\n"
             + "\n".join(f"## Step {i}\nDo the thing number {i} carefully." for i in range(40)))
    ids = {
        "read": c.call("Read", {"file_path": "/w/a.py"}, numbered),
        "search": c.call("Grep", {"pattern": "needle"}, hits),
        "json": c.call("Bash", {"command": "curl -s localhost/api"}, doc),
        "diff": c.call("Bash", {"command": "git diff"}, diff),
        "shell": c.call("Bash", {"command": "pytest -q"}, tests),
        "skill": c.call("Skill", {"skill": "deploy"}, skill),
    }
    for i in range(3):
        c.call("Task", {"prompt": f"{i}"}, "short")
    return c, ids


def _body(text: str) -> str:
    """The trimmed body: without the read-back hint and the context-policy note."""
    text = text.split("\n[Read back with context_read")[0]
    at = text.rfind("output trimmed by the context policy")
    return text[:text.rfind("[Older", 0, at)].rstrip("\n") if at >= 0 else text


def test_r_pol_2_preview_chars_bound_the_trimmed_body_of_every_kind():
    """R-POL-1/2 (seed 000 上下文回读与选材): old_result_preview_chars bounds the trimmed body of
    every result kind, summaries included; 0 keeps only the note and the reference."""
    from iris.context.policy import ContextPolicy
    from iris.reduction import ReductionConfig
    from reduction_builders import decision, sent_text

    c, ids = _kinds_conversation()
    for n in (0, 100, 512):
        res = c.reduce(config=ReductionConfig(enabled=False),
                       policy=ContextPolicy(old_result_preview_chars=n))
        for kind, cid in ids.items():
            d = decision(res, cid)
            assert d.action == "trimmed", (n, kind, d.rule)
            text = sent_text(res, cid)
            assert len(_body(text)) <= n, (n, kind, _body(text))
            assert f'context_read(ref="{d.ref}")' in text
            if n == 0:
                assert text.startswith("[Older ") and "trimmed by the context policy" in text


def test_r_pol_1_policy_fields_are_strict():
    """R-POL-1: context_policy booleans and integers are strict (no "yes", "off", "2", True-as-1),
    and the error names the field."""
    import pytest
    from iris.config import parse_config
    from iris.errors import ConfigError

    bad = [("enabled", "yes"), ("enabled", "off"), ("enabled", 1), ("deferred_tools", "no"),
           ("preserve_recent_tool_groups", "2"), ("preserve_recent_tool_groups", True),
           ("old_result_preview_chars", True), ("old_result_preview_chars", 12.5),
           ("old_result_preview_chars", -1)]
    for field, value in bad:
        with pytest.raises(ConfigError) as err:
            parse_config({"context_policy": {field: value}})
        assert f"context_policy.{field}" in str(err.value), (field, value)
    ok = parse_config({"context_policy": {"enabled": False, "preserve_recent_tool_groups": 0,
                                          "old_result_preview_chars": 0}}).context_policy
    assert (ok.enabled, ok.preserve_recent_tool_groups, ok.old_result_preview_chars) == (False, 0, 0)
