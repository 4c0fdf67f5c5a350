"""The agent profiles' version rules on the development corpus (R-TWIN-3, R-TWIN-7): every
Claude Code session picks the row of its recorded version, no profile replay has a failed step,
the orphaned call at a 2.1.37+ boundary no longer pins a raw tail, and the profiles compact at
the agent's step on the files docs/profiles.md lists as matching. Skipped when ../shared/corpus
is absent."""

from __future__ import annotations

from pathlib import Path

import pytest
from iris.compaction.agent_rules import parse_version
from iris.replay import replay

from workbench.analysis.replay_report import replay_report
from workbench.importers import load_session
from workbench.services.presets import load_preset
from workbench.services.summarisers import make_summariser

pytestmark = pytest.mark.slow

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"

# session id prefix → (recorded steps of the agent's compactions the profile meets within ±1)
CLAUDE_MATCHING = {
    "0442a060": (124,), "0cf3db51": (26, 109), "1284c080": (160,), "1e0816ef": (53, 178),
    "266b3f40": (131,), "44df7d08": (115,), "70d782f7": (67, 123), "8209f1c2": (83,),
    "8ecab05f": (101,), "9d7a9d52": (69,), "af74d9e0": (109,),
}


def _corpus(kind: str) -> list[Path]:
    folder = CORPUS / kind
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    return sorted(folder.glob("*.jsonl.gz"))


@pytest.mark.parametrize("prefix", sorted(CLAUDE_MATCHING))
def test_r_twin_7_claude_code_corpus_session_uses_its_versions_rule(prefix):
    """R-TWIN-7: the row named in the budget's detail is the session's version's (2.1.1–2.1.20:
    155,000; later: 167,000), every step is prepared, and the profile compacts within ±1 step of
    the agent's compactions listed for this file (R-TWIN-3)."""
    (path,) = [p for p in _corpus("claude_code") if p.name.startswith(prefix)]
    session = load_session(path).session
    version = parse_version(session.header.agent_version)
    assert version is not None
    result = replay(session, load_preset("claude-code"),
                    summariser=make_summariser("recorded", session))
    older = version <= (2, 1, 20)
    assert result.thresholds.threshold_line == (155000 if older else 167000)
    row = "Claude Code 1.0–2.1.20" if older else "Claude Code 2.1.21 and later"
    assert f"agent rule {row} (version {session.header.agent_version} recorded)" \
        in result.thresholds.budget_detail
    assert all(p.phase == "ready" for p in result.preparations)
    summary = replay_report(session, result)
    agent = {c.step for c in summary.recorded_compactions}
    own = [c.step for c in summary.compactions]
    for step in CLAUDE_MATCHING[prefix]:
        assert step in agent
        assert any(abs(s - step) <= 1 for s in own), (step, own)


def test_r_twin_3_codex_corpus_rollouts_resend_their_initial_context():
    """R-TWIN-3: on the three Codex 0.141–0.142 rollouts the profile compacts within ±3 calls of
    each compaction, every step is prepared, and the first request after is within 15 % of the
    agent's for at least 4 of the 5 (docs/profiles.md gives each figure)."""
    within = total = 0
    for path in _corpus("codex_rollout"):
        session = load_session(path).session
        result = replay(session, load_preset("codex"),
                        summariser=make_summariser("offline", session))
        assert all(p.phase == "ready" for p in result.preparations), path.name
        summary = replay_report(session, result)
        for agent in summary.recorded_compactions:
            own = min(summary.compactions, key=lambda c: abs(c.step - agent.step))
            total += 1
            if abs(own.step - agent.step) <= 3 and agent.tokens_after and own.tokens_after \
                    and abs(own.tokens_after - agent.tokens_after) <= 0.15 * agent.tokens_after:
                within += 1
    assert total == 5 and within >= 4
