"""The engine's checkpoint at the agent's own compaction point, next to the agent's (R-FID-3).

To compare what two checkpoints forget, both must replace the same span and face the same future.
:func:`engine_at_agent_point` compacts the history the agent had when it compacted (every message
before its recorded compaction) with the engine's compaction and a chosen summariser (the offline
extractive one by default), and scores the result with the same loss record as the agent's own
summary: the facts of the span, kept by the checkpoint or the raw tail the engine retained,
against what the session went on to mention after the agent's summary.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from iris.compaction import (
    CompactionEnvironment,
    CompactionRequest,
    ExtractiveSummariser,
    Summariser,
    compact,
    thresholds,
)
from iris.config import ContextConfig, default_config
from iris.fidelity import LossRecord, loss_record, recorded_loss_records
from iris.frozen import FrozenModel
from iris.prompts import PromptSnapshot, PromptTemplates
from iris.session import Session
from iris.tokens import TokenEstimator, default_estimator

__all__ = ["AgentPointComparison", "compare_at_agent_points", "engine_at_agent_point"]


class AgentPointComparison(FrozenModel):
    """One recorded compaction: the agent's loss record and the engine's at the same point."""

    agent: LossRecord
    engine: LossRecord | None
    """None when the engine did not compact there (the reason is in ``note``)."""
    summary_tokens: int | None = None
    """Tokens of the engine's summary text (within ``summary_max_tokens`` when applied)."""
    summary_max_tokens: int | None = None
    note: str = ""


def engine_at_agent_point(session: Session, agent: LossRecord, at_message: int, *,
                          config: ContextConfig | None = None,
                          summariser: Summariser | None = None,
                          prompts: PromptTemplates | None = None,
                          estimator: TokenEstimator | None = None) -> AgentPointComparison:
    """Compact ``session.messages[start:at_message]`` (``start``: where the agent's span began)
    the way the engine would, and score it against ``agent`` (see the module doc)."""
    estimator = estimator or default_estimator()
    config = config or default_config()
    start = at_message - agent.span_messages
    history = list(session.messages[start:at_message])
    tokens = estimator.request_tokens(history)
    limits = thresholds(config, session.header.limits, session.header.model)
    with tempfile.TemporaryDirectory(prefix="fidelity-") as work:
        out = compact(CompactionRequest(history=history, request_tokens=tokens, trigger="manual"),
                      CompactionEnvironment(config=config, thresholds=limits,
                                            prompts=prompts or PromptSnapshot.defaults(),
                                            summariser=summariser or ExtractiveSummariser(),
                                            session_dir=Path(work), estimator=estimator))
    if out.status != "applied" or out.checkpoint is None or out.cut_index is None:
        reason = next((getattr(d, "reason", "") for d in reversed(out.decisions)), "")
        return AgentPointComparison(agent=agent, engine=None, note=f"{out.status}: {reason}")
    cut = start + out.cut_index
    resume = at_message + 1  # after the agent's summary: the same future as the agent's record
    record = loss_record(session, source="replay", n=agent.n, step=agent.step,
                         span=range(start, cut), checkpoint=out.checkpoint.render(),
                         retained=range(cut, at_message), resume_message=resume)
    candidate = next((d for d in out.decisions if d.kind == "candidate"), None)
    return AgentPointComparison(
        agent=agent, engine=record,
        summary_tokens=getattr(candidate, "summary_tokens", None),
        summary_max_tokens=getattr(candidate, "summary_max_tokens", None))


def compare_at_agent_points(session: Session, *, config: ContextConfig | None = None,
                            summariser: Summariser | None = None
                            ) -> tuple[AgentPointComparison, ...]:
    """:func:`engine_at_agent_point` for every compaction the agent recorded in ``session``."""
    agents = recorded_loss_records(session)
    return tuple(engine_at_agent_point(session, a, c.at_message, config=config,
                                       summariser=summariser)
                 for a, c in zip(agents, session.compactions, strict=True))
