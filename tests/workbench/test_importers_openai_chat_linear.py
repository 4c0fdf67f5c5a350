"""The OpenAI chat importer reads a trajectory in time proportional to its size (R-SES-4)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from workbench.importers import load_session

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays


def _trajectory(path: Path, steps: int) -> Path:
    """A mini-swe-agent shaped trajectory, pretty-printed (one message spans many lines)."""
    messages: list[dict] = [{"role": "system", "content": "You are a helpful assistant."},
                            {"role": "user", "content": "Fix the failing test."}]
    for i in range(steps):
        messages.append({"role": "assistant", "content": f"THOUGHT: step {i}\n```bash\nls -la\n```",
                         "extra": {"response": {"id": f"r{i}", "model": "m",
                                                "usage": {"prompt_tokens": 100 + i,
                                                          "completion_tokens": 7}}}})
        messages.append({"role": "user", "content": "output line\n" * 40})
    path.write_text(json.dumps({"instance_id": "demo", "messages": messages}, indent=2))
    return path


def _best_times(*paths: Path, rounds: int = 5) -> list[float]:
    """The least CPU time of ``rounds`` imports of each file, interleaved (other processes on a
    busy machine then slow every file alike)."""
    best = [float("inf")] * len(paths)
    for _ in range(rounds):
        for i, path in enumerate(paths):
            start = time.process_time()
            load_session(path)
            best[i] = min(best[i], time.process_time() - start)
    return best


def test_r_ses_4_openai_chat_import_time_is_linear(tmp_path):
    """R-SES-4: 4× the size takes well under 6× the time (it took ~16× when every message's
    line number was counted from the start of the file)."""
    small = _trajectory(tmp_path / "small.traj.json", 1500)
    large = _trajectory(tmp_path / "large.traj.json", 6000)
    size_ratio = large.stat().st_size / small.stat().st_size
    assert 3.9 < size_ratio < 4.1
    small_time, large_time = _best_times(small, large)
    ratio = large_time / small_time
    assert ratio < 6, f"4x the size took {ratio:.1f}x the time"
    result = load_session(large)
    assert len(result.session.messages) == 2 + 2 * 6000
    assert result.session.messages[-1].role == "user"
