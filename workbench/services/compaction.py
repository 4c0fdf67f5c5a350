"""What the Compaction page reads from the store (R-UI-3): the saved replay's compaction decisions,
archives and checkpoints, the session's recorded messages and each step's final request, next to
the truth rows and recorded compactions of :func:`workbench.services.truth.replay_truth`."""

from __future__ import annotations

from collections.abc import Sequence

from iris.preparation.records import Decision, PreparedRequest
from iris.session import Message

from ..analysis.fidelity import ReplayLosses
from ..records import ArchiveRecord
from ..storage.store import Store
from .fidelity import saved_losses
from .replay import session_messages
from .truth import ReplayTruth, replay_truth

__all__ = ["OpenedCompaction", "open_compaction"]


class OpenedCompaction(ReplayTruth):
    """A saved replay as the Compaction page shows it."""

    decisions: tuple[tuple[int, str, Decision], ...]
    """``(step, stage, decision)`` of every compaction decision, in step order."""
    archives: tuple[ArchiveRecord, ...]
    originals: tuple[Message, ...]
    """The session's recorded messages."""
    losses: ReplayLosses
    """What each compaction lost: the agent's recorded ones and the replay's (docs/fidelity.md)."""

    def request_at(self, step: int) -> PreparedRequest | None:
        """Step ``step``'s final request (None: the step did not become ready)."""
        prep = self.replay.preparation(step)
        return self.replay.request(prep.final_request_ref) if prep.final_request_ref else None

    def checkpoint_texts(self) -> dict[int, str]:
        """Each archived compaction's checkpoint text by its number ``n``."""
        return {a.n: a.checkpoint_text for a in self.archives}


def open_compaction(store: Store, session_id: str, replay_id: str,
                    kinds: Sequence[str]) -> OpenedCompaction:
    """The saved replay ``replay_id`` of ``session_id`` with its decisions of ``kinds`` (the
    compaction decision kinds) and what else the Compaction page needs."""
    truth = replay_truth(store, session_id, replay_id)
    return OpenedCompaction(**dict(truth), decisions=truth.replay.decisions_of_kind(*kinds),
                            archives=truth.replay.archives(),
                            originals=session_messages(store, session_id),
                            losses=saved_losses(store, session_id, truth.replay))
