"""The public surface of `iris.compaction` (STYLE 11): every exported name imports, `__all__` is
sorted, and the pipeline contract's names exist."""

from __future__ import annotations

import dataclasses
import inspect

from iris import compaction


def test_public_surface_imports_and_is_sorted():
    for name in compaction.__all__:
        assert getattr(compaction, name) is not None, name
    assert compaction.__all__ == sorted(compaction.__all__, key=lambda n: (not n.isupper(), n))


def test_pipeline_contract_signature():
    """The preparation pipeline calls compact(request, env) with these option fields."""
    params = inspect.signature(compaction.compact).parameters
    assert list(params) == ["request", "env"]
    request = [f.name for f in dataclasses.fields(compaction.CompactionRequest)]
    assert request == ["history", "current_request", "request_tokens", "trigger", "previous",
                       "step_index"]
    env = [f.name for f in dataclasses.fields(compaction.CompactionEnvironment)]
    assert env == ["config", "thresholds", "prompts", "summariser", "work_dir", "estimator",
                   "tools", "reduction_memory", "tool_kinds", "token_ratio"]
    fields = set(compaction.CompactionOutcome.model_fields)
    assert fields == {"status", "decisions", "history", "checkpoint", "archive_path", "archive_text",
                      "cut_index", "summary_usage", "summary_request_text", "state"}
